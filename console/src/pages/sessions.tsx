// Sessions: the paged list (filters by status and kind), and one session with its live status, its
// log, and for an issuance session each credential it issued with its status now (valid, suspended,
// revoked) and the actions that change it, each confirmed first. A presentation session issued
// nothing: it has no such actions.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/index.js';
import { api, holds, type Problem, type Role, result, session } from '../api.js';
import { formatDate, Pager, ProblemView, Table, useConfirm } from '../components.js';
import { DeferredTransactions } from './deferred.js';
import { getSession, type SessionView, StatusBadge, useLiveStatus, useSessionDetails } from './live-session.js';

const STATUSES = ['', 'active', 'fetched', 'completed', 'expired', 'failed'] as const;
type StatusFilter = (typeof STATUSES)[number];
type KindFilter = '' | 'issuance' | 'presentation';
type SessionPage = components['schemas']['SessionPage'];
type IssuedCredential = components['schemas']['SessionCredentialStatus'];

/** Changing a credential's status, and deleting a session, need a manage role (as their routes do). */
const STATUS_ROLES: Role[] = ['issuance:manage'];
const DELETE_ROLES: Role[] = ['issuance:manage', 'presentation:manage'];
/** Completing or failing a deferred credential needs issuance:manage (as its routes do). */
const DEFERRED_ROLES: Role[] = ['issuance:manage'];

export function SessionsPage() {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<StatusFilter>('');
  const [type, setType] = useState<KindFilter>('');
  const [list, setList] = useState<SessionPage>();
  const [problem, setProblem] = useState<Problem>();

  useEffect(() => {
    const query = { page, pageSize: 25, ...(status && { status }), ...(type && { type }) };
    void result(api.GET('/api/session', { params: { query } })).then(({ data, problem }) => {
      setProblem(problem);
      setList(data);
    });
  }, [page, status, type]);

  return (
    <>
      <h2>Sessions</h2>
      <div class="row">
        <label>
          Status
          <select
            value={status}
            onChange={(e) => {
              setPage(1);
              setStatus((e.target as HTMLSelectElement).value as StatusFilter);
            }}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s || 'any'}
              </option>
            ))}
          </select>
        </label>
        <label>
          Kind
          <select
            value={type}
            onChange={(e) => {
              setPage(1);
              setType((e.target as HTMLSelectElement).value as KindFilter);
            }}
          >
            <option value="">any</option>
            <option value="issuance">issuance</option>
            <option value="presentation">presentation</option>
          </select>
        </label>
      </div>
      <ProblemView problem={problem} />
      <section class="card">
        <Table
          label="sessions"
          rows={list?.items ?? []}
          columns={[
            { title: 'Session', cell: (s) => <a href={`#/sessions/${encodeURIComponent(s.id)}`}>{s.id}</a> },
            { title: 'Status', cell: (s) => <StatusBadge status={s.status} /> },
            { title: 'Kind', cell: (s) => s.type },
            { title: 'Created', cell: (s) => formatDate(s.createdAt) },
          ]}
        />
        <Pager page={page} pages={list?.totalPages ?? 1} onPage={setPage} />
      </section>
    </>
  );
}

/** Each sets a configuration's credentials to `state`: offered while one of them is in another state. */
const STATUS_ACTIONS = [
  { value: 1, state: 'revoked', label: 'Revoke', done: 'Revoked', question: 'Revoke', danger: true },
  { value: 2, state: 'suspended', label: 'Suspend', done: 'Suspended', question: 'Suspend', danger: true },
  { value: 0, state: 'valid', label: 'Reinstate', done: 'Reinstated', question: 'Reinstate (make valid again)', danger: false },
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
            <dd>{details.credentialConfigurationIds.join(', ')}</dd>
          </>
        )}
        {details?.presentationConfigId && (
          <>
            <dt>Requested</dt>
            <dd>{details.presentationConfigId}</dd>
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
                {STATUS_ACTIONS.filter((action) => credentials.some((c) => c.state !== action.state)).map((action) => (
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
      {details?.type === 'presentation' && details.credentials && (
        <section class="card" aria-label="verified claims">
          <h3>Verified claims</h3>
          <pre>{JSON.stringify(details.credentials, null, 2)}</pre>
        </section>
      )}
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
