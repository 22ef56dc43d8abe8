// The audit log: who did what to which object. GET /api/admin/audit-logs takes only a limit (newest
// first, at most 500), so the console fetches the newest 500 and filters those here, by the kind of
// object, the action, who acted, and the object's name. Each entry names the object it changed and
// shows what it changed, before and after.
import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/index.js';
import { api, type Problem, result } from '../api.js';
import { formatDate, ProblemView, Table, usePaged } from '../components.js';

type AuditEntry = components['schemas']['AuditLogEntry'];
const NEWEST = 500;

/** The kind of object an action is on: `credential_config` of `credential_config.updated`. */
const kindOf = (e: AuditEntry) => e.actionType.slice(0, e.actionType.lastIndexOf('.')) || e.actionType;
const actorOf = (e: AuditEntry) => e.actorDisplay ?? e.actorId;

/**
 * The name of the object the entry changed, from the snapshot after (or, when deleted, before) the
 * change, with its version where the object has versions (schema metadata). Settings the tenant has
 * one of (issuer settings, the registrar configuration) have no name: the kind names them.
 */
export function objectOf(e: AuditEntry): string {
  const snapshot = e.after ?? e.before ?? {};
  const named = (key: string) => {
    const value = snapshot[key];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  };
  const name = ['username', 'clientId', 'id', 'name'].map(named).find((v) => v !== undefined) ?? '';
  const version = named('version');
  return name && version ? `${name} ${version}` : name;
}

/** A value of a snapshot as one line (long ones shortened: the entry's JSON is in the API). */
function shown(value: unknown): string {
  if (value === undefined) return '(none)';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** What the entry changed: each changed field, before and after. */
function Changes({ entry }: { entry: AuditEntry }) {
  const fields = entry.changedFields ?? [];
  if (fields.length === 0) return null;
  return (
    <details>
      <summary>{fields.join(', ')}</summary>
      <dl class="changes">
        {fields.map((field) => (
          <div key={field}>
            <dt>{field}</dt>
            <dd>
              <code>{shown(entry.before?.[field])}</code> → <code>{shown(entry.after?.[field])}</code>
            </dd>
          </div>
        ))}
      </dl>
    </details>
  );
}

interface Filters {
  kind: string;
  action: string;
  actor: string;
  object: string;
}
const NO_FILTER: Filters = { kind: '', action: '', actor: '', object: '' };

const matches = (e: AuditEntry, f: Filters) =>
  (!f.kind || kindOf(e) === f.kind) &&
  (!f.action || e.actionType === f.action) &&
  (!f.actor || actorOf(e) === f.actor) &&
  (!f.object || objectOf(e).toLowerCase().includes(f.object.trim().toLowerCase()));

const distinct = (values: string[]) => [...new Set(values)].sort();

function Choice({ label, value, options, onChange }: { label: string; value: string; options: string[]; onChange: (v: string) => void }) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        <option value="">any</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}

export function AuditPage() {
  const [rows, setRows] = useState<AuditEntry[]>([]);
  const [problem, setProblem] = useState<Problem>();
  const [filters, setFilters] = useState<Filters>(NO_FILTER);
  const set = (key: keyof Filters) => (value: string) => setFilters({ ...filters, [key]: value });
  const filtered = rows.filter((e) => matches(e, filters));
  const { shown, pager } = usePaged(filtered);
  useEffect(() => {
    void result(api.GET('/api/admin/audit-logs', { params: { query: { limit: NEWEST } } })).then(({ data, problem }) => {
      setProblem(problem);
      setRows(data ?? []);
    });
  }, []);
  const actions = distinct(rows.filter((e) => !filters.kind || kindOf(e) === filters.kind).map((e) => e.actionType));
  return (
    <>
      <h2>Audit log</h2>
      <ProblemView problem={problem} />
      <section class="card" aria-label="filters">
        <form class="filters" onSubmit={(e) => e.preventDefault()}>
          <Choice label="Object kind" value={filters.kind} options={distinct(rows.map(kindOf))} onChange={set('kind')} />
          <Choice label="Action" value={filters.action} options={actions} onChange={set('action')} />
          <Choice label="By" value={filters.actor} options={distinct(rows.map(actorOf))} onChange={set('actor')} />
          <label>
            Object name contains
            <input type="search" value={filters.object} onInput={(e) => set('object')((e.target as HTMLInputElement).value)} />
          </label>
          <button type="button" class="secondary" onClick={() => setFilters(NO_FILTER)}>
            Clear filters
          </button>
        </form>
        <p class="muted" role="status">
          {filtered.length} of the newest {rows.length} entries
        </p>
      </section>
      <section class="card">
        <Table
          label="audit entries"
          rows={shown}
          empty={rows.length ? 'No entry matches the filters.' : undefined}
          columns={[
            { title: 'When', cell: (e) => formatDate(e.timestamp) },
            { title: 'Action', cell: (e) => <code class="action">{e.actionType}</code> },
            {
              title: 'Object',
              cell: (e) => (
                <span data-testid="audit-object">
                  {kindOf(e)} {objectOf(e) && <code class="id">{objectOf(e)}</code>}
                  {e.tenantId && <span class="muted"> · tenant {e.tenantId}</span>}
                </span>
              ),
            },
            { title: 'By', cell: actorOf },
            { title: 'Changed', cell: (e) => <Changes entry={e} /> },
          ]}
        />
        {pager}
      </section>
    </>
  );
}
