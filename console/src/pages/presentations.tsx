// Presentation requests: a presentation configuration, the request URI as a QR code, and the
// verified claims when the wallet has answered.
import { useState } from 'preact/hooks';
import { api, type Problem, result } from '../api.js';
import { ProblemView, Qr, useConfigurationChoice } from '../components.js';
import { StatusBadge, useLiveStatus, useSessionDetails } from './live-session.js';

const listConfigurations = () => result(api.GET('/api/verifier/config'));

export function PresentationsPage() {
  const { chosen: requestId, select, loadProblem } = useConfigurationChoice(listConfigurations, 'Presentation configuration');
  const [problem, setProblem] = useState<Problem>();
  const [request, setRequest] = useState<{ uri: string; session: string }>();
  const status = useLiveStatus(request?.session, 'active');
  const details = useSessionDetails(request?.session, status);

  const create = async (e: Event) => {
    e.preventDefault();
    const { data, problem } = await result(api.POST('/api/verifier/offer', { body: { response_type: 'uri', requestId } }));
    setProblem(problem);
    setRequest(data?.uri ? { uri: data.uri, session: data.session } : undefined);
  };

  return (
    <>
      <h2>Request a presentation</h2>
      <section class="card">
        <form onSubmit={create}>
          {select}
          <ProblemView problem={problem ?? loadProblem} />
          <div class="row">
            <button type="submit" disabled={!requestId}>
              Create request
            </button>
          </div>
        </form>
      </section>
      {request && (
        <section class="card" aria-label="presentation request">
          <h3>
            Request <StatusBadge status={status} />
          </h3>
          <Qr text={request.uri} label="QR code of the presentation request" />
          <p>
            <code data-testid="request-uri">{request.uri}</code>
          </p>
          <p class="muted">
            Session <a href={`#/sessions/${encodeURIComponent(request.session)}`}>{request.session}</a>
          </p>
          {details?.errorReason && <p class="problem">{details.errorReason}</p>}
          {details?.status === 'completed' && (
            <>
              <h4>Verified claims</h4>
              <pre data-testid="verified-claims">{JSON.stringify(details.credentials ?? details, null, 2)}</pre>
            </>
          )}
        </section>
      )}
    </>
  );
}
