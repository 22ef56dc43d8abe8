// A management resource as a page: its list (paged), a JSON editor to create one or change the one
// selected, delete, and the resource's own actions. Most resources of the API fit this shape; the
// pages that need more (offers, sessions, presentations) are their own.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { call, type Problem } from '../api.js';
import { type Column, JsonEditor, ProblemView, parsedJson, Table, usePaged } from '../components.js';

export interface ResourceAction {
  label: string;
  /** Runs the action; what it returns is shown once (a new secret, an exported document). */
  run: (row: any) => Promise<{ data?: unknown; problem?: Problem }>;
}

export interface ResourceDefinition {
  title: string;
  /** GET lists, POST creates. */
  path: string;
  /** The path of one item. */
  itemPath: (row: any) => string;
  columns: Column<any>[];
  /** The body the create editor starts with. */
  template: unknown;
  /** How a change is sent; absent: items cannot be changed here. */
  update?: 'PATCH' | 'PUT';
  /** The editable part of an item (fields the API returns but does not accept are left out). */
  editable?: (row: any) => unknown;
  deletable?: boolean;
  actions?: ResourceAction[];
  intro?: ComponentChildren;
  /** Other ways to create one (another path and starting body), offered beside the plain create. */
  createVariants?: { label: string; path: string; template: unknown }[];
  /** A view beside the JSON editor that edits the same text (a form, a live check). */
  aside?: (props: { body: string; onBody: (text: string) => void; problem?: Problem }) => ComponentChildren;
}

export function ResourcePage({ definition }: { definition: ResourceDefinition }) {
  const [rows, setRows] = useState<any[]>([]);
  const [loadProblem, setLoadProblem] = useState<Problem>();
  const [selected, setSelected] = useState<any>();
  const [body, setBody] = useState(JSON.stringify(definition.template, null, 2));
  const [createPath, setCreatePath] = useState(definition.path);
  const [problem, setProblem] = useState<Problem>();
  const [notice, setNotice] = useState<{ title: string; data: unknown }>();
  const { shown, pager } = usePaged(rows);

  const load = useCallback(async () => {
    const { data, problem } = await call('GET', definition.path);
    setLoadProblem(problem);
    setRows(Array.isArray(data) ? data : []);
  }, [definition.path]);
  const reset = useCallback(() => {
    setSelected(undefined);
    setProblem(undefined);
    setCreatePath(definition.path);
    setBody(JSON.stringify(definition.template, null, 2));
  }, [definition]);
  // Each resource mounts its own page (keyed by path), so only the list needs loading here.
  useEffect(() => {
    void load();
  }, [load]);

  const edit = (row: any) => {
    setSelected(row);
    setProblem(undefined);
    setBody(JSON.stringify(definition.editable ? definition.editable(row) : row, null, 2));
  };
  const save = async (e: Event) => {
    e.preventDefault();
    const parsed = parsedJson(body);
    if (!parsed) return;
    const { data, problem } = selected
      ? await call(definition.update as string, definition.itemPath(selected), parsed.value)
      : await call('POST', createPath, parsed.value);
    setProblem(problem);
    if (problem) return;
    setNotice({ title: selected ? 'Saved' : 'Created', data });
    reset();
    await load();
  };
  const remove = async (row: any) => {
    if (!confirm(`Delete ${definition.itemPath(row)}?`)) return;
    const { problem } = await call('DELETE', definition.itemPath(row));
    setProblem(problem);
    if (!problem) await load();
  };
  const act = async (action: ResourceAction, row: any) => {
    const { data, problem } = await action.run(row);
    setProblem(problem);
    if (!problem) setNotice({ title: action.label, data });
    await load();
  };

  const columns: Column<any>[] = [
    ...definition.columns,
    {
      title: 'Actions',
      cell: (row) => (
        <div class="row">
          {definition.update && (
            <button type="button" class="secondary" onClick={() => edit(row)}>
              Edit
            </button>
          )}
          {definition.actions?.map((action) => (
            <button type="button" class="secondary" key={action.label} onClick={() => act(action, row)}>
              {action.label}
            </button>
          ))}
          {definition.deletable !== false && (
            <button type="button" class="danger" onClick={() => remove(row)}>
              Delete
            </button>
          )}
        </div>
      ),
    },
  ];

  return (
    <>
      <h2>{definition.title}</h2>
      {definition.intro}
      <ProblemView problem={loadProblem} />
      {notice && (
        <div class="notice" role="status">
          <strong>{notice.title}</strong>
          {notice.data !== undefined && notice.data !== null && <pre>{JSON.stringify(notice.data, null, 2)}</pre>}
          <button type="button" class="secondary" onClick={() => setNotice(undefined)}>
            Dismiss
          </button>
        </div>
      )}
      <section class="card">
        <Table rows={shown} columns={columns} />
        {pager}
      </section>
      <section class="card">
        <form onSubmit={save}>
          <h3>{selected ? `Change ${definition.itemPath(selected)}` : 'Create'}</h3>
          {!selected && definition.createVariants && (
            <label>
              Kind
              <select
                value={createPath}
                onChange={(e) => {
                  const variant = [{ path: definition.path, template: definition.template }, ...(definition.createVariants ?? [])].find(
                    (v) => v.path === (e.target as HTMLSelectElement).value,
                  );
                  setCreatePath(variant?.path ?? definition.path);
                  setBody(JSON.stringify(variant?.template ?? definition.template, null, 2));
                }}
              >
                <option value={definition.path}>New</option>
                {definition.createVariants.map((v) => (
                  <option key={v.path} value={v.path}>
                    {v.label}
                  </option>
                ))}
              </select>
            </label>
          )}
          <div class={definition.aside ? 'editor-pair' : undefined}>
            <JsonEditor label="Body (JSON)" value={body} onInput={setBody} problem={problem} />
            {definition.aside?.({ body, onBody: setBody, problem })}
          </div>
          <ProblemView problem={problem} />
          <div class="row">
            <button type="submit">{selected ? 'Save' : 'Create'}</button>
            {selected && (
              <button type="button" class="secondary" onClick={reset}>
                Cancel
              </button>
            )}
          </div>
        </form>
      </section>
    </>
  );
}
