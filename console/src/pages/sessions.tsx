// Sessions: the paged list (filters by kind, status, configuration, creation dates and id, kept in the
// address), and one session with its live status, its log, its webhook deliveries, the claims a
// presentation verified, and for an issuance session each credential it issued with its status now
// (valid, suspended, revoked) and the actions that apply to it, each confirmed first.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { components, paths } from '../../../clients/typescript/index.js';
import { api, holds, type Problem, type Role, result, session } from '../api.js';
import { formatDate, Pager, ProblemView, Table, useConfirm } from '../components.js';
import { DeferredTransactions } from './deferred.js';
import { getSession, type SessionView, StatusBadge, useLiveStatus, useSessionDetails } from './live-session.js';
import { SessionDeliveries } from './session-deliveries.js';
import { VerifiedClaims } from './verified-claims.js';

const STATUSES = ['active', 'fetched', 'completed', 'expired', 'failed'] as const;
type SessionPage = components['schemas']['SessionPage'];
type SessionRow = SessionPage['items'][number];
type IssuedCredential = components['schemas']['SessionCredentialStatus'];
type ListQuery = NonNullable<paths['/api/session']['get']['parameters']['query']>;

/** Changing a credential's status, and deleting a session, need a manage role (as their routes do). */
const STATUS_ROLES: Role[] = ['issuance:manage'];
const DELETE_ROLES: Role[] = ['issuance:manage', 'presentation:manage'];
/** Completing or failing a deferred credential needs issuance:manage (as its routes do). */
const DEFERRED_ROLES: Role[] = ['issuance:manage'];

/**
 * The list's filters, kept in the address (#/sessions?status=completed&from=2030-01-01) so that a
 * filtered view can be bookmarked and shared: kind, status, configuration, created from/to (dates,
 * both days included), id (the start of a session id) and page.
 */
const FILTER_KEYS = ['kind', 'status', 'configuration', 'from', 'to', 'id', 'page'] as const;
type FilterKey = (typeof FILTER_KEYS)[number];
type Filters = Map<FilterKey, string>;

function filtersInAddress(): Filters {
  const query = new URLSearchParams(location.hash.split('?')[1] ?? '');
  return new Map(FILTER_KEYS.flatMap((key) => (query.get(key) ? [[key, query.get(key) as string] as const] : [])));
}

/** Shows the list with these filters: a new address, which the router renders (and the browser remembers). */
function showFilters(filters: Filters) {
  const query = new URLSearchParams([...filters].filter(([, value]) => value !== ''));
  location.hash = `#/sessions${query.size > 0 ? `?${query}` : ''}`;
}

/** The start of a day in the browser's time zone, as the API's RFC 3339 date-time. */
const startOfDay = (date: string, daysLater = 0) => {
  const day = new Date(`${date}T00:00:00`);
  day.setDate(day.getDate() + daysLater);
  return day.toISOString();
};

/** The API's query for the filters: `to` includes its whole day (createdTo excludes the moment). */
function listQuery(filters: Filters): ListQuery {
  const get = (key: FilterKey) => filters.get(key) || undefined;
  const from = get('from');
  const to = get('to');
  return {
    page: Number(get('page') ?? 1),
    pageSize: 25,
    status: get('status') as ListQuery['status'],
    type: get('kind') as ListQuery['type'],
    configurationId: get('configuration'),
    createdFrom: from && startOfDay(from),
    createdTo: to && startOfDay(to, 1),
    idPrefix: get('id'),
  };
}

/** The configurations a session is of, each linked to its detail page where the console has one. */
function Configurations({ row }: { row: SessionRow }) {
  const requested = row.type === 'presentation' ? (row.requestId ?? row.presentationConfigId) : undefined;
  if (requested) return <code>{requested}</code>;
  return (
    <>
      {(row.credentialConfigurationIds ?? []).map((id, i) => (
        <span key={id}>
          {i > 0 && ', '}
          <a href={`#/credential-configs/${encodeURIComponent(id)}`}>{id}</a>
        </span>
      ))}
    </>
  );
}

export function SessionsPage() {
  const filters = filtersInAddress();
  const key = [...filters].join('&');
  const [list, setList] = useState<SessionPage>();
  const [problem, setProblem] = useState<Problem>();

  // `key` stands for the filters, read from the address on every render: the list is fetched when they change.
  useEffect(() => {
    void result(api.GET('/api/session', { params: { query: listQuery(filters) } })).then(({ data, problem }) => {
      setProblem(problem);
      setList(data);
    });
  }, [key]);

  /** A changed filter starts again at page 1. */
  const set = (name: FilterKey, value: string) => {
    const next = new Map(filters);
    next.set(name, value);
    next.delete('page');
    showFilters(next);
  };
  const select = (name: FilterKey) => (e: Event) => set(name, (e.target as HTMLSelectElement | HTMLInputElement).value);

  return (
    <>
      <h2>Sessions</h2>
      <SessionSearch current={filters.get('id') ?? ''} onPrefix={(prefix) => set('id', prefix)} />
      <form class="session-filters" aria-label="session filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Kind
          <select value={filters.get('kind') ?? ''} onChange={select('kind')}>
            <option value="">any</option>
            <option value="issuance">issuance</option>
            <option value="presentation">presentation</option>
          </select>
        </label>
        <label>
          Status
          <select value={filters.get('status') ?? ''} onChange={select('status')}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Configuration
          <input value={filters.get('configuration') ?? ''} onChange={select('configuration')} placeholder="id" />
        </label>
        <label>
          Created from
          <input type="date" value={filters.get('from') ?? ''} onChange={select('from')} />
        </label>
        <label>
          Created to
          <input type="date" value={filters.get('to') ?? ''} onChange={select('to')} />
        </label>
        {filters.size > 0 && (
          <button type="button" class="secondary" onClick={() => showFilters(new Map())}>
            Clear filters
          </button>
        )}
      </form>
      <ProblemView problem={problem} />
      <section class="card">
        <p class="muted" role="status">
          {list ? `${list.total} session${list.total === 1 ? '' : 's'}` : 'Loading…'}
        </p>
        <Table
          label="sessions"
          rows={list?.items ?? []}
          empty="No session matches."
          columns={[
            { title: 'Session', cell: (s) => <a href={`#/sessions/${encodeURIComponent(s.id)}`}>{s.id}</a> },
            { title: 'Kind', cell: (s) => s.type },
            { title: 'Configuration', cell: (s) => <Configurations row={s} /> },
            { title: 'Status', cell: (s) => <StatusBadge status={s.status} /> },
            { title: 'Created', cell: (s) => formatDate(s.createdAt) },
            { title: 'Expires', cell: (s) => formatDate(s.expiresAt) },
          ]}
        />
        <Pager
          page={list?.page ?? 1}
          pages={list?.totalPages ?? 1}
          onPage={(page) => showFilters(new Map([...filters, ['page', String(page)]]))}
        />
      </section>
    </>
  );
}

/** Finds sessions by id: a whole id that exists opens its session; anything else lists the sessions starting with it. */
function SessionSearch({ current, onPrefix }: { current: string; onPrefix: (prefix: string) => void }) {
  const [text, setText] = useState(current);
  useEffect(() => setText(current), [current]);
  const search = async (e: Event) => {
    e.preventDefault();
    const wanted = text.trim();
    if (wanted && (await getSession(wanted)).data) {
      location.hash = `#/sessions/${encodeURIComponent(wanted)}`;
      return;
    }
    onPrefix(wanted);
  };
  return (
    <form class="row session-search" aria-label="find a session" onSubmit={search}>
      <label>
        Session id
        <input value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} placeholder="whole id or its start" />
      </label>
      <button type="submit">Find</button>
    </form>
  );
}

/**
 * Each sets a configuration's credentials to a status, offered where it applies: Revoke and Suspend
 * while one of them is valid, Reinstate while one is suspended. Nothing undoes a revocation.
 */
const STATUS_ACTIONS = [
  { value: 1, appliesTo: 'valid', label: 'Revoke', done: 'Revoked', question: 'Revoke', danger: true },
  { value: 2, appliesTo: 'valid', label: 'Suspend', done: 'Suspended', question: 'Suspend', danger: true },
  { value: 0, appliesTo: 'suspended', label: 'Reinstate', done: 'Reinstated', question: 'Reinstate (make valid again)', danger: false },
] as const;

export function SessionPage({ id }: { id: string }) {
  const [stored, setStored] = useState<SessionView>();
  const status = useLiveStatus(id, stored?.status);
  const details = useSessionDetails(id, status);
  const [issued, setIssued] = useState<IssuedCredential[]>();
  const [logs, setLogs] = useState<components['schemas']['SessionLogEntry'][]>();
  const [problem, setProblem] = useState<Problem>();
  const [notice, setNotice] = useState<string>();
  const [deleted, setDeleted] = useState(false);
  const { confirm, dialog } = useConfirm();
  const who = session();
  const path = { params: { path: { id } } };

  const loadIssued = useCallback(async () => {
    if (!holds(session(), STATUS_ROLES)) return;
    const reply = await result(api.GET('/api/session/{id}/credentials', { params: { path: { id } } }));
    setIssued(reply.data);
    if (reply.problem) setProblem(reply.problem);
  }, [id]);
  useEffect(() => {
    void getSession(id).then(({ data, problem }) => {
      setProblem(problem);
      setStored(data);
    });
  }, [id]);
  useEffect(() => {
    if (details?.type === 'issuance') void loadIssued();
  }, [details?.type, details?.status, loadIssued]);

  /** Sets the status of the session's credentials of `configurationId` (the API changes them per configuration). */
  const setCredentialStatus = async (action: (typeof STATUS_ACTIONS)[number], configurationId: string, count: number) => {
    const credentials = (n: number) => `${n} credential${n === 1 ? '' : 's'} of ${configurationId}`;
    if (!(await confirm(`${action.question} the ${credentials(count)} issued in this session?`, action.label))) return;
    const reply = await result(
      api.POST('/api/session/revoke', { body: { sessionId: id, status: action.value, credentialConfigurationId: configurationId } }),
    );
    setProblem(reply.problem);
    setNotice(reply.data ? `${action.done}: ${credentials(reply.data.updatedEntries)}` : undefined);
    await loadIssued();
  };
  const remove = async () => {
    if (!(await confirm(`Delete session ${id} with its log? This cannot be undone.`, 'Delete session'))) return;
    const reply = await result(api.DELETE('/api/session/{id}', path));
    setProblem(reply.problem);
    if (!reply.problem) setDeleted(true);
  };

  if (deleted) {
    return (
      <>
        <h2>Session deleted</h2>
        <p class="notice" role="status">
          Session <code>{id}</code> and its log were deleted. <a href="#/sessions">Back to the sessions</a>
        </p>
      </>
    );
  }
  const byConfiguration = groupBy(issued ?? [], (c) => c.credentialConfigurationId);
  return (
    <>
      <h2>
        Session <code>{id}</code> <StatusBadge status={status} />
      </h2>
      <ProblemView problem={problem} />
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <dl class="facts">
        <dt>Kind</dt>
        <dd>{details?.type ?? '…'}</dd>
        <dt>Created</dt>
        <dd>{formatDate(details?.createdAt)}</dd>
        <dt>Expires</dt>
        <dd>{formatDate(details?.expiresAt)}</dd>
        {details?.credentialConfigurationIds && (
          <>
            <dt>Offered</dt>
            <dd>
              <Configurations row={details} />
            </dd>
          </>
        )}
        {details?.type === 'presentation' && (
          <>
            <dt>Requested</dt>
            <dd>
              <Configurations row={details} />
            </dd>
          </>
        )}
        {details?.errorReason && (
          <>
            <dt>Failed because</dt>
            <dd>{details.errorReason}</dd>
          </>
        )}
        {details?.responseCodeRequired && (
          <>
            <dt>Verified claims</dt>
            <dd>
              {/* OpenID4VP 1.0 section 13.3: only the holder of the redirect's response_code gets the result. */}
              Answered through a redirect: released only with its response_code (POST /api/verifier/result)
              {details.resultReleasedAt ? `, released ${formatDate(details.resultReleasedAt)}` : ', not released yet'}
            </dd>
          </>
        )}
      </dl>
      {details?.type === 'issuance' && holds(who, STATUS_ROLES) && (
        <section class="card" aria-label="issued credentials">
          <h3>Issued credentials</h3>
          {issued && issued.length === 0 && (
            <p class="muted">None with a status: nothing was issued yet, or the configuration has no status management.</p>
          )}
          {[...byConfiguration].map(([configurationId, credentials]) => (
            <div key={configurationId}>
              <Table
                label={`credentials of ${configurationId}`}
                rows={credentials}
                columns={[
                  { title: 'Configuration', cell: (c) => c.credentialConfigurationId },
                  { title: 'Status', cell: (c) => <span class={`credential-${c.state}`}>{c.state}</span> },
                  { title: 'Status list entry', cell: (c) => `${c.statusListId} #${c.index}` },
                ]}
              />
              <div class="row">
                {STATUS_ACTIONS.filter((action) => credentials.some((c) => c.state === action.appliesTo)).map((action) => (
                  <button
                    type="button"
                    key={action.value}
                    class={action.danger ? 'danger' : 'secondary'}
                    onClick={() => setCredentialStatus(action, configurationId, credentials.length)}
                  >
                    {action.label} {configurationId}
                  </button>
                ))}
              </div>
            </div>
          ))}
        </section>
      )}
      {details?.type === 'issuance' && holds(who, DEFERRED_ROLES) && <DeferredTransactions sessionId={id} onChange={loadIssued} />}
      {details?.type === 'presentation' && details.credentials && <VerifiedClaims credentials={details.credentials} />}
      <SessionDeliveries sessionId={id} />
      <div class="row">
        <button
          type="button"
          class="secondary"
          onClick={() => result(api.GET('/api/session/{id}/logs', path)).then(({ data }) => setLogs(data))}
        >
          Show log
        </button>
        {holds(who, DELETE_ROLES) && (
          <button type="button" class="danger" onClick={remove}>
            Delete session
          </button>
        )}
      </div>
      {logs && (
        <Table
          label="session log"
          rows={logs}
          columns={[
            { title: 'When', cell: (l) => formatDate(l.createdAt) },
            { title: 'Level', cell: (l) => l.level },
            { title: 'Message', cell: (l) => l.message },
          ]}
          empty="The log is empty."
        />
      )}
      <details>
        <summary>Session as stored (JSON)</summary>
        <pre>{JSON.stringify(details, null, 2)}</pre>
      </details>
      {dialog}
    </>
  );
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}
