// Where the tenant stands against OpenID4VC HAIP 1.0 (issuance:manage or presentation:manage): the
// report of GET /api/conformance, one row per requirement with its section, what judged it and the
// setting, configuration or key chain that fails. Not-met rows first, since they are what to fix.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type Problem, result } from '../api.js';
import { ProblemView, Table } from '../components.js';

type Report = NonNullable<Awaited<ReturnType<typeof loadReport>>['data']>;
type Status = Report['requirements'][number]['status'];
const loadReport = () => result(api.GET('/api/conformance', { params: { query: { profile: 'haip-1.0' } } }));

const ORDER: Status[] = ['not-met', 'met', 'not-applicable'];
const LABEL: Record<Status, string> = { met: 'Met', 'not-met': 'Not met', 'not-applicable': 'Not applicable' };

export function ConformancePage() {
  const [report, setReport] = useState<Report>();
  const [problem, setProblem] = useState<Problem>();
  const [onlyNotMet, setOnlyNotMet] = useState(false);
  const load = useCallback(async () => {
    const { data, problem } = await loadReport();
    setReport(data);
    setProblem(problem);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const requirements = report?.requirements ?? [];
  const count = (status: Status) => requirements.filter((r) => r.status === status).length;
  const rows = requirements
    .filter((r) => !onlyNotMet || r.status === 'not-met')
    .sort((a, b) => ORDER.indexOf(a.status) - ORDER.indexOf(b.status));

  return (
    <>
      <h2>HAIP 1.0 conformance</h2>
      <p class="muted">
        Each normative requirement of the OpenID4VC High Assurance Interoperability Profile 1.0 for an issuer or a verifier, judged on this
        tenant's live configuration. Set <code>profile</code> to <code>haip-1.0</code> in the issuer settings to have the tenant refuse what
        would break the rules it enforces.
      </p>
      <ProblemView problem={problem} />
      {report && (
        <section class="card" aria-label="conformance summary">
          <p role="status">{ORDER.map((status) => `${LABEL[status]}: ${count(status)}`).join(' · ')}</p>
          <div class="row">
            <label>
              <input type="checkbox" checked={onlyNotMet} onChange={(e) => setOnlyNotMet((e.target as HTMLInputElement).checked)} /> Only
              requirements not met
            </label>
            <button type="button" class="secondary" onClick={() => void load()}>
              Refresh
            </button>
          </div>
          <Table
            label="conformance requirements"
            rows={rows}
            empty="Every requirement is met or not applicable."
            columns={[
              { title: 'Status', cell: (r) => <span class={`status-${r.status}`}>{LABEL[r.status]}</span> },
              { title: 'Requirement', cell: (r) => r.requirement },
              { title: 'Section', cell: (r) => r.section },
              { title: 'Role', cell: (r) => r.role },
              { title: 'Detail', cell: (r) => r.detail },
            ]}
          />
        </section>
      )}
    </>
  );
}
