// The management resources that fit the generic page: what each lists, how one is addressed, what a
// new one starts as.
import { call } from '../api.js';
import { summarizeChain } from '../certificates.js';
import { formatDate } from '../components.js';
import { DcqlCheck } from './dcql-check.js';
import { FieldsForm } from './fields-form.js';
import type { ResourceDefinition } from './resource.js';

const created = { title: 'Created', cell: (row: any) => formatDate(row.createdAt) };
const id = { title: 'Id', cell: (row: any) => <code class="id">{row.id}</code> };
const enc = encodeURIComponent;

export const tenants: ResourceDefinition = {
  title: 'Tenants',
  path: '/api/tenant',
  itemPath: (t) => `/api/tenant/${enc(t.id)}`,
  columns: [id, { title: 'Name', cell: (t) => t.name }, { title: 'Status', cell: (t) => t.status }, created],
  template: {
    id: 'acme',
    name: 'Acme',
    roles: ['clients:manage', 'issuance:manage', 'issuance:offer', 'presentation:manage', 'presentation:request'],
  },
  update: 'PATCH',
  editable: ({ name, description, sessionConfig, statusListConfig }) => ({ name, description, sessionConfig, statusListConfig }),
  intro: <p class="muted">A tenant created with roles gets an admin client; its secret is shown once, below, after creating.</p>,
};

export const clients: ResourceDefinition = {
  title: 'Clients',
  path: '/api/client',
  itemPath: (c) => `/api/client/${enc(c.clientId)}`,
  columns: [
    { title: 'Client id', cell: (c) => <code>{c.clientId}</code> },
    { title: 'Tenant', cell: (c) => c.tenantId ?? '(service)' },
    { title: 'Roles', cell: (c) => (c.roles as string[]).join(', ') },
  ],
  template: { clientId: 'offers', roles: ['issuance:offer'], description: 'issues offers' },
  update: 'PATCH',
  editable: ({ roles, description, allowedPresentationConfigs, allowedIssuanceConfigs }) => ({
    roles,
    description,
    allowedPresentationConfigs,
    allowedIssuanceConfigs,
  }),
  actions: [{ label: 'Rotate secret', run: (c) => call('POST', `/api/client/${enc(c.clientId)}/rotate-secret`) }],
};

export const users: ResourceDefinition = {
  title: 'Users',
  path: '/api/user',
  itemPath: (u) => `/api/user/${enc(u.id)}`,
  columns: [
    { title: 'User name', cell: (u) => u.username },
    { title: 'Roles', cell: (u) => (u.roles as string[]).join(', ') },
    { title: 'Enabled', cell: (u) => (u.enabled ? 'yes' : 'no') },
  ],
  template: { username: 'operator', roles: ['issuance:offer'], email: 'operator@example.com', enabled: true },
  update: 'PATCH',
  editable: ({ roles, email, enabled }) => ({ roles, email, enabled }),
};

export const keyChains: ResourceDefinition = {
  title: 'Key chains',
  path: '/api/key-chain',
  itemPath: (k) => `/api/key-chain/${enc(k.id)}`,
  columns: [
    id,
    { title: 'Usage', cell: (k) => k.usageType },
    { title: 'Default', cell: (k) => (k.default ? 'yes' : '') },
    {
      title: 'Certificate chain',
      cell: (k) => <CertificateChain pem={[k.activeCertificate, k.rootCertificate].filter(Boolean).join('\n')} />,
    },
    { title: 'Rotated', cell: (k) => formatDate(k.lastRotatedAt) },
  ],
  template: { id: 'signer', usageType: 'attestation', type: 'internalChain' },
  createVariants: [
    {
      label: 'Import a key',
      path: '/api/key-chain/import',
      template: {
        id: 'imported',
        usageType: 'attestation',
        privateJwk: { kty: 'EC', crv: 'P-256', x: '…', y: '…', d: '…' },
        certificateChain: '-----BEGIN CERTIFICATE-----\n…\n-----END CERTIFICATE-----',
      },
    },
  ],
  update: 'PATCH',
  editable: ({ description, rotationEnabled, rotationIntervalDays, certValidityDays }) => ({
    description,
    rotationEnabled,
    rotationIntervalDays,
    certValidityDays,
  }),
  actions: [
    { label: 'Rotate', run: (k) => call('POST', `/api/key-chain/${enc(k.id)}/rotate`) },
    { label: 'Make default', run: (k) => call('PATCH', `/api/key-chain/${enc(k.id)}`, { default: true }) },
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

export const credentialConfigs: ResourceDefinition = {
  title: 'Credential configurations',
  path: '/api/issuer/credentials',
  itemPath: (c) => `/api/issuer/credentials/${enc(c.id)}`,
  columns: [
    id,
    { title: 'Format', cell: (c) => c.config?.format },
    { title: 'Type', cell: (c) => c.vct ?? c.config?.docType ?? '' },
    created,
  ],
  template: {
    id: 'pid',
    config: { format: 'dc+sd-jwt' },
    vct: 'urn:eudi:pid:1',
    statusManagement: true,
    fields: [
      { path: ['given_name'], type: 'string', mandatory: true },
      { path: ['family_name'], type: 'string', mandatory: true },
      { path: ['birthdate'], type: 'string', constraints: { format: 'date' } },
    ],
  },
  update: 'PATCH',
  editable: ({ id: _id, tenantId: _t, createdAt: _c, updatedAt: _u, ...rest }) => rest,
  aside: (props) => <FieldsForm {...props} />,
};

const endpointTemplate = { id: 'crm', name: 'CRM', url: 'https://crm.example.com/claims', auth: { type: 'none' } };
export const attributeProviders: ResourceDefinition = {
  title: 'Attribute providers',
  path: '/api/issuer/attribute-providers',
  itemPath: (p) => `/api/issuer/attribute-providers/${enc(p.id)}`,
  columns: [id, { title: 'Name', cell: (p) => p.name }, { title: 'URL', cell: (p) => <code>{p.url}</code> }],
  template: endpointTemplate,
  update: 'PATCH',
  editable: ({ name, url, description, auth }) => ({ name, url, description, auth }),
};

export const webhookEndpoints: ResourceDefinition = {
  ...attributeProviders,
  title: 'Webhook endpoints',
  path: '/api/issuer/webhook-endpoints',
  itemPath: (p) => `/api/issuer/webhook-endpoints/${enc(p.id)}`,
  template: { ...endpointTemplate, id: 'hooks', name: 'Hooks', url: 'https://hooks.example.com/svc' },
};

export const presentationConfigs: ResourceDefinition = {
  title: 'Presentation configurations',
  path: '/api/verifier/config',
  itemPath: (p) => `/api/verifier/config/${enc(p.id)}`,
  columns: [id, { title: 'Description', cell: (p) => p.description ?? '' }, created],
  template: {
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
  },
  update: 'PATCH',
  editable: ({ id: _id, tenantId: _t, createdAt: _c, updatedAt: _u, ...rest }) => rest,
  aside: ({ body }) => <DcqlCheck body={body} />,
  intro: (
    <p class="muted">
      The DCQL query is checked as it is typed, and again by the service when saved: a mistake the service finds comes back naming the field
      below the editor.
    </p>
  ),
};

export const statusLists: ResourceDefinition = {
  title: 'Status lists',
  path: '/api/status-lists',
  itemPath: (l) => `/api/status-lists/${enc(l.id)}`,
  columns: [
    id,
    { title: 'Configuration', cell: (l) => l.credentialConfigurationId ?? '(shared)' },
    { title: 'Key chain', cell: (l) => l.keyChainId ?? '(default)' },
    { title: 'Used', cell: (l) => `${l.usedEntries} / ${l.capacity}` },
    { title: 'URI', cell: (l) => <a href={l.uri}>token</a> },
  ],
  template: { bits: 1 },
  update: 'PATCH',
  editable: ({ credentialConfigurationId, keyChainId }) => ({ credentialConfigurationId, keyChainId }),
};

export const trustLists: ResourceDefinition = {
  title: 'Trust lists',
  path: '/api/trust-list',
  itemPath: (t) => `/api/trust-list/${enc(t.id)}`,
  columns: [id, { title: 'Description', cell: (t) => t.description ?? '' }, { title: 'Entities', cell: (t) => t.entities?.length ?? '' }],
  template: {
    id: 'issuers',
    entities: [
      { type: 'internal', keyChainId: 'default-attestation' },
      { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
    ],
  },
  update: 'PUT',
  editable: ({ description, data, entities, keyChainId }) => ({ description, data, entities, keyChainId }),
  actions: [
    { label: 'Versions', run: (t) => call('GET', `/api/trust-list/${enc(t.id)}/versions`) },
    { label: 'Export', run: (t) => call('GET', `/api/trust-list/${enc(t.id)}/export`) },
  ],
};
