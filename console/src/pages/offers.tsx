// Issuance offers: the offer request as a form (one or more credential configurations, the flow,
// delivery as a URI or for the Digital Credentials API, a transaction code, the authorization server,
// a webhook endpoint) and, per chosen configuration, its claims as typed inputs built from its fields
// (or from an attribute provider); the JSON of the whole request one click away. Then the offer URI
// as a QR code for a wallet, and the session's status live.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/index.js';
import { api, asBody, type Problem, type RequestBody, result } from '../api.js';
import { CopyButton, JsonBlock, parsedJson } from '../components.js';
import { FLOW_FORMS } from '../forms.js';
import { JsonField } from './body-form.js';
import { ClaimsInputs, claimTree, showsErrorAt } from './claims-form.js';
import { useLiveStatus } from './live-session.js';
import { type MoreFields, TemplatedRequest } from './request-form.js';
import { ResultCard } from './result-card.js';

type Offer = NonNullable<Awaited<ReturnType<typeof createOffer>>['data']>;
type Configuration = components['schemas']['CredentialConfiguration'];
type Body = Record<string, unknown>;
const createOffer = (body: unknown) => result(api.POST('/api/issuer/offer', { body: asBody('/api/issuer/offer', 'post', body) }));
const loadProviderIds = () => result(api.GET('/api/issuer/attribute-providers')).then(({ data }) => data?.map((p) => p.id) ?? []);

/**
 * The offer a new page starts with, valid as it stands (a browser test submits it unedited): the
 * claims are added by the typed inputs, from the configuration's default values.
 */
const template = (configurationId: string) =>
  JSON.stringify({ response_type: 'uri', flow: 'pre_authorized_code', credentialConfigurationIds: [configurationId] }, null, 2);

// The claims are edited by configuration below the form (OfferClaims), not as one JSON field.
const offerFields = FLOW_FORMS.issuanceOffer.fields.filter((field) => field.path !== 'credentialClaims');

const isObject = (value: unknown): value is Body => typeof value === 'object' && value !== null && !Array.isArray(value);
const hasFields = (config?: Configuration) => (config?.fields?.length ?? 0) > 0;
/**
 * A chosen configuration starts with claims entered here (its fields' default values, or an empty
 * JSON object where it has no fields), unless its own attribute provider supplies them.
 */
const startsWithValues = (config?: Configuration) => config !== undefined && !config.attributeProviderId;

/** Whether an error of the API (`body.credentialClaims.{id}.claims.address.street`) is on a typed claim input. */
function isOnTypedClaim(configurations: Map<string, Configuration>, field: string) {
  const [, id = '', path = ''] = /^body\.credentialClaims\.([^.]+)\.claims\.(.+)$/.exec(field) ?? [];
  const fields = configurations.get(id)?.fields ?? [];
  return fields.length > 0 && showsErrorAt(claimTree(fields).root, path.split('.'));
}

export function OffersPage() {
  const [offer, setOffer] = useState<Offer & { txCode?: string }>();
  const status = useLiveStatus(offer?.session, 'active');
  const [configurations, setConfigurations] = useState(new Map<string, Configuration>());
  const [providers, setProviders] = useState<string[]>([]);
  useEffect(() => void loadProviderIds().then(setProviders), []);
  // The list holds each configuration whole, fields included: no request per configuration.
  const loadIds = useCallback(
    () =>
      result(api.GET('/api/issuer/credentials')).then(({ data, problem }) => {
        setConfigurations(new Map((data ?? []).map((c) => [c.id, c])));
        return { ids: data?.map((c) => c.id), problem };
      }),
    [],
  );

  const create = async (value: unknown) => {
    const { data, problem } = await createOffer(value);
    // The answer does not repeat the transaction code: the one sent is shown beside the QR code.
    const txCode = (value as { tx_code?: unknown }).tx_code;
    setOffer(data && { ...data, txCode: typeof txCode === 'string' ? txCode : undefined });
    return problem;
  };

  const claims: MoreFields = {
    render: (body, onBody, problem) => (
      <OfferClaims body={body} onBody={onBody} problem={problem} configurations={configurations} providers={providers} />
    ),
    shows: (field) => isOnTypedClaim(configurations, field),
  };

  return (
    <>
      <h2>Issue a credential</h2>
      <TemplatedRequest
        label="offer request"
        choice="credentialConfigurationIds"
        loadIds={loadIds}
        template={template}
        empty="No credential configuration yet: an offer needs one."
        fields={offerFields}
        moreFields={claims}
        submitLabel="Create offer"
        submit={create}
      />
      {offer && (
        <ResultCard
          key={offer.session}
          label="offer"
          title="Offer"
          session={offer.session}
          expiresAt={offer.expiresAt}
          status={status}
          uri={{ text: offer.uri, name: 'offer URI', testId: 'offer-uri', qrLabel: 'QR code of the credential offer' }}
          used="Used: the wallet has received the credential."
        >
          {offer.txCode && (
            <p>
              Transaction code: <strong data-testid="tx-code">{offer.txCode}</strong>{' '}
              <CopyButton text={offer.txCode} label="transaction code" />
            </p>
          )}
          {offer.dcApiRequest && (
            <details open>
              <summary>Digital Credentials API request</summary>
              <p class="muted">
                Pass it to navigator.credentials.create(&#123; digital: &#123; requests: [request] &#125; &#125;) on the page that offers
                the credential.
              </p>
              <JsonBlock value={offer.dcApiRequest} label="Digital Credentials API request" testId="dc-api-request" />
              <CopyButton text={JSON.stringify(offer.dcApiRequest, null, 2)} label="Digital Credentials API request" />
            </details>
          )}
          <details>
            <summary>Credential offer (JSON)</summary>
            <JsonBlock value={offer.credentialOffer} label="credential offer" testId="credential-offer" />
            <CopyButton text={JSON.stringify(offer.credentialOffer, null, 2)} label="credential offer" />
          </details>
        </ResultCard>
      )}
    </>
  );
}

type Source = NonNullable<RequestBody<'/api/issuer/offer', 'post'>['credentialClaims']>[string];

/** The claims of each chosen configuration, written to `credentialClaims` of the same JSON text as the form. */
function OfferClaims(props: {
  body: string;
  onBody: (text: string) => void;
  problem?: Problem;
  configurations: Map<string, Configuration>;
  providers: string[];
}) {
  const { configurations, onBody } = props;
  const parsed = parsedJson(props.body)?.value;
  const body: Body = isObject(parsed) ? parsed : {};
  const chosen = Array.isArray(body.credentialConfigurationIds)
    ? body.credentialConfigurationIds.filter((id): id is string => typeof id === 'string')
    : [];
  const sources = new Map(Object.entries(isObject(body.credentialClaims) ? body.credentialClaims : {}));
  const write = (next: Map<string, unknown>) =>
    onBody(JSON.stringify({ ...body, credentialClaims: next.size ? Object.fromEntries(next) : undefined }, null, 2));

  // A configuration just chosen starts with its fields' default values (or none), as typed inputs;
  // the claims of one no longer chosen go with it (the service refuses them).
  const unset = chosen.filter((id) => !sources.has(id) && startsWithValues(configurations.get(id)));
  const dropped = [...sources.keys()].filter((id) => !chosen.includes(id));
  useEffect(() => {
    if (unset.length === 0 && dropped.length === 0) return;
    const next = new Map(sources);
    for (const id of dropped) next.delete(id);
    for (const id of unset) next.set(id, { type: 'inline', claims: claimTree(configurations.get(id)?.fields ?? []).defaults });
    write(next);
  });

  if (!isObject(parsed)) return null;
  return (
    <>
      {chosen.map((id) => (
        <ConfigurationClaims
          key={id}
          id={id}
          configuration={configurations.get(id)}
          source={sources.get(id) as Source | undefined}
          onSource={(source) => {
            const next = new Map(sources);
            if (source === undefined) next.delete(id);
            else next.set(id, source);
            write(next);
          }}
          providers={props.providers}
          problem={props.problem}
        />
      ))}
    </>
  );
}

type SourceKind = 'inline' | 'attributeProvider' | 'webhook' | 'default';

function ConfigurationClaims(props: {
  id: string;
  configuration?: Configuration;
  source?: Source;
  onSource: (source: Source | undefined) => void;
  providers: string[];
  problem?: Problem;
}) {
  const { id, configuration, source, providers } = props;
  const kind: SourceKind = source?.type ?? 'default';
  const typed = hasFields(configuration) ? claimTree(configuration?.fields ?? []) : undefined;
  const idPrefix = id.replace(/\W/g, '-');
  const choose = (next: SourceKind) => {
    if (next === 'inline') props.onSource({ type: 'inline', claims: typed?.defaults ?? {} });
    else if (next === 'attributeProvider') props.onSource({ type: 'attributeProvider', attributeProviderId: providers[0] ?? '' });
    else props.onSource(undefined);
  };
  const kinds: [SourceKind, string][] = [
    ['inline', typed ? 'Values entered here' : 'Claims entered as JSON'],
    ...(providers.length || kind === 'attributeProvider' ? [['attributeProvider', 'An attribute provider'] as [SourceKind, string]] : []),
    ...(kind === 'webhook' ? [['webhook', 'A webhook (edit it in the JSON)'] as [SourceKind, string]] : []),
    [
      'default',
      configuration?.attributeProviderId
        ? `The configuration's attribute provider (${configuration.attributeProviderId})`
        : "The configuration's default values",
    ],
  ];
  return (
    <fieldset class="claims-of">
      <legend>Claims of {id}</legend>
      <div class="form-field">
        <label for={`claims-source-${idPrefix}`}>Claims from</label>
        <select id={`claims-source-${idPrefix}`} value={kind} onChange={(e) => choose((e.target as HTMLSelectElement).value as SourceKind)}>
          {kinds.map(([value, text]) => (
            <option key={value} value={value}>
              {text}
            </option>
          ))}
        </select>
      </div>
      {source?.type === 'attributeProvider' && (
        <div class="form-field">
          <label for={`claims-provider-${idPrefix}`}>Attribute provider</label>
          <select
            id={`claims-provider-${idPrefix}`}
            value={source.attributeProviderId}
            onChange={(e) => props.onSource({ type: 'attributeProvider', attributeProviderId: (e.target as HTMLSelectElement).value })}
          >
            {[...new Set([source.attributeProviderId, ...providers])].map((p) => (
              <option key={p} value={p}>
                {p || '(none)'}
              </option>
            ))}
          </select>
        </div>
      )}
      {source?.type === 'inline' && typed && (
        <ClaimsInputs
          root={typed.root}
          claims={source.claims}
          onClaims={(claims) => props.onSource({ type: 'inline', claims })}
          errorPrefix={`body.credentialClaims.${id}.claims`}
          problem={props.problem}
          idPrefix={idPrefix}
        />
      )}
      {source?.type === 'inline' && !typed && (
        <div class="form-field">
          <label for={`claims-json-${idPrefix}`}>Claims (JSON)</label>
          <JsonField
            common={{ id: `claims-json-${idPrefix}` }}
            value={source.claims}
            onValue={(claims) => props.onSource({ type: 'inline', claims: isObject(claims) ? claims : {} })}
          />
        </div>
      )}
    </fieldset>
  );
}
