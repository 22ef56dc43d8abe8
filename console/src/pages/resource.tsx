// A management resource as a page: its list (paged), an editor to create one or change the one
// selected, delete, and the resource's own actions, each through the typed client. Most resources of
// the API fit this shape; the pages that need more (offers, sessions, presentations) are their own.
// What a person may do is what the roles of the session allow: the page shows only those actions
// (the service checks again on every call).
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { holds, type Problem, type Result, type Role, session } from '../api.js';
import {
  type Column,
  JsonEditor,
  type OneTimeSecret,
  ProblemView,
  parsedJson,
  SecretDialog,
  Table,
  useConfirm,
  usePaged,
} from '../components.js';
import type { FormField } from '../forms.js';
import { BodyForm, type Choices, unplacedProblem } from './body-form.js';

export interface ResourceAction<Row> {
  label: string;
  run: (row: Row) => Promise<Result<unknown>>;
  /** Destructive actions ask first: the question (the button repeats the label). */
  confirm?: (row: Row) => string;
  /** A secret the answer carries once (a rotated client secret). */
  secret?: (row: Row, data: unknown) => OneTimeSecret | undefined;
  /** Roles of which one is needed; absent: those of the resource. */
  roles?: Role[];
  /** Whether the action applies to `row`; absent: to every row. */
  shown?: (row: Row) => boolean;
}

export interface CreateVariant {
  label: string;
  form?: FormField[];
  template: () => Promise<unknown> | unknown;
  create: (body: unknown) => Promise<Result<unknown>>;
}

export interface ResourceDefinition<Row> {
  title: string;
  /** Roles of which one is needed to see and change the resource (as its routes require). */
  roles: Role[];
  list: () => Promise<Result<Row[]>>;
  /** How an item is named on the page (its id). */
  name: (row: Row) => string;
  columns: Column<Row>[];
  /** The form of a new one's body, and of a change (absent: JSON only). */
  form?: FormField[];
  editForm?: FormField[];
  /** The body the create editor starts with: valid as it stands (a browser test submits each unedited). */
  template: () => Promise<unknown> | unknown;
  create: (body: unknown) => Promise<Result<unknown>>;
  /** Absent: items cannot be changed here. */
  update?: (row: Row, body: unknown) => Promise<Result<unknown>>;
  /** The editable part of an item (fields the API returns but does not accept are left out). */
  editable?: (row: Row) => unknown;
  remove?: (row: Row) => Promise<Result<unknown>>;
  /** Whether `row` may be deleted now (the API refuses the rest); absent: every row. */
  removable?: (row: Row) => boolean;
  actions?: ResourceAction<Row>[];
  intro?: ComponentChildren;
  /** A secret the create answer carries once (a client's secret, a user's temporary password). */
  createdSecret?: (data: unknown) => OneTimeSecret | undefined;
  /** Other ways to create one, offered beside the plain create. */
  createVariants?: CreateVariant[];
  /** The ids the form's `id` and `ids` fields offer (a key chain picker), by field path, read when the page opens. */
  choices?: () => Promise<Choices>;
  /** A view beside the JSON editor that edits the same text (a form, a live check). */
  aside?: (props: { body: string; onBody: (text: string) => void; problem?: Problem }) => ComponentChildren;
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

/** The fields a template names its new item by (the item's `name` in the list). */
const ID_FIELDS = ['id', 'clientId', 'username'];

/**
 * The template with its id made unique among `taken` (signer, signer-2, signer-3...): a second
 * create from the same template makes a second item instead of a 409 for the first one's id.
 */
export function withFreshId(template: unknown, taken: Set<string>): unknown {
  if (typeof template !== 'object' || template === null) return template;
  const key = ID_FIELDS.find((field) => Object.hasOwn(template, field));
  const base = key === undefined ? undefined : (template as Record<string, unknown>)[key];
  if (key === undefined || typeof base !== 'string' || !taken.has(base)) return template;
  let n = 2;
  while (taken.has(`${base}-${n}`)) n++;
  return { ...template, [key]: `${base}-${n}` };
}

export function ResourcePage<Row>({ definition }: { definition: ResourceDefinition<Row> }) {
  const [rows, setRows] = useState<Row[]>([]);
  const [loadProblem, setLoadProblem] = useState<Problem>();
  const [selected, setSelected] = useState<Row>();
  const [body, setBody] = useState('');
  const [variant, setVariant] = useState<CreateVariant>();
  const [problem, setProblem] = useState<Problem>();
  const [notice, setNotice] = useState<string>();
  const [result, setResult] = useState<{ title: string; data: unknown }>();
  const [secret, setSecret] = useState<OneTimeSecret>();
  const [asJson, setAsJson] = useState(false);
  const [choices, setChoices] = useState<Choices>();
  const { confirm, dialog } = useConfirm();
  const { shown, pager } = usePaged(rows);
  const may = (roles: Role[]) => holds(session(), roles);

  // The names in the list, for a template's id that none of them has, and the template the editor
  // was given: when the list arrives after it, an id the list has is replaced unless the person
  // has edited the text meanwhile.
  const taken = useRef<Set<string>>(new Set());
  const offered = useRef<{ template: unknown; text: string }>(undefined);
  const offer = useCallback((template: unknown) => {
    const text = pretty(withFreshId(template, taken.current));
    const before = offered.current?.text;
    offered.current = { template, text };
    setBody((current) => (before === undefined || current === before ? text : current));
  }, []);
  const load = useCallback(async () => {
    const { data, problem } = await definition.list();
    setLoadProblem(problem);
    setRows(data ?? []);
    taken.current = new Set((data ?? []).map(definition.name));
    if (offered.current) offer(offered.current.template);
  }, [definition, offer]);
  // A template may take a moment (a key is generated for the import): only the latest request for
  // one fills the editor, and the first fills it only if the person has not chosen a kind already.
  const templateRequest = useRef(0);
  const startCreate = useCallback(
    async (chosen?: CreateVariant) => {
      const request = ++templateRequest.current;
      setSelected(undefined);
      setProblem(undefined);
      setVariant(chosen);
      const template = await (chosen ?? definition).template();
      if (request === templateRequest.current) {
        offered.current = undefined;
        offer(template);
      }
    },
    [definition, offer],
  );
  // Each resource mounts its own page (keyed by its title).
  useEffect(() => {
    void definition.choices?.().then(setChoices);
    void load();
    if (templateRequest.current === 0) void startCreate();
  }, [load, startCreate]);

  const edit = (row: Row) => {
    setSelected(row);
    setProblem(undefined);
    setBody(pretty(definition.editable ? definition.editable(row) : row));
  };
  const save = async (e: Event) => {
    e.preventDefault();
    const parsed = parsedJson(body);
    if (!parsed) return;
    const reply =
      selected !== undefined && definition.update
        ? await definition.update(selected, parsed.value)
        : await (variant ?? definition).create(parsed.value);
    setProblem(reply.problem);
    if (reply.problem) return;
    setNotice(selected !== undefined ? `Saved ${definition.name(selected)}` : 'Created');
    setResult(undefined);
    const created = selected === undefined ? definition.createdSecret?.(reply.data) : undefined;
    if (created) setSecret(created);
    await load();
    await startCreate();
  };
  const remove = async (row: Row) => {
    if (!definition.remove) return;
    if (!(await confirm(`Delete ${definition.name(row)}? This cannot be undone.`, 'Delete'))) return;
    const { problem } = await definition.remove(row);
    setProblem(problem);
    if (!problem) setNotice(`Deleted ${definition.name(row)}`);
    await load();
  };
  const act = async (action: ResourceAction<Row>, row: Row) => {
    if (action.confirm && !(await confirm(action.confirm(row), action.label))) return;
    const { data, problem } = await action.run(row);
    setProblem(problem);
    if (!problem) {
      setNotice(`${action.label}: ${definition.name(row)}`);
      const oneTime = action.secret?.(row, data);
      if (oneTime) setSecret(oneTime);
      else setResult(data !== undefined && data !== null ? { title: `${action.label}: ${definition.name(row)}`, data } : undefined);
    }
    await load();
  };

  const canChange = may(definition.roles);
  const form = selected !== undefined ? definition.editForm : (variant ?? definition).form;
  // The problem box repeats only what no field of the form shows.
  const unplaced = problem && form && !asJson ? unplacedProblem(problem, form) : problem;
  const actions = (definition.actions ?? []).filter((a) => may(a.roles ?? definition.roles));
  const columns: Column<Row>[] = [...definition.columns];
  if (canChange && (definition.update || definition.remove || actions.length > 0)) {
    columns.push({
      title: 'Actions',
      actions: true,
      cell: (row) => (
        <div class="row actions">
          {definition.update && (
            <button type="button" class="secondary" onClick={() => edit(row)} aria-label={`Edit ${definition.name(row)}`}>
              Edit
            </button>
          )}
          {actions
            .filter((action) => action.shown?.(row) ?? true)
            .map((action) => (
              <button
                type="button"
                class={action.confirm ? 'danger' : 'secondary'}
                key={action.label}
                onClick={() => act(action, row)}
                aria-label={`${action.label} ${definition.name(row)}`}
              >
                {action.label}
              </button>
            ))}
          {definition.remove && (definition.removable?.(row) ?? true) && (
            <button type="button" class="danger" onClick={() => remove(row)} aria-label={`Delete ${definition.name(row)}`}>
              Delete
            </button>
          )}
        </div>
      ),
    });
  }

  return (
    <>
      <h2>{definition.title}</h2>
      {definition.intro}
      <ProblemView problem={loadProblem} />
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {result && (
        <details class="card" open>
          <summary>{result.title}</summary>
          <pre>{pretty(result.data)}</pre>
        </details>
      )}
      <section class="card">
        <Table rows={shown} columns={columns} label={definition.title} />
        {pager}
      </section>
      {canChange && (
        <section class="card">
          <form onSubmit={save}>
            <h3>{selected !== undefined ? `Change ${definition.name(selected)}` : 'Create'}</h3>
            {selected === undefined && definition.createVariants && (
              <label>
                Kind
                <select
                  value={variant?.label ?? ''}
                  onChange={(e) => startCreate(definition.createVariants?.find((v) => v.label === (e.target as HTMLSelectElement).value))}
                >
                  <option value="">New</option>
                  {definition.createVariants.map((v) => (
                    <option key={v.label} value={v.label}>
                      {v.label}
                    </option>
                  ))}
                </select>
              </label>
            )}
            {form && (
              <div class="row">
                <button type="button" class="secondary" aria-pressed={asJson} onClick={() => setAsJson(!asJson)}>
                  {asJson ? 'Edit as form' : 'Edit as JSON'}
                </button>
              </div>
            )}
            <div class={definition.aside ? 'editor-pair' : undefined}>
              {form && !asJson ? (
                <BodyForm fields={form} body={body} onBody={setBody} problem={problem} choices={choices} />
              ) : (
                <JsonEditor label="Body (JSON)" value={body} onInput={setBody} problem={problem} />
              )}
              {definition.aside?.({ body, onBody: setBody, problem })}
            </div>
            <ProblemView problem={unplaced} />
            <div class="row">
              <button type="submit">{selected !== undefined ? 'Save' : 'Create'}</button>
              {selected !== undefined && (
                <button type="button" class="secondary" onClick={() => startCreate()}>
                  Cancel
                </button>
              )}
            </div>
          </form>
        </section>
      )}
      {dialog}
      <SecretDialog secret={secret} onClose={() => setSecret(undefined)} />
    </>
  );
}
