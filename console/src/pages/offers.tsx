// Issuance offers: the offer request as a form (one or more credential configurations, the flow,
// delivery as a URI or for the Digital Credentials API, claims per configuration, a transaction
// code, the authorization server, a webhook endpoint), JSON one click away; then the offer URI as a
// QR code for a wallet, and the session's status live.
import { useState } from 'preact/hooks';
import { api, asBody, result } from '../api.js';
import { formatDate, JsonBlock, Qr } from '../components.js';
import { FLOW_FORMS } from '../forms.js';
import { StatusBadge, useLiveStatus } from './live-session.js';
import { TemplatedRequest } from './request-form.js';

type Offer = NonNullable<Awaited<ReturnType<typeof createOffer>>['data']>;
const loadConfigurationIds = () =>
  result(api.GET('/api/issuer/credentials')).then(({ data, problem }) => ({ ids: data?.map((c) => c.id), problem }));
const createOffer = (body: unknown) => result(api.POST('/api/issuer/offer', { body: asBody('/api/issuer/offer', 'post', body) }));

/** The offer a new page starts with, valid as it stands (a browser test submits it unedited). */
const template = (configurationId: string) =>
  JSON.stringify(
    {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: [configurationId],
      credentialClaims: { [configurationId]: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann' } } },
    },
    null,
    2,
  );

export function OffersPage() {
  const [offer, setOffer] = useState<Offer & { txCode?: string }>();
  const status = useLiveStatus(offer?.session, 'active');

  const create = async (value: unknown) => {
    const { data, problem } = await createOffer(value);
    // The answer does not repeat the transaction code: the one sent is shown beside the QR code.
    const txCode = (value as { tx_code?: unknown }).tx_code;
    setOffer(data && { ...data, txCode: typeof txCode === 'string' ? txCode : undefined });
    return problem;
  };

  return (
    <>
      <h2>Issue a credential</h2>
      <TemplatedRequest
        label="offer request"
        choice="credentialConfigurationIds"
        loadIds={loadConfigurationIds}
        template={template}
        empty="No credential configuration yet: an offer needs one."
        fields={FLOW_FORMS.issuanceOffer.fields}
        submitLabel="Create offer"
        submit={create}
      />
      {offer && (
        <section class="card" aria-label="offer">
          <h3>
            Offer <StatusBadge status={status} />
          </h3>
          <Qr text={offer.uri} label="QR code of the credential offer" />
          <p>
            <code data-testid="offer-uri">{offer.uri}</code>
          </p>
          {offer.txCode && (
            <p>
              Transaction code: <strong data-testid="tx-code">{offer.txCode}</strong>
            </p>
          )}
          <p class="muted">
            Session <a href={`#/sessions/${encodeURIComponent(offer.session)}`}>{offer.session}</a>, valid until{' '}
            {formatDate(offer.expiresAt)}
          </p>
          {offer.dcApiRequest && (
            <details open>
              <summary>Digital Credentials API request</summary>
              <p class="muted">
                Pass it to navigator.credentials.create(&#123; digital: &#123; requests: [request] &#125; &#125;) on the page that offers
                the credential.
              </p>
              <JsonBlock value={offer.dcApiRequest} label="Digital Credentials API request" testId="dc-api-request" />
            </details>
          )}
          <details>
            <summary>Credential offer (JSON)</summary>
            <JsonBlock value={offer.credentialOffer} label="credential offer" testId="credential-offer" />
          </details>
        </section>
      )}
    </>
  );
}
