// Settings that are one object per tenant (GET and PUT, DELETE resets to the defaults), and the
// audit log.
import { useEffect, useState } from 'preact/hooks';
import { call, type Problem } from '../api.js';
import { formatDate, JsonEditor, ProblemView, parsedJson, Table, usePaged } from '../components.js';

export function SettingsPage({ title, path, resettable }: { title: string; path: string; resettable?: boolean }) {
  const [body, setBody] = useState('');
  const [problem, setProblem] = useState<Problem>();
  const [saved, setSaved] = useState(false);
  const load = () =>
    call('GET', path).then(({ data, problem }) => {
      setProblem(problem);
      setBody(JSON.stringify(data ?? {}, null, 2));
    });
  useEffect(() => {
    setSaved(false);
    void load();
  }, [path]);

  const save = async (e: Event) => {
    e.preventDefault();
    const parsed = parsedJson(body);
    if (!parsed) return;
    const { problem } = await call('PUT', path, parsed.value);
    setProblem(problem);
    setSaved(!problem);
  };
  const reset = async () => {
    const { problem } = await call('DELETE', path);
    setProblem(problem);
    if (!problem) await load();
  };

  return (
    <>
      <h2>{title}</h2>
      <section class="card">
        <form onSubmit={save}>
          <JsonEditor
            label="Settings (JSON)"
            value={body}
            onInput={(v) => {
              setSaved(false);
              setBody(v);
            }}
            problem={problem}
          />
          <ProblemView problem={problem} />
          {saved && (
            <p class="notice" role="status">
              Saved
            </p>
          )}
          <div class="row">
            <button type="submit">Save</button>
            {resettable && (
              <button type="button" class="secondary" onClick={reset}>
                Reset to defaults
              </button>
            )}
          </div>
        </form>
      </section>
    </>
  );
}

export function AuditPage() {
  const [rows, setRows] = useState<any[]>([]);
  const [problem, setProblem] = useState<Problem>();
  const { shown, pager } = usePaged(rows);
  useEffect(() => {
    void call('GET', '/api/admin/audit-logs?limit=500').then(({ data, problem }) => {
      setProblem(problem);
      setRows(Array.isArray(data) ? data : []);
    });
  }, []);
  return (
    <>
      <h2>Audit log</h2>
      <ProblemView problem={problem} />
      <section class="card">
        <Table
          rows={shown}
          columns={[
            { title: 'When', cell: (e) => formatDate(e.timestamp) },
            { title: 'Action', cell: (e) => <code>{e.actionType}</code> },
            { title: 'By', cell: (e) => e.actorDisplay ?? e.actorId },
            { title: 'Changed', cell: (e) => (e.changedFields ?? []).join(', ') },
          ]}
        />
        {pager}
      </section>
    </>
  );
}
