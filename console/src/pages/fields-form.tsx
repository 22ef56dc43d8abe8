// A form over the `fields` of a credential configuration, beside its JSON: each top-level field is a
// row (path, type, mandatory, disclosable, namespace, display name, default value; moved up and down,
// as the order of the fields is the order of the claims), and a change in
// either view shows in the other at once, because both edit the same JSON text. A 400 that names
// `body.fields.N…` is shown on row N. Nested fields (children) and constraints stay in the JSON.
import type { Problem } from '../api.js';
import { checked, DraftInput, FieldErrors, inputValue, parsedJson } from '../components.js';
import { moved } from './body-form.js';

const FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'date', 'datetime', 'image', 'object', 'array'];

type PathSegment = string | number | null;
interface Field {
  path: PathSegment[];
  type: string;
  mandatory?: boolean;
  disclosable?: boolean;
  namespace?: string;
  defaultValue?: unknown;
  display?: { name: string; locale?: string }[];
  children?: unknown[] | null;
  [other: string]: unknown;
}
interface Body {
  config?: { format?: string };
  fields?: Field[];
  [other: string]: unknown;
}

/** `a.0.*` <-> ["a", 0, null]: digits are array indexes, `*` every element. */
export const pathText = (path: PathSegment[]) => path.map((s) => (s === null ? '*' : String(s))).join('.');
export const parsePath = (text: string): PathSegment[] => text.split('.').map((s) => (s === '*' ? null : /^\d+$/.test(s) ? Number(s) : s));

/** A default value as typed: JSON where it parses (numbers, booleans, objects), the plain text otherwise. */
const defaultText = (value: unknown) => (value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value));
function parseDefault(text: string, type: string): unknown {
  if (text === '') return undefined;
  if (type === 'string' || type === 'date' || type === 'datetime' || type === 'image') return text;
  return parsedJson(text)?.value ?? text;
}

export function FieldsForm({ body, onBody, problem }: { body: string; onBody: (text: string) => void; problem?: Problem }) {
  const parsed = parsedJson(body)?.value as Body | undefined;
  if (!parsed || typeof parsed !== 'object' || (parsed.fields !== undefined && !Array.isArray(parsed.fields))) {
    return <p class="muted">The fields form shows once the JSON parses and its `fields` is a list.</p>;
  }
  const fields = parsed.fields ?? [];
  const mdoc = parsed.config?.format === 'mso_mdoc';
  const write = (next: Field[]) => onBody(JSON.stringify({ ...parsed, fields: next }, null, 2));
  const change = (index: number, patch: Partial<Field>) =>
    write(fields.map((f, i) => (i === index ? withoutUndefined({ ...f, ...patch }) : f)));
  const errorsOf = (index: number) => (problem?.fields ?? []).filter((f) => f.field.startsWith(`body.fields.${index}`));

  return (
    <fieldset class="fields-form">
      <legend>Fields</legend>
      {fields.length === 0 && <p class="muted">No fields yet.</p>}
      {fields.map((field, index) => (
        <fieldset class="field-row" key={index}>
          <legend class="sr-only">Field {index + 1}</legend>
          <label>
            Path
            <DraftInput value={pathText(field.path ?? [])} onCommit={(text) => change(index, { path: parsePath(text) })} />
          </label>
          <label>
            Type
            <select value={field.type} onChange={(e) => change(index, { type: inputValue(e) })}>
              {FIELD_TYPES.map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
          </label>
          <label class="check">
            <input
              type="checkbox"
              checked={field.mandatory === true}
              onChange={(e) => change(index, { mandatory: checked(e) || undefined })}
            />
            Mandatory
          </label>
          {!mdoc && (
            <label class="check">
              <input
                type="checkbox"
                // SD-JWT VC issues a claim selectively disclosable unless its field says false.
                checked={field.disclosable !== false}
                onChange={(e) => change(index, { disclosable: checked(e) })}
              />
              Disclosable
            </label>
          )}
          {mdoc && (
            <label>
              Namespace
              <DraftInput value={field.namespace ?? ''} onCommit={(text) => change(index, { namespace: text || undefined })} />
            </label>
          )}
          <label>
            Display name
            <DraftInput
              value={field.display?.[0]?.name ?? ''}
              onCommit={(text) => {
                const name = text;
                const rest = field.display?.slice(1) ?? [];
                change(index, { display: name ? [{ ...field.display?.[0], name }, ...rest] : rest.length ? rest : undefined });
              }}
            />
          </label>
          <label>
            Default value
            <DraftInput
              value={defaultText(field.defaultValue)}
              onCommit={(text) => change(index, { defaultValue: parseDefault(text, field.type) })}
            />
          </label>
          {Array.isArray(field.children) && field.children.length > 0 && (
            <span class="muted">{field.children.length} nested (in the JSON)</span>
          )}
          <div class="row">
            <button type="button" class="secondary" disabled={index === 0} onClick={() => write(moved(fields, index, index - 1))}>
              Move field {index + 1} up
            </button>
            <button
              type="button"
              class="secondary"
              disabled={index === fields.length - 1}
              onClick={() => write(moved(fields, index, index + 1))}
            >
              Move field {index + 1} down
            </button>
            <button type="button" class="danger" onClick={() => write(fields.filter((_, i) => i !== index))}>
              Remove field {index + 1}
            </button>
          </div>
          <FieldErrors errors={errorsOf(index)} />
        </fieldset>
      ))}
      <button type="button" class="secondary" onClick={() => write([...fields, { path: [`claim_${fields.length + 1}`], type: 'string' }])}>
        Add field
      </button>
    </fieldset>
  );
}

const withoutUndefined = (field: Field) => Object.fromEntries(Object.entries(field).filter(([, v]) => v !== undefined)) as Field;
