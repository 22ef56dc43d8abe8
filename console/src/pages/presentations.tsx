// Presentation requests: the request as a form (the presentation configuration, delivery as a URI,
// over the Digital Credentials API or as an ISO 18013-7 Annex C request, the verifier's options:
// client id prefix, response mode, request_uri method, redirect, transaction data, webhook), JSON one
// click away; then the request URI as a QR code (or the Digital Credentials API request), and the
// verified claims when the wallet has answered.
import { useState } from 'preact/hooks';
import { api, asBody, result } from '../api.js';
import { CopyButton, JsonBlock } from '../components.js';
import { FLOW_FORMS } from '../forms.js';
import { useLiveStatus, useSessionDetails } from './live-session.js';
import { TemplatedRequest } from './request-form.js';
import { ResultCard } from './result-card.js';

type Request = NonNullable<Awaited<ReturnType<typeof createRequest>>['data']>;
const loadConfigurationIds = () =>
  result(api.GET('/api/verifier/config')).then(({ data, problem }) => ({ ids: data?.map((c) => c.id), problem }));
const createRequest = (body: unknown) => result(api.POST('/api/verifier/offer', { body: asBody('/api/verifier/offer', 'post', body) }));

/** The request a new page starts with, valid as it stands (a browser test submits it unedited). */
const template = (requestId: string) => JSON.stringify({ response_type: 'uri', requestId }, null, 2);

export function PresentationsPage() {
  const [request, setRequest] = useState<Request>();
  const status = useLiveStatus(request?.session, 'active');
  const details = useSessionDetails(request?.session, status);

  const create = async (value: unknown) => {
    const { data, problem } = await createRequest(value);
    setRequest(data);
    return problem;
  };

  return (
    <>
      <h2>Request a presentation</h2>
      <TemplatedRequest
        label="presentation request form"
        choice="requestId"
        loadIds={loadConfigurationIds}
        template={template}
        empty="No presentation configuration yet: a request needs one."
        fields={FLOW_FORMS.presentationRequest.fields}
        submitLabel="Create request"
        submit={create}
      />
      {request && (
        <ResultCard
          key={request.session}
          label="presentation request"
          title="Request"
          session={request.session}
          expiresAt={request.expiresAt}
          status={status}
          uri={
            request.uri
              ? { text: request.uri, name: 'request URI', testId: 'request-uri', qrLabel: 'QR code of the presentation request' }
              : undefined
          }
          used="Used: the wallet has presented its credentials."
        >
          {request.dcApiRequest && (
            <details open>
              <summary>Digital Credentials API request ({request.dcApiRequest.protocol})</summary>
              <p class="muted">
                Pass it to navigator.credentials.get(&#123; digital: &#123; requests: [request] &#125; &#125;) on the page at the expected
                origin, and post the wallet's response to <code>{request.responseUri}</code>.
              </p>
              <JsonBlock value={request.dcApiRequest} label="Digital Credentials API request" testId="dc-api-request" />
              <CopyButton text={JSON.stringify(request.dcApiRequest, null, 2)} label="Digital Credentials API request" />
            </details>
          )}
          {details?.errorReason && <p class="problem">{details.errorReason}</p>}
          {details?.status === 'completed' && (
            <>
              <h4>Verified claims</h4>
              <pre data-testid="verified-claims">{JSON.stringify(details.credentials ?? details, null, 2)}</pre>
            </>
          )}
        </ResultCard>
      )}
    </>
  );
}
