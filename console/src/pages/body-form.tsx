// A request body as a form (the fields of a FormSpec), editing the same JSON text as the JSON view:
// a change in either shows in the other. The API's field errors (`body.roles`, `body.auth.type`) are
// shown on the field they name; an error on a field the form does not show stays in the problem
// box below.
import { useState } from 'preact/hooks';
import { mayGrant, type Problem, session } from '../api.js';
import { DraftInput, parsedJson } from '../components.js';
import type { FormField } from '../forms.js';
import { errorsAt, FieldNote } from './labelled-field.js';

type Body = Record<string, unknown>;

function valueAt(body: Body, path: string): unknown {
  let value: unknown = body;
  for (const key of path.split('.')) value = value && typeof value === 'object' ? (value as Body)[key] : undefined;
  return value;
}

/** `body` with `path` set to `value` (undefined: removed), parents made as needed; a list stays a list. */
function withValue(body: Body, path: string, value: unknown): Body {
  const [head, ...rest] = path.split('.') as [string, ...string[]];
  const next = (Array.isArray(body) ? [...body] : { ...body }) as Body;
  if (rest.length === 0) {
    if (value === undefined) delete next[head];
    else next[head] = value;
    return next;
  }
  const child = next[head] && typeof next[head] === 'object' ? (next[head] as Body) : {};
  next[head] = withValue(child, rest.join('.'), value);
  return next;
}

/** The list with the item at `from` moved to `to` (rows of a list form: their order is the list's). */
export function moved<T>(items: T[], from: number, to: number): T[] {
  const next = [...items];
  next.splice(to, 0, ...next.splice(from, 1));
  return next;
}

/** Whether a field applies to the body as it is (a per-format field to its format). */
const applies = (field: FormField, body: Body) => !field.when || valueAt(body, field.when.path) === field.when.is;

/** Whether an error's `field` (`body.auth.type`) is about the property at `path` (`auth.type`) or inside it. */
const isOn = (field: string, path: string) => field === `body.${path}` || field.startsWith(`body.${path}.`);

/**
 * The problem without the field errors that the form shows on its fields (or that `alsoShown` shows
 * beside them): what a problem box above the form still has to say.
 */
export function unplacedProblem(problem: Problem | undefined, form: readonly FormField[], alsoShown?: (field: string) => boolean) {
  const shown = (field: string) => form.some((f) => isOn(field, f.path)) || alsoShown?.(field) === true;
  return problem && { ...problem, fields: problem.fields.filter((f) => !shown(f.field)) };
}

const inputId = (path: string, prefix = '') => `field-${prefix}${path.replace(/\W/g, '-')}`;

/** The ids an `id` or `ids` field offers, by the field's path (the page lists them at run time). */
export type Choices = Record<string, readonly string[]>;

/** `idPrefix` keeps the ids of the inputs apart where a page shows more than one form. */
export function BodyForm(props: {
  fields: FormField[];
  body: string;
  onBody: (text: string) => void;
  problem?: Problem;
  choices?: Choices;
  idPrefix?: string;
}) {
  const parsed = parsedJson(props.body)?.value;
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return <p class="field-error">The JSON does not parse as an object: correct it in the JSON view.</p>;
  }
  const body = parsed as Body;
  const set = (path: string, value: unknown) => props.onBody(JSON.stringify(withValue(body, path, value), null, 2));
  return (
    <div class="body-form">
      {props.fields
        .filter((field) => applies(field, body))
        .map((field) => (
          <FieldInput
            key={field.path}
            field={field}
            value={valueAt(body, field.path)}
            onValue={(v) => set(field.path, v)}
            problem={props.problem}
            choices={props.choices?.[field.path] ?? []}
            idPrefix={props.idPrefix}
          />
        ))}
    </div>
  );
}

function FieldInput({
  field,
  value,
  onValue,
  problem,
  choices,
  idPrefix,
}: {
  field: FormField;
  value: unknown;
  onValue: (value: unknown) => void;
  problem?: Problem;
  choices: readonly string[];
  idPrefix?: string;
}) {
  // A list of objects shows its rows' errors on their fields: only those on the list or a whole row here.
  const errors =
    field.kind === 'objects'
      ? (problem?.fields ?? []).filter((f) => new RegExp(`^body\\.${field.path.replace(/\./g, '\\.')}(\\.\\d+)?$`).test(f.field))
      : errorsAt(problem, `body.${field.path}`);
  const id = inputId(field.path, idPrefix);
  const described = errors.length || field.hint ? `${id}-note` : undefined;
  const common = { id, 'aria-invalid': errors.length > 0, 'aria-describedby': described };
  const note = <FieldNote id={described} hint={field.hint} errors={errors} />;
  const target = (e: Event) => e.target as HTMLInputElement;
  // Typed text is written at each keystroke (onInput), not on leaving the input: a re-render meanwhile
  // (the pickers' choices arriving, a select changed) would otherwise put the old value back. A list
  // is read when left (DraftInput keeps its text until then), so that a trailing comma is not trimmed
  // away while typed.

  if (field.kind === 'checkbox') {
    return (
      <div class="form-field">
        <label class="check">
          <input
            type="checkbox"
            {...common}
            checked={value === true || (value === undefined && field.unset === true)}
            onChange={(e) => onValue(target(e).checked)}
          />
          {field.label}
        </label>
        {note}
      </div>
    );
  }
  if (field.kind === 'objects') {
    return (
      <ObjectsInput field={field} value={value} onValue={onValue} problem={problem} idPrefix={idPrefix} described={described} note={note} />
    );
  }
  if (field.kind === 'multi' || field.kind === 'ids') {
    const chosen = Array.isArray(value) ? (value as string[]) : [];
    // A chosen id the list lacks (typed in the JSON view) stays visible, so that it can be unchecked.
    const options =
      field.kind === 'multi'
        ? field.options.filter((option) => !field.grantable || mayGrant(session(), option) || chosen.includes(option))
        : [...choices, ...chosen.filter((c) => !choices.includes(c))];
    return (
      <fieldset class="form-field multi" aria-describedby={described}>
        <legend>{field.label}</legend>
        {options.length === 0 && <span class="muted">none yet</span>}
        {options.map((option) => (
          <label class="check" key={option}>
            <input
              type="checkbox"
              checked={chosen.includes(option)}
              onChange={(e) => onValue(target(e).checked ? [...chosen, option] : chosen.filter((c) => c !== option))}
            />
            {option}
          </label>
        ))}
        {note}
      </fieldset>
    );
  }
  let input: preact.JSX.Element;
  if (field.kind === 'id') {
    input = (
      <select
        {...common}
        value={typeof value === 'string' ? value : ''}
        onChange={(e) => onValue((e.target as HTMLSelectElement).value || undefined)}
      >
        {(typeof value !== 'string' || !choices.includes(value)) && (
          <option value={typeof value === 'string' ? value : ''}>{typeof value === 'string' ? value : '(not set)'}</option>
        )}
        {choices.map((id) => (
          <option key={id} value={id}>
            {id}
          </option>
        ))}
      </select>
    );
  } else if (field.kind === 'select') {
    const known = field.options.some((o) => o === value);
    input = (
      <select
        {...common}
        value={value === undefined || value === null ? '' : String(value)}
        onChange={(e) => {
          const chosen = (e.target as HTMLSelectElement).value;
          const option = field.options.find((o) => String(o) === chosen);
          onValue(option ?? (field.unset ? null : undefined));
        }}
      >
        {field.unset ? (
          <option value="">{field.unset}</option>
        ) : (
          (value === undefined || !known) && <option value="">{value === undefined ? '(not set)' : String(value)}</option>
        )}
        {field.options.map((o) => (
          <option key={o} value={String(o)}>
            {o}
          </option>
        ))}
      </select>
    );
  } else if (field.kind === 'integer') {
    input = (
      <input
        {...common}
        type="number"
        step={1}
        min={field.min}
        max={field.max}
        placeholder={field.unset}
        value={typeof value === 'number' ? value : ''}
        onInput={(e) => onValue(target(e).value === '' ? (field.unset ? null : undefined) : Number(target(e).value))}
      />
    );
  } else if (field.kind === 'list') {
    input = (
      <DraftInput
        {...common}
        value={Array.isArray(value) ? value.join(', ') : ''}
        onCommit={(text) => {
          const ids = text
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean);
          onValue(ids.length ? ids : undefined);
        }}
      />
    );
  } else if (field.kind === 'json') {
    input = <JsonField common={common} value={value} onValue={onValue} />;
  } else if (field.kind === 'textarea') {
    input = (
      <textarea
        {...common}
        rows={3}
        value={typeof value === 'string' ? value : ''}
        onInput={(e) => onValue((e.target as HTMLTextAreaElement).value || undefined)}
      />
    );
  } else if (field.kind === 'password') {
    input = (
      <input
        {...common}
        type="password"
        autocomplete="new-password"
        value={typeof value === 'string' ? value : ''}
        onInput={(e) => onValue(target(e).value || undefined)}
      />
    );
  } else if (value !== null && typeof value === 'object') {
    // A text field whose value is structured (vct as a type metadata document) shows it as JSON
    // rather than as an empty box whose first keystroke would drop it.
    input = <JsonField common={common} value={value} onValue={onValue} />;
  } else {
    input = <input {...common} value={typeof value === 'string' ? value : ''} onInput={(e) => onValue(target(e).value || undefined)} />;
  }
  return (
    <div class="form-field">
      <label for={id}>{field.label}</label>
      {input}
      {note}
    </div>
  );
}

/**
 * A nested value as JSON: what is typed stays as typed and is written to the body whenever it parses;
 * while it does not, the parse error shows beside it and the body keeps the last valid value. A view
 * beside the form (the DCQL query builder) may change the value meanwhile: the field then shows it.
 */
export function JsonField({
  common,
  value,
  onValue,
}: {
  common: Record<string, unknown>;
  value: unknown;
  onValue: (value: unknown) => void;
}) {
  const [draft, setDraft] = useState<{ text: string; error?: string }>();
  return (
    <>
      <textarea
        {...common}
        class="json"
        rows={6}
        spellcheck={false}
        value={draft && showsDraft(draft, value) ? draft.text : value === undefined ? '' : JSON.stringify(value, null, 2)}
        onInput={(e) => {
          const text = (e.target as HTMLTextAreaElement).value;
          if (text.trim() === '') {
            setDraft({ text });
            return onValue(undefined);
          }
          try {
            onValue(JSON.parse(text));
            setDraft({ text });
          } catch (err) {
            setDraft({ text, error: (err as Error).message });
          }
        }}
      />
      {draft?.error && <span class="field-error">Not JSON: {draft.error}</span>}
    </>
  );
}

/** Whether the text typed still stands for `value` (or does not parse yet): else `value` changed elsewhere. */
function showsDraft(draft: { text: string; error?: string }, value: unknown) {
  if (draft.error !== undefined || draft.text.trim() === '') return true;
  return JSON.stringify(JSON.parse(draft.text)) === JSON.stringify(value);
}

type ObjectsField = Extract<FormField, { kind: 'objects' }>;

/**
 * A list of objects as rows of fields, each row its own group (Display 1, Display 2...), with add,
 * remove and move up/down. A row's members the form does not show stay as they are; an error on
 * `body.{path}.{n}.{member}` shows on that row's field.
 */
function ObjectsInput(props: {
  field: ObjectsField;
  value: unknown;
  onValue: (value: unknown) => void;
  problem?: Problem;
  idPrefix?: string;
  described?: string;
  note: preact.ComponentChildren;
}) {
  const { field, onValue } = props;
  const items = Array.isArray(props.value) ? (props.value as Body[]) : [];
  const write = (next: Body[]) => onValue(next.length ? next : undefined);
  const move = (from: number, to: number) => write(moved(items, from, to));
  return (
    <fieldset class="form-field objects" aria-describedby={props.described}>
      <legend>{field.label}</legend>
      {items.length === 0 && <span class="muted">none</span>}
      {items.map((item, index) => {
        const name = `${field.item} ${index + 1}`;
        return (
          <fieldset class="object-row" key={index}>
            <legend>{name}</legend>
            {field.fields.map((member) => (
              <FieldInput
                key={member.path}
                // The full path, so that the API's error on it lands here and the input's id is unique.
                field={{ ...member, path: `${field.path}.${index}.${member.path}` }}
                value={valueAt(item, member.path)}
                onValue={(v) => write(items.map((it, i) => (i === index ? withValue(it, member.path, v) : it)))}
                problem={props.problem}
                choices={[]}
                idPrefix={props.idPrefix}
              />
            ))}
            <div class="row">
              <button
                type="button"
                class="secondary"
                disabled={index === 0}
                onClick={() => move(index, index - 1)}
                aria-label={`Move ${name} up`}
              >
                Up
              </button>
              <button
                type="button"
                class="secondary"
                disabled={index === items.length - 1}
                onClick={() => move(index, index + 1)}
                aria-label={`Move ${name} down`}
              >
                Down
              </button>
              <button type="button" class="danger" onClick={() => write(items.filter((_, i) => i !== index))} aria-label={`Remove ${name}`}>
                Remove
              </button>
            </div>
          </fieldset>
        );
      })}
      <button type="button" class="secondary" onClick={() => write([...items, { ...field.empty }])}>
        Add {field.item.toLowerCase()}
      </button>
      {props.note}
    </fieldset>
  );
}
