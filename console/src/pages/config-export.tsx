// A tenant's configuration as import files (GET /api/config/export, tenants:manage), saved as one JSON
// file: `files` (path -> content, the layout CONFIG_IMPORT reads) and `environment` (the variables its
// secret references name). The service has no import route: the files are read at start-up.
import { useState } from 'preact/hooks';
import { api, type Problem, result } from '../api.js';
import { ProblemView, saveAs } from '../components.js';

export function ConfigExport({ tenantId }: { tenantId: string }) {
  const [problem, setProblem] = useState<Problem>();
  const exportConfig = async () => {
    const { data, problem } = await result(api.GET('/api/config/export', { params: { query: { tenantId } } }));
    setProblem(problem);
    if (data) saveAs(JSON.stringify(data, null, 2), `${tenantId}-config.json`, 'application/json');
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
