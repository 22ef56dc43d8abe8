// Sessions: the paged list (filters by status and kind), and one session with its live status, its
// log and the revocation of what it issued.
import { useEffect, useState } from 'preact/hooks';
import { call, type Problem } from '../api.js';
import { formatDate, Pager, ProblemView, Table } from '../components.js';
import { StatusBadge, useLiveStatus, useSessionDetails } from './live-session.js';

const STATUSES = ['', 'active', 'fetched', 'completed', 'expired', 'failed'];

export function SessionsPage() {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState('');
  const [type, setType] = useState('');
  const [result, setResult] = useState<{ items: any[]; totalPages: number; total: number }>();
  const [problem, setProblem] = useState<Problem>();
  /** A new filter starts again at the first page. */
  const choose = (set: (value: string) => void, value: string) => {
    setPage(1);
    set(value);
  };

  useEffect(() => {
    const query = new URLSearchParams({ page: String(page), pageSize: '25', ...(status && { status }), ...(type && { type }) });
    void call('GET', `/api/session?${query}`).then(({ data, problem }) => {
      setProblem(problem);
      setResult(data);
    });
  }, [page, status, type]);

  return (
    <>
      <h2>Sessions</h2>
      <div class="row">
        <label>
          Status
          <select value={status} onChange={(e) => choose(setStatus, (e.target as HTMLSelectElement).value)}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s || 'any'}
              </option>
            ))}
          </select>
        </label>
        <label>
          Kind
          <select value={type} onChange={(e) => choose(setType, (e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            <option value="issuance">issuance</option>
            <option value="presentation">presentation</option>
          </select>
        </label>
      </div>
      <ProblemView problem={problem} />
      <section class="card">
        <Table
          rows={result?.items ?? []}
          columns={[
            { title: 'Session', cell: (s) => <a href={`#/sessions/${encodeURIComponent(s.id)}`}>{s.id}</a> },
            { title: 'Status', cell: (s) => <StatusBadge status={s.status} /> },
            { title: 'Kind', cell: (s) => (s.requestId ? 'presentation' : 'issuance') },
            { title: 'Created', cell: (s) => formatDate(s.createdAt) },
          ]}
        />
        <Pager page={page} pages={result?.totalPages ?? 1} onPage={setPage} />
      </section>
    </>
  );
}

export function SessionPage({ id }: { id: string }) {
  const [initial, setInitial] = useState<string>();
  const status = useLiveStatus(id, initial);
  const details = useSessionDetails(id, status);
  const [logs, setLogs] = useState<unknown>();
  const [problem, setProblem] = useState<Problem>();
  const [notice, setNotice] = useState<string>();

  useEffect(() => {
    void call('GET', `/api/session/${encodeURIComponent(id)}`).then(({ data, problem }) => {
      setProblem(problem);
      setInitial(data?.status);
    });
  }, [id]);

  const setCredentialStatus = async (value: 0 | 1 | 2) => {
    const { problem } = await call('POST', '/api/session/revoke', { sessionId: id, status: value });
    setProblem(problem);
    setNotice(problem ? undefined : ['Reinstated', 'Revoked', 'Suspended'][value]);
  };

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
      <div class="row">
        <button type="button" class="danger" onClick={() => setCredentialStatus(1)}>
          Revoke credentials
        </button>
        <button type="button" class="secondary" onClick={() => setCredentialStatus(2)}>
          Suspend
        </button>
        <button type="button" class="secondary" onClick={() => setCredentialStatus(0)}>
          Reinstate
        </button>
        <button
          type="button"
          class="secondary"
          onClick={() => call('GET', `/api/session/${encodeURIComponent(id)}/logs`).then(({ data }) => setLogs(data))}
        >
          Show log
        </button>
      </div>
      {logs !== undefined && <pre>{JSON.stringify(logs, null, 2)}</pre>}
      <h3>Details</h3>
      <pre>{JSON.stringify(details, null, 2)}</pre>
    </>
  );
}
