// The claims of one offered credential configuration as typed inputs built from its `fields`: a text
// box for a string, a date picker for a date (sent as YYYY-MM-DD, as the service checks it), a number
// box for a number, a checkbox for a boolean, a fieldset for an object (following the claim path),
// rows that can be added and removed for an array. The fields are laid out as a tree first, as the
// service derives its schema: a field's path may pass through objects and arrays no field declares.
import type { components } from '../../../clients/typescript/index.js';
import type { Problem } from '../api.js';
import { inputValue } from '../components.js';
import { JsonField } from './body-form.js';
import { errorsAt, FieldNote } from './labelled-field.js';

export type FieldDefinition = components['schemas']['FieldDefinition'];
type Segment = string | number | null;
/** Where a value is in the claims object: object keys and array indexes. */
type Path = (string | number)[];
type Claims = Record<string, unknown>;

/** One place of the claims tree: the field declared there (if one is) and what lies below it. */
export interface ClaimNode {
  field?: FieldDefinition;
  /** The segment that leads here, for a label where no field names it. */
  segment: Segment;
  properties: Map<string, ClaimNode>;
  /** Every element of an array (a path segment null). */
  items?: ClaimNode;
  /** Elements at fixed positions (integer path segments). */
  positions: Map<number, ClaimNode>;
}

const newNode = (segment: Segment): ClaimNode => ({ segment, properties: new Map(), positions: new Map() });

function childOf(node: ClaimNode, segment: Segment): ClaimNode {
  if (segment === null) {
    node.items ??= newNode(null);
    return node.items;
  }
  const children: Map<string | number, ClaimNode> = typeof segment === 'string' ? node.properties : node.positions;
  const child = children.get(segment) ?? newNode(segment);
  children.set(segment, child);
  return child;
}

/**
 * The fields as a tree (a namespaced format's fields below their namespace) and the claims their
 * default values make, which the form starts with.
 */
export function claimTree(fields: FieldDefinition[]): { root: ClaimNode; defaults: Claims } {
  const root = newNode('claims');
  let defaults: Claims = {};
  const visit = (field: FieldDefinition, base: Segment[]) => {
    const path = [...base, ...field.path];
    let node = root;
    for (const segment of path) node = childOf(node, segment);
    node.field = field;
    // The service refuses a default on a path through every element (null), and null means none.
    if (field.defaultValue !== undefined && field.defaultValue !== null && !path.includes(null)) {
      defaults = withValueAt(defaults, path as Path, field.defaultValue) as Claims;
    }
    for (const child of field.children ?? []) visit(child, path);
  };
  for (const field of fields) visit(field, field.namespace ? [field.namespace] : []);
  return { root, defaults };
}

/** What a node holds: its field's type, or what its children make of it. */
const kindOf = (node: ClaimNode) => node.field?.type ?? (node.properties.size > 0 ? 'object' : 'array');

const isObject = (value: unknown): value is Claims => typeof value === 'object' && value !== null && !Array.isArray(value);

function valueAt(value: unknown, key: string | number): unknown {
  if (typeof key === 'number') return Array.isArray(value) ? value[key] : undefined;
  return isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
}

/** `value` with `path` set to `next` (undefined: removed from an object), containers made as needed. */
export function withValueAt(value: unknown, path: Path, next: unknown): unknown {
  const [key, ...rest] = path;
  if (key === undefined) return next;
  const inner = withValueAt(valueAt(value, key), rest, next);
  if (typeof key === 'number') {
    const list = Array.isArray(value) ? [...value] : [];
    list[key] = inner;
    return list;
  }
  const entries = new Map(Object.entries(isObject(value) ? value : {}));
  if (inner === undefined) entries.delete(key);
  else entries.set(key, inner);
  return Object.fromEntries(entries);
}

/** The field's display name (the first), else the last name of its path. */
function labelOf(node: ClaimNode): string {
  const name = node.field?.display?.[0]?.name;
  if (name) return name;
  return typeof node.segment === 'string' ? node.segment : 'Element';
}

interface InputProps {
  node: ClaimNode;
  label: string;
  path: Path;
  value: unknown;
  onValue: (value: unknown) => void;
  /** The prefix of the API's field errors for these claims: body.credentialClaims.{id}.claims */
  errorPrefix: string;
  problem?: Problem;
  idPrefix: string;
}

/** The typed inputs of a claims object: one per field, nested as the paths nest. */
export function ClaimsInputs(props: {
  root: ClaimNode;
  claims: Claims;
  onClaims: (claims: Claims) => void;
  errorPrefix: string;
  problem?: Problem;
  idPrefix: string;
}) {
  return (
    <Members
      {...props}
      node={props.root}
      label="claims"
      path={[]}
      value={props.claims}
      onValue={(value) => props.onClaims(isObject(value) ? value : {})}
    />
  );
}

function ClaimInput(props: InputProps) {
  const kind = kindOf(props.node);
  const { node } = props;
  if (!isGroup(node)) return <Leaf {...props} />;
  if (kind === 'object') {
    return (
      <fieldset class="claim-group">
        <legend>{props.label}</legend>
        <Members {...props} />
      </fieldset>
    );
  }
  if (node.items) return <Rows {...props} items={node.items} />;
  return (
    <fieldset class="claim-group">
      <legend>{props.label}</legend>
      {[...node.positions].map(([index, child]) => (
        <ClaimInput
          {...props}
          key={index}
          node={child}
          label={`${labelOf(child)} ${index + 1}`}
          path={[...props.path, index]}
          value={valueAt(props.value, index)}
          onValue={(v) => props.onValue(withValueAt(props.value, [index], v))}
        />
      ))}
    </fieldset>
  );
}

/** The named members of an object, each with its own input. */
function Members(props: InputProps) {
  return (
    <>
      {[...props.node.properties].map(([name, child]) => (
        <ClaimInput
          {...props}
          key={name}
          node={child}
          label={labelOf(child)}
          path={[...props.path, name]}
          value={valueAt(props.value, name)}
          onValue={(v) => props.onValue(withValueAt(props.value, [name], v))}
        />
      ))}
    </>
  );
}

/** An array whose every element has the same fields: a row per element, added and removed by buttons. */
function Rows(props: InputProps & { items: ClaimNode }) {
  const rows = Array.isArray(props.value) ? props.value : [];
  // A row stays while it is empty (its input cleared), until it is removed.
  const empty = kindOf(props.items) === 'object' ? {} : '';
  const write = (next: unknown[]) => props.onValue(next.length ? next : undefined);
  // An element is named by its own field's display name where it has one ("Nationality 2"), else by the array's.
  const element = props.items.field?.display?.[0]?.name ?? props.label;
  return (
    <fieldset class="claim-group">
      <legend>{props.label}</legend>
      {rows.length === 0 && <p class="muted">No elements.</p>}
      {rows.map((row, index) => (
        <div class="claim-row" key={index}>
          <ClaimInput
            {...props}
            node={props.items}
            label={`${element} ${index + 1}`}
            path={[...props.path, index]}
            value={row}
            onValue={(v) => write(rows.map((r, i) => (i === index ? (v ?? empty) : r)))}
          />
          <button type="button" class="secondary" onClick={() => write(rows.filter((_, i) => i !== index))}>
            Remove {element} {index + 1}
          </button>
        </div>
      ))}
      <button type="button" class="secondary" onClick={() => write([...rows, empty])}>
        Add {element}
      </button>
    </fieldset>
  );
}

/** A datetime-local value (no zone) as the RFC 3339 date-time the service checks, taken as UTC. */
const toDateTime = (local: string) => (local ? `${local.length === 16 ? `${local}:00` : local}Z` : undefined);
const fromDateTime = (value: unknown) => (typeof value === 'string' ? value.replace(/(\.\d+)?(Z|[+-]\d\d:\d\d)$/, '').slice(0, 19) : '');

/** One claim's input, by its field's type; an object or array without nested fields is JSON. */
function Leaf(props: InputProps) {
  const { node, value, onValue } = props;
  const field = node.field;
  const type = kindOf(node);
  const id = `claim-${props.idPrefix}-${props.path.join('-')}`.replace(/[^\w-]/g, '_');
  const where = `${props.errorPrefix}${props.path.map((p) => `.${p}`).join('')}`;
  const errors = errorsAt(props.problem, where);
  const hint = field?.display?.[0]?.description;
  const described = errors.length || hint ? `${id}-note` : undefined;
  const common = {
    id,
    required: field?.mandatory === true,
    'aria-invalid': errors.length > 0,
    'aria-describedby': described,
  };
  const options = field?.constraints?.enum;
  let input: preact.JSX.Element;
  // A boolean is a choice of yes and no as well, so that "not set" stays apart from false and a
  // mandatory one is required to be chosen (a required checkbox would demand true).
  const choices = options ?? (type === 'boolean' ? [true, false] : undefined);
  if (choices && type !== 'object' && type !== 'array') {
    const at = choices.indexOf(value);
    input = (
      <select
        {...common}
        value={at < 0 ? '' : String(at)}
        onChange={(e) => {
          const chosen = (e.target as HTMLSelectElement).value;
          onValue(chosen === '' ? undefined : choices[Number(chosen)]);
        }}
      >
        {/* The empty value is what makes a required select refuse "(not set)". */}
        <option value="">(not set)</option>
        {choices.map((o, i) => (
          <option key={i} value={String(i)}>
            {type === 'boolean' && !options ? (o ? 'yes' : 'no') : String(o)}
          </option>
        ))}
      </select>
    );
  } else if (type === 'number' || type === 'integer') {
    input = (
      <input
        {...common}
        type="number"
        step={type === 'integer' ? 1 : 'any'}
        value={typeof value === 'number' ? value : ''}
        // On change, not on input: while a number is typed ("1.") the box's value is empty.
        onChange={(e) => {
          const text = inputValue(e);
          onValue(text === '' || !Number.isFinite(Number(text)) ? undefined : Number(text));
        }}
      />
    );
  } else if (type === 'date') {
    input = (
      <input {...common} type="date" value={typeof value === 'string' ? value : ''} onInput={(e) => onValue(inputValue(e) || undefined)} />
    );
  } else if (type === 'datetime') {
    input = (
      <input {...common} type="datetime-local" step={1} value={fromDateTime(value)} onInput={(e) => onValue(toDateTime(inputValue(e)))} />
    );
  } else if (type === 'object' || type === 'array') {
    input = <JsonField common={common} value={value} onValue={onValue} />;
  } else {
    input = <input {...common} value={typeof value === 'string' ? value : ''} onInput={(e) => onValue(inputValue(e) || undefined)} />;
  }
  const note = <FieldNote id={described} hint={hint} errors={errors} named={false} />;
  return (
    <div class="form-field">
      <label for={id}>
        {props.label}
        {type === 'datetime' && <span class="muted"> (UTC)</span>}
        {type === 'image' && <span class="muted"> (data: URL)</span>}
      </label>
      {input}
      {note}
    </div>
  );
}

/** Whether the inputs show an error at `path` (below the claims): a leaf input is there to show it. */
export function showsErrorAt(root: ClaimNode, path: string[]): boolean {
  let node: ClaimNode | undefined = root;
  for (const segment of path) {
    if (!node) return false;
    node = /^\d+$/.test(segment) ? (node.items ?? node.positions.get(Number(segment))) : node.properties.get(segment);
  }
  return node !== undefined && node !== root && !isGroup(node);
}

/** Whether a node shows as a group of inputs (a fieldset), not as one input. */
const isGroup = (node: ClaimNode) =>
  (kindOf(node) === 'object' && node.properties.size > 0) ||
  (kindOf(node) === 'array' && (node.items !== undefined || node.positions.size > 0));
