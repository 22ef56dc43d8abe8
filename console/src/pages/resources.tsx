// The management resources that fit the generic page: what each lists, how one is addressed, what a
// new one starts as (each template valid as it stands: a browser test submits every one unedited),
// and the roles its routes require. Every call goes through the typed client.
import { api, asBody, type ListItem, openTenant, type Role, result, session } from '../api.js';
import { summarizeChain } from '../certificates.js';
import { formatDate } from '../components.js';
import { FORMS } from '../forms.js';
import { ConfigExport } from './config-export.js';
import { DcqlBuilder } from './dcql-builder.js';
import { FieldsForm } from './fields-form.js';
import { KeyChainDownloads } from './key-chain-downloads.js';
import type { ResourceDefinition } from './resource.js';
import { TrustEntitiesEditor } from './trust-entities.js';

const created = { title: 'Created', cell: (row: { createdAt?: string | null }) => formatDate(row.createdAt) };
const idColumn = { title: 'Id', cell: (row: { id: string }) => <code class="id">{row.id}</code> };
/** The id as a link to the item's detail page (#/{route}/{id}, registered in main.tsx). */
const linkedId = (route: string) => ({
  title: 'Id',
  cell: (row: { id: string }) => (
    <a href={`#/${route}/${encodeURIComponent(row.id)}`}>
      <code class="id">{row.id}</code>
    </a>
  ),
});
const byId = (row: { id: string }) => ({ params: { path: { id: row.id } } });

const TENANT_ADMIN_ROLES: Role[] = [
  'clients:manage',
  'users:manage',
  'issuance:manage',
  'issuance:offer',
  'presentation:manage',
  'presentation:request',
];

export const tenants: ResourceDefinition<ListItem<'/api/tenant'>> = {
  title: 'Tenants',
  roles: ['tenants:manage'],
  list: () => result(api.GET('/api/tenant')),
  name: (t) => t.id,
  columns: [
    idColumn,
    { title: 'Name', cell: (t) => t.name },
    { title: 'Status', cell: (t) => t.status },
    created,
    { title: 'Configuration', cell: (t) => <ConfigExport tenantId={t.id} /> },
  ],
  template: () => ({ id: 'acme', name: 'Acme', roles: TENANT_ADMIN_ROLES }),
  form: FORMS.tenantCreate.fields,
  editForm: FORMS.tenantUpdate.fields,
  create: (body) => result(api.POST('/api/tenant', { body: asBody('/api/tenant', 'post', body) })),
  update: (t, body) => result(api.PATCH('/api/tenant/{id}', { ...byId(t), body: asBody('/api/tenant/{id}', 'patch', body) })),
  editable: ({ name, description, sessionConfig, statusListConfig }) => ({ name, description, sessionConfig, statusListConfig }),
  remove: (t) => result(api.DELETE('/api/tenant/{id}', byId(t))),
  createdSecret: (data) => {
    const client = (data as { client?: { clientId: string; secret: string } }).client;
    return client && { label: "Secret of the tenant's admin client", owner: client.clientId, value: client.secret };
  },
  actions: [
    {
      label: 'Open tenant',
      // The exchanged token is audited in the tenant's log as this administrator acting there.
      run: async (t) => ({ problem: await openTenant(t.id) }),
      shown: (t) => t.status === 'active',
    },
  ],
  intro: (
    <p class="muted">
      A tenant created with roles gets an admin client; its secret is shown once, in a dialog, after creating. Open tenant works inside it
      for up to 15 minutes, audited as you acting there; log in again to come back.
    </p>
  ),
};

type Client = ListItem<'/api/client'>;
const clientBase = {
  title: 'Clients',
  roles: ['clients:manage', 'tenants:manage'] as Role[],
  list: () => result(api.GET('/api/client')),
  name: (c: Client) => c.clientId,
  columns: [
    { title: 'Client id', cell: (c: Client) => <code>{c.clientId}</code> },
    { title: 'Tenant', cell: (c: Client) => c.tenantId ?? '(service)' },
    { title: 'Roles', cell: (c: Client) => c.roles.join(', ') },
  ],
  create: (body: unknown) => result(api.POST('/api/client', { body: asBody('/api/client', 'post', body) })),
  form: FORMS.clientCreate.fields,
  editForm: FORMS.clientUpdate.fields,
  update: (c: Client, body: unknown) =>
    result(api.PATCH('/api/client/{id}', { params: { path: { id: c.clientId } }, body: asBody('/api/client/{id}', 'patch', body) })),
  editable: ({ roles, description, allowedPresentationConfigs, allowedIssuanceConfigs }: Client) => ({
    roles,
    description,
    allowedPresentationConfigs,
    allowedIssuanceConfigs,
  }),
  remove: (c: Client) => result(api.DELETE('/api/client/{id}', { params: { path: { id: c.clientId } } })),
  createdSecret: (data: unknown) => {
    const client = data as { clientId: string; secret: string };
    return { label: 'Client secret', owner: client.clientId, value: client.secret };
  },
  actions: [
    {
      label: 'Rotate secret',
      run: (c: Client) => result(api.POST('/api/client/{id}/rotate-secret', { params: { path: { id: c.clientId } } })),
      confirm: (c: Client) => `Rotate the secret of ${c.clientId}? The old secret and every token issued under it stop working at once.`,
      secret: (c: Client, data: unknown) => ({ label: 'New client secret', owner: c.clientId, value: (data as { secret: string }).secret }),
    },
  ],
};
/** A tenant's clients. */
export const clients: ResourceDefinition<Client> = {
  ...clientBase,
  // Client ids are unique across the service: the tenant's id makes this one unique.
  template: () => ({ clientId: `${session()?.tenantId ?? 'tenant'}-offers`, roles: ['issuance:offer'], description: 'issues offers' }),
};
/** The service's own clients (and any tenant's): a new one administers the service beside the bootstrap client. */
export const serviceClients: ResourceDefinition<Client> = {
  ...clientBase,
  template: () => ({ clientId: 'operator', roles: ['tenants:manage'], description: 'a second service administrator' }),
};

type User = ListItem<'/api/user'>;
export const users: ResourceDefinition<User> = {
  title: 'Users',
  roles: ['users:manage'],
  list: () => result(api.GET('/api/user')),
  name: (u) => u.username,
  columns: [
    { title: 'User name', cell: (u) => u.username },
    { title: 'Roles', cell: (u) => u.roles.join(', ') },
    { title: 'Enabled', cell: (u) => (u.enabled ? 'yes' : 'no') },
  ],
  template: () => ({ username: 'operator', roles: ['issuance:offer'], email: 'operator@example.com', enabled: true }),
  form: FORMS.userCreate.fields,
  editForm: FORMS.userUpdate.fields,
  create: (body) => result(api.POST('/api/user', { body: asBody('/api/user', 'post', body) })),
  update: (u, body) => result(api.PATCH('/api/user/{id}', { ...byId(u), body: asBody('/api/user/{id}', 'patch', body) })),
  editable: ({ roles, email, enabled }) => ({ roles, email, enabled }),
  remove: (u) => result(api.DELETE('/api/user/{id}', byId(u))),
  createdSecret: (data) => {
    const user = data as { username: string; temporaryPassword: string };
    return { label: 'Temporary password', owner: user.username, value: user.temporaryPassword };
  },
};

/** A key the browser makes, so that the import template works as it stands (replace it with the key to import). */
async function freshPrivateJwk() {
  const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const { kty, crv, x, y, d } = await crypto.subtle.exportKey('jwk', pair.privateKey);
  return { kty, crv, x, y, d };
}

type KeyChain = ListItem<'/api/key-chain'>;
export const keyChains: ResourceDefinition<KeyChain> = {
  title: 'Key chains',
  roles: ['issuance:manage', 'presentation:manage'],
  list: () => result(api.GET('/api/key-chain')),
  name: (k) => k.id,
  columns: [
    linkedId('key-chains'),
    { title: 'Usage', cell: (k) => k.usageType },
    { title: 'Default', cell: (k) => (k.default ? 'yes' : '') },
    {
      title: 'Certificate chain',
      cell: (k) => <CertificateChain pem={[k.activeCertificate, k.rootCertificate].filter(Boolean).join('\n')} />,
    },
    { title: 'Rotated', cell: (k) => formatDate(k.lastRotatedAt) },
    { title: 'Downloads', cell: (k) => <KeyChainDownloads chain={k} /> },
  ],
  template: () => ({ id: 'signer', usageType: 'attestation', type: 'internalChain' }),
  form: FORMS.keyChainCreate.fields,
  editForm: FORMS.keyChainUpdate.fields,
  create: (body) => result(api.POST('/api/key-chain', { body: asBody('/api/key-chain', 'post', body) })),
  createVariants: [
    {
      label: 'Import a key',
      form: FORMS.keyChainImport.fields,
      template: async () => ({ id: 'imported', usageType: 'attestation', privateJwk: await freshPrivateJwk() }),
      create: (body) => result(api.POST('/api/key-chain/import', { body: asBody('/api/key-chain/import', 'post', body) })),
    },
  ],
  update: (k, body) => result(api.PATCH('/api/key-chain/{id}', { ...byId(k), body: asBody('/api/key-chain/{id}', 'patch', body) })),
  editable: ({ description, rotationEnabled, rotationIntervalDays, certValidityDays }) => ({
    description,
    rotationEnabled,
    rotationIntervalDays,
    certValidityDays,
  }),
  remove: (k) => result(api.DELETE('/api/key-chain/{id}', byId(k))),
  // The API refuses to delete the tenant's default key chain of a usage (another is made default first).
  removable: (k) => !k.default,
  actions: [
    {
      label: 'Rotate',
      run: (k) => result(api.POST('/api/key-chain/{id}/rotate', byId(k))),
      confirm: (k) =>
        `Rotate ${k.id}? A new key signs from now on; what the old key signed stays verifiable only while its certificate is trusted.`,
    },
    {
      label: 'Make default',
      run: (k) => result(api.PATCH('/api/key-chain/{id}', { ...byId(k), body: { default: true } })),
      shown: (k) => !k.default,
    },
  ],
};

/** The chain, leaf first: who each certificate names, who signed it and when it is valid; the PEM on request. */
function CertificateChain({ pem }: { pem?: string | null }) {
  if (!pem) return <span class="muted">none</span>;
  const chain = summarizeChain(pem);
  const now = Date.now();
  return (
    <details>
      <summary>
        {chain.length} certificate{chain.length === 1 ? '' : 's'}
        {chain[0] && `: ${chain[0].subject}`}
      </summary>
      <ol class="chain">
        {chain.map((c) => (
          <li key={c.serial}>
            <div>
              <strong>{c.subject}</strong>
              {c.selfSigned ? ' (self-signed)' : ''}
            </div>
            <div class="muted">issued by {c.issuer}</div>
            <div class={c.notAfter.getTime() < now || c.notBefore.getTime() > now ? 'field-error' : 'muted'}>
              valid {c.notBefore.toLocaleDateString()} to {c.notAfter.toLocaleDateString()}
            </div>
            <div class="muted">
              serial <code>{c.serial}</code>
            </div>
          </li>
        ))}
      </ol>
      <details>
        <summary>PEM</summary>
        <pre>{pem}</pre>
      </details>
    </details>
  );
}

// The PID templates as wallets expect them (PID Rulebook; SD-JWT VC section 3.2.2.2): in the SD-JWT
// VC every claim is selectively disclosable (iss, vct and the status are not claims of the fields and
// never are); in the mdoc every data element is disclosed one by one anyway.
const PID_CLAIMS = [
  { name: 'given_name', type: 'string', display: 'Given name', mandatory: true },
  { name: 'family_name', type: 'string', display: 'Family name', mandatory: true },
  { name: 'birthdate', type: 'date', display: 'Birth date' },
  { name: 'nationalities', type: 'array', display: 'Nationalities' },
] as const;
const PID_SD_JWT = {
  id: 'pid',
  description: 'Person ID (SD-JWT VC): given and family name always, birth date and nationalities when known; each selectively disclosable',
  config: { format: 'dc+sd-jwt', display: [{ name: 'Person ID', locale: 'en' }] },
  vct: 'urn:eudi:pid:1',
  statusManagement: true,
  fields: PID_CLAIMS.map(({ name, type, display, ...rest }) => ({
    path: [name],
    type,
    ...rest,
    disclosable: true,
    display: [{ name: display, locale: 'en' }],
  })),
};
const PID_MDOC = {
  id: 'pid-mdoc',
  description: 'Person ID (mdoc): given and family name always, birth date and nationalities when known; each a data element',
  config: { format: 'mso_mdoc', docType: 'eu.europa.ec.eudi.pid.1', display: [{ name: 'Person ID', locale: 'en' }] },
  statusManagement: true,
  fields: PID_CLAIMS.map(({ name, type, display, ...rest }) => ({
    path: [name],
    type,
    ...rest,
    namespace: 'eu.europa.ec.eudi.pid.1',
    display: [{ name: display, locale: 'en' }],
  })),
};

/** What the credential configuration form's pickers offer: the tenant's attestation key chains, attribute providers and webhook endpoints. */
async function credentialConfigChoices() {
  const [chains, providers, webhooks] = await Promise.all([
    result(api.GET('/api/key-chain')),
    result(api.GET('/api/issuer/attribute-providers')),
    result(api.GET('/api/issuer/webhook-endpoints')),
  ]);
  return {
    keyChainId: (chains.data ?? []).filter((k) => k.usageType === 'attestation').map((k) => k.id),
    attributeProviderId: (providers.data ?? []).map((p) => p.id),
    webhookEndpointId: (webhooks.data ?? []).map((w) => w.id),
  };
}

type CredentialConfig = ListItem<'/api/issuer/credentials'>;
export const credentialConfigs: ResourceDefinition<CredentialConfig> = {
  title: 'Credential configurations',
  roles: ['issuance:manage'],
  list: () => result(api.GET('/api/issuer/credentials')),
  name: (c) => c.id,
  columns: [
    linkedId('credential-configs'),
    { title: 'Format', cell: (c) => c.config?.format },
    { title: 'Type', cell: (c) => c.vct ?? c.config?.docType ?? '' },
    created,
  ],
  template: () => PID_SD_JWT,
  createVariants: [
    {
      label: 'PID (mso_mdoc)',
      form: FORMS.credentialConfig.fields,
      template: () => PID_MDOC,
      create: (body) => result(api.POST('/api/issuer/credentials', { body: asBody('/api/issuer/credentials', 'post', body) })),
    },
  ],
  choices: credentialConfigChoices,
  create: (body) => result(api.POST('/api/issuer/credentials', { body: asBody('/api/issuer/credentials', 'post', body) })),
  form: FORMS.credentialConfig.fields,
  editForm: FORMS.credentialConfigUpdate.fields,
  update: (c, body) =>
    result(api.PATCH('/api/issuer/credentials/{id}', { ...byId(c), body: asBody('/api/issuer/credentials/{id}', 'patch', body) })),
  editable: ({ id: _id, tenantId: _t, createdAt: _c, updatedAt: _u, ...rest }) => rest,
  remove: (c) => result(api.DELETE('/api/issuer/credentials/{id}', byId(c))),
  aside: (props) => <FieldsForm {...props} />,
};

const endpointTemplate = { id: 'crm', name: 'CRM', url: 'https://crm.example.com/claims', auth: { type: 'none' } };
type Endpoint = ListItem<'/api/issuer/attribute-providers'>;
const endpointColumns = [
  idColumn,
  { title: 'Name', cell: (p: Endpoint) => p.name },
  { title: 'URL', cell: (p: Endpoint) => <code>{p.url}</code> },
];
const endpointEditable = ({ name, url, description, auth }: Endpoint) => ({ name, url, description, auth });

export const attributeProviders: ResourceDefinition<Endpoint> = {
  title: 'Attribute providers',
  roles: ['issuance:manage'],
  list: () => result(api.GET('/api/issuer/attribute-providers')),
  name: (p) => p.id,
  columns: endpointColumns,
  template: () => endpointTemplate,
  form: FORMS.httpEndpoint.fields,
  editForm: FORMS.httpEndpointUpdate.fields,
  create: (body) => result(api.POST('/api/issuer/attribute-providers', { body: asBody('/api/issuer/attribute-providers', 'post', body) })),
  update: (p, body) =>
    result(
      api.PATCH('/api/issuer/attribute-providers/{id}', {
        ...byId(p),
        body: asBody('/api/issuer/attribute-providers/{id}', 'patch', body),
      }),
    ),
  editable: endpointEditable,
  remove: (p) => result(api.DELETE('/api/issuer/attribute-providers/{id}', byId(p))),
};

export const webhookEndpoints: ResourceDefinition<Endpoint> = {
  title: 'Webhook endpoints',
  roles: ['issuance:manage'],
  list: () => result(api.GET('/api/issuer/webhook-endpoints')),
  name: (p) => p.id,
  columns: endpointColumns,
  template: () => ({ ...endpointTemplate, id: 'hooks', name: 'Hooks', url: 'https://hooks.example.com/svc' }),
  form: FORMS.webhookEndpoint.fields,
  editForm: FORMS.webhookEndpointUpdate.fields,
  create: (body) => result(api.POST('/api/issuer/webhook-endpoints', { body: asBody('/api/issuer/webhook-endpoints', 'post', body) })),
  update: (p, body) =>
    result(
      api.PATCH('/api/issuer/webhook-endpoints/{id}', { ...byId(p), body: asBody('/api/issuer/webhook-endpoints/{id}', 'patch', body) }),
    ),
  editable: endpointEditable,
  remove: (p) => result(api.DELETE('/api/issuer/webhook-endpoints/{id}', byId(p))),
};

type PresentationConfig = ListItem<'/api/verifier/config'>;
export const presentationConfigs: ResourceDefinition<PresentationConfig> = {
  title: 'Presentation configurations',
  roles: ['presentation:manage'],
  list: () => result(api.GET('/api/verifier/config')),
  name: (p) => p.id,
  columns: [linkedId('presentation-configs'), { title: 'Description', cell: (p) => p.description ?? '' }, created],
  template: () => ({
    id: 'pid-check',
    description: 'name and birth date from a PID',
    dcql_query: {
      credentials: [
        {
          id: 'pid',
          format: 'dc+sd-jwt',
          meta: { vct_values: ['urn:eudi:pid:1'] },
          claims: [{ path: ['given_name'] }, { path: ['family_name'] }],
        },
      ],
    },
  }),
  create: (body) => result(api.POST('/api/verifier/config', { body: asBody('/api/verifier/config', 'post', body) })),
  form: FORMS.presentationConfig.fields,
  editForm: FORMS.presentationConfigUpdate.fields,
  update: (p, body) =>
    result(api.PATCH('/api/verifier/config/{id}', { ...byId(p), body: asBody('/api/verifier/config/{id}', 'patch', body) })),
  editable: ({ id: _id, tenantId: _t, createdAt: _c, updatedAt: _u, ...rest }) => rest,
  remove: (p) => result(api.DELETE('/api/verifier/config/{id}', byId(p))),
  actions: [
    {
      label: 'Reissue registration certificate',
      // Only a certificate the registrar issues (registration_cert without a jwt) can be obtained again.
      shown: (p) => !!p.registration_cert && !('jwt' in p.registration_cert && p.registration_cert.jwt),
      run: (p) => result(api.POST('/api/verifier/config/{id}/registration-cert/reissue', byId(p))),
    },
  ],
  aside: (props) => <DcqlBuilder {...props} />,
  intro: (
    <p class="muted">
      The DCQL query is built in the query builder or typed as JSON (both edit the same query), checked as it changes, and again by the
      service when saved: a mistake the service finds comes back naming the field.
    </p>
  ),
};

type StatusList = ListItem<'/api/status-lists'>;
const byListId = (l: StatusList) => ({ params: { path: { listId: l.id } } });
export const statusLists: ResourceDefinition<StatusList> = {
  title: 'Status lists',
  roles: ['issuance:manage'],
  list: () => result(api.GET('/api/status-lists')),
  name: (l) => l.id,
  columns: [
    idColumn,
    { title: 'Configuration', cell: (l) => l.credentialConfigurationId ?? '(shared)' },
    { title: 'Key chain', cell: (l) => l.keyChainId ?? '(default)' },
    { title: 'Used', cell: (l) => `${l.usedEntries} / ${l.capacity}` },
    { title: 'URI', cell: (l) => <a href={l.uri}>token</a> },
  ],
  template: () => ({ bits: 1 }),
  form: FORMS.statusList.fields,
  editForm: FORMS.statusListUpdate.fields,
  create: (body) => result(api.POST('/api/status-lists', { body: asBody('/api/status-lists', 'post', body) })),
  update: (l, body) =>
    result(api.PATCH('/api/status-lists/{listId}', { ...byListId(l), body: asBody('/api/status-lists/{listId}', 'patch', body) })),
  editable: ({ credentialConfigurationId, keyChainId }) => ({ credentialConfigurationId, keyChainId }),
  remove: (l) => result(api.DELETE('/api/status-lists/{listId}', byListId(l))),
};

type TrustList = ListItem<'/api/trust-list'>;
export const trustLists: ResourceDefinition<TrustList> = {
  title: 'Trust lists',
  roles: ['presentation:manage', 'issuance:manage'],
  list: () => result(api.GET('/api/trust-list')),
  name: (t) => t.id,
  columns: [
    linkedId('trust-lists'),
    { title: 'Description', cell: (t) => t.description ?? '' },
    { title: 'Entities', cell: (t) => t.entityConfig.length },
  ],
  template: () => ({
    id: 'issuers',
    entities: [
      { type: 'internal', keyChainId: 'default-attestation' },
      { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
    ],
  }),
  create: (body) => result(api.POST('/api/trust-list', { body: asBody('/api/trust-list', 'post', body) })),
  form: FORMS.trustList.fields,
  editForm: FORMS.trustListUpdate.fields,
  update: (t, body) => result(api.PUT('/api/trust-list/{id}', { ...byId(t), body: asBody('/api/trust-list/{id}', 'put', body) })),
  editable: ({ description, data, entityConfig, keyChainId }) => ({ description, data, entities: entityConfig, keyChainId }),
  remove: (t) => result(api.DELETE('/api/trust-list/{id}', byId(t))),
  actions: [
    { label: 'Versions', run: (t) => result(api.GET('/api/trust-list/{id}/versions', byId(t))) },
    { label: 'Export', run: (t) => result(api.GET('/api/trust-list/{id}/export', byId(t))) },
  ],
  aside: (props) => <TrustEntitiesEditor {...props} />,
};
