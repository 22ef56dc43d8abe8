// The tenant's caches on this instance (issuance:manage or presentation:manage): how full each is and
// how often it answered, and clearing them, all or one kind (after a change made outside the service,
// say a trust list's source). Clearing only costs the next reads their fetch or signature.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type Problem, result } from '../api.js';
import { ProblemView, Table, useConfirm } from '../components.js';

type Stats = NonNullable<Awaited<ReturnType<typeof loadStats>>['data']>;
const loadStats = () => result(api.GET('/api/cache/stats'));

const CACHES: { key: keyof Stats; label: string }[] = [
  { key: 'statusList', label: 'Status lists this service signs' },
  { key: 'fetchedStatusList', label: 'Status lists fetched to verify presentations' },
  { key: 'trustList', label: 'Trust lists' },
];

const CLEARS = [
  { label: 'Clear all caches', what: 'every cache', run: () => result(api.DELETE('/api/cache')) },
  { label: 'Clear the status list cache', what: 'the status list cache', run: () => result(api.DELETE('/api/cache/status-list')) },
  { label: 'Clear the trust list cache', what: 'the trust list cache', run: () => result(api.DELETE('/api/cache/trust-list')) },
];

export function CachesPage() {
  const [stats, setStats] = useState<Stats>();
  const [problem, setProblem] = useState<Problem>();
  const [notice, setNotice] = useState<string>();
  const { confirm, dialog } = useConfirm();
  const load = useCallback(async () => {
    const { data, problem } = await loadStats();
    setStats(data);
    setProblem(problem);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const clear = async (which: (typeof CLEARS)[number]) => {
    if (!(await confirm(`Clear ${which.what} of this tenant on this instance? The next reads fetch or sign again.`, 'Clear'))) return;
    const { problem } = await which.run();
    setProblem(problem);
    setNotice(problem ? undefined : `Cleared ${which.what}`);
    await load();
  };

  return (
    <>
      <h2>Caches</h2>
      <p class="muted">Entries are this tenant's; hits and misses count on this instance since it started.</p>
      <ProblemView problem={problem} />
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <section class="card">
        {stats && (
          <Table
            label="cache statistics"
            rows={CACHES.map((c) => ({ ...c, ...stats[c.key] }))}
            columns={[
              { title: 'Cache', cell: (c) => c.label },
              { title: 'Entries', cell: (c) => `${c.entries} / ${c.maxEntries}` },
              { title: 'Hits', cell: (c) => c.hits },
              { title: 'Misses', cell: (c) => c.misses },
            ]}
          />
        )}
        <div class="row">
          <button type="button" class="secondary" onClick={() => void load()}>
            Refresh
          </button>
          {CLEARS.map((c) => (
            <button type="button" class="danger" key={c.label} onClick={() => clear(c)}>
              {c.label}
            </button>
          ))}
        </div>
      </section>
      {dialog}
    </>
  );
}
