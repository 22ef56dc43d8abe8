// A tenant's configuration as import files (GET /api/config/export?format=tar, tenants:manage), saved
// as `<tenant>-config.tar`: the folder CONFIG_IMPORT reads, with `<tenant>/environment.txt` naming the
// variables its secret references need. The service has no import route: the files are read at start-up.
import { useState } from 'preact/hooks';
import { api, type Problem, result } from '../api.js';
import { ProblemView, saveAs } from '../components.js';

export function ConfigExport({ tenantId }: { tenantId: string }) {
  const [problem, setProblem] = useState<Problem>();
  const exportConfig = async () => {
    const { data, problem } = await result(
      api.GET('/api/config/export', { params: { query: { tenantId, format: 'tar' } }, parseAs: 'blob' }),
    );
    setProblem(problem);
    if (data) saveAs(data as Blob, `${tenantId}-config.tar`, 'application/x-tar');
  };
  return (
    <div class="downloads">
      <button type="button" class="secondary" aria-label={`Export the configuration of ${tenantId}`} onClick={exportConfig}>
        Export
      </button>
      <ProblemView problem={problem} />
    </div>
  );
}
