// GET /api/conformance?profile=haip-1.0 through the real server: one entry per normative HAIP 1.0
// requirement of an issuer or a verifier, judged on the tenant's live configuration. A tenant that
// meets every rule with the key chains a new tenant gets (CA-issued) reads met (or not-applicable)
// everywhere but the requirements whose feature this version lacks; then each rule is broken in turn
// (self-signed chains created explicitly), and the report names what breaks it, by id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, fieldsOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';
import { walletProvider } from '../support/wallet-provider.js';

let svc: TestService;
let good: string;
let loose: string;
let caPem: string;

/** Requirements that need a feature of another branch of issue 39; not-met on this version, with the reason. */
/** What the profile enforces for presentation requests: met only while the tenant is in it. */
const PROFILE_ENFORCED = ['vp-x509-hash', 'vp-direct-post-jwt'];

interface Entry {
  id: string;
  section: string;
  role: string;
  requirement: string;
  status: string;
  detail: string;
}

const QUERY = { credentials: [{ id: 'badge', format: 'dc+sd-jwt', meta: { vct_values: ['urn:example:badge'] } }] };
const credential = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  config: { format: 'dc+sd-jwt', scope: `${id}_scope`, keyAttestationsRequired: { key_storage: ['iso_18045_high'] } },
  vct: `urn:example:${id}`,
  fields: [{ path: ['name'], type: 'string', defaultValue: 'Ada' }],
  lifeTime: 3600,
  statusManagement: true,
  ...extra,
});
const settings = (extra: Record<string, unknown> = {}) => ({
  dpopRequired: true,
  walletAttestationRequired: true,
  walletProviders: [{ name: 'Wallet Provider', certificates: [caPem] }],
  ...extra,
});

async function ok(token: string, method: string, path: string, body?: unknown) {
  const reply = await svc.raw(method, path, { token, body });
  expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300);
  return reply.body;
}

/** A tenant set up to meet every rule: its default key chains as created (CA-issued), a conforming configuration of each kind. */
async function conformingTenant(id: string, profile: 'haip-1.0' | 'none') {
  const { token } = await svc.tenant(id);
  await ok(token, 'PUT', '/api/issuer/config', settings({ profile }));
  await ok(token, 'POST', '/api/issuer/credentials', credential('badge'));
  await ok(token, 'POST', '/api/verifier/config', { id: 'badge-check', dcql_query: QUERY });
  return token;
}

async function report(token: string): Promise<Entry[]> {
  const reply = await svc.raw('GET', '/api/conformance?profile=haip-1.0', { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.requirements;
}
/** Makes a self-signed (standalone) chain the tenant's default of the usage type, as tenants made before CA-issued defaults had. */
const selfSignedDefault = (usageType: string) =>
  ok(loose, 'POST', '/api/key-chain', { id: `standalone-${usageType}`, usageType, type: 'standalone', default: true });
/** Gives the default back to the chain the tenant was created with, and removes the self-signed one. */
async function restoreDefault(usageType: string) {
  await ok(loose, 'PATCH', `/api/key-chain/default-${usageType}`, { default: true });
  await ok(loose, 'DELETE', `/api/key-chain/standalone-${usageType}`);
}
const entry = (entries: Entry[], id: string) => entries.find((e) => e.id === id) as Entry;
const notMet = (entries: Entry[]) => entries.filter((e) => e.status === 'not-met').map((e) => e.id);

beforeAll(async () => {
  svc = await startService();
  caPem = (await walletProvider()).caPem;
  good = await conformingTenant('good', 'haip-1.0');
  loose = await conformingTenant('loose', 'none');
});
afterAll(() => svc.stop());

describe('the conformance report', () => {
  it('lists every normative issuer and verifier requirement of HAIP 1.0 once, with its section and role', async () => {
    const reply = await svc.raw('GET', '/api/conformance?profile=haip-1.0', { token: good });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ profile: 'haip-1.0', tenantId: 'good' });
    const entries: Entry[] = reply.body.requirements;
    expect(entries.length).toBeGreaterThanOrEqual(40);
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
    for (const e of entries) {
      expect(e.section).toMatch(/^\d+(\.\d+)*(, \d+(\.\d+)*)*$/);
      expect(['issuer', 'verifier']).toContain(e.role);
      expect(['met', 'not-met', 'not-applicable']).toContain(e.status);
      expect(e.requirement.length).toBeGreaterThan(10);
      expect(e.detail.length).toBeGreaterThan(0);
    }
    expect(entries.filter((e) => e.role === 'issuer').length).toBeGreaterThanOrEqual(20);
    expect(entries.filter((e) => e.role === 'verifier').length).toBeGreaterThanOrEqual(15);
  });

  it('reads met for a tenant in the profile that meets everything', async () => {
    const entries = await report(good);
    expect(notMet(entries)).toEqual([]);
    for (const id of ['vp-trusted-authorities-aki', 'vp-session-binding']) expect(entry(entries, id).status, id).toBe('met');
    for (const id of PROFILE_ENFORCED)
      expect(entry(entries, id)).toMatchObject({ status: 'met', detail: expect.stringContaining('haip-1.0') });
    expect(entry(entries, 'vci-signed-metadata')).toMatchObject({
      status: 'met',
      detail: expect.stringContaining("'default-attestation'"),
    });
    for (const id of ['status-list-x5c', 'vp-request-x5c', 'sd-jwt-x5c']) expect(entry(entries, id).status, id).toBe('met');
    expect(entry(entries, 'sd-jwt-exp-or-status')).toMatchObject({ status: 'met', detail: 'every dc+sd-jwt configuration (1)' });
  });

  it('says not-applicable where the tenant has nothing the requirement judges', async () => {
    const { token } = await svc.tenant('empty');
    const entries = await report(token);
    for (const id of ['vci-key-attestation', 'sd-jwt-exp-or-status', 'status-list-x5c', 'vp-request-x5c', 'vci-scope-per-configuration'])
      expect(entry(entries, id).status, id).toBe('not-applicable');
  });

  it('outside the profile, names the presentation choices it would refuse', async () => {
    const entries = await report(loose);
    expect(notMet(entries).sort()).toEqual([...PROFILE_ENFORCED].sort());
    expect(entry(entries, 'vp-direct-post-jwt').detail).toContain('direct_post');
  });

  const BREAKS: { what: string; id: string; detail: string; apply: () => Promise<unknown>; undo: () => Promise<unknown> }[] = [
    {
      what: 'DPoP not required',
      id: 'vci-dpop',
      detail: 'dpopRequired is false',
      apply: () => ok(loose, 'PUT', '/api/issuer/config', settings({ dpopRequired: false })),
      undo: () => ok(loose, 'PUT', '/api/issuer/config', settings()),
    },
    {
      what: 'wallet attestation not required (PAR)',
      id: 'vci-par-client-authentication',
      detail: 'walletAttestationRequired is false',
      apply: () => ok(loose, 'PUT', '/api/issuer/config', settings({ walletAttestationRequired: false })),
      undo: () => ok(loose, 'PUT', '/api/issuer/config', settings()),
    },
    {
      what: 'wallet attestation not required (token endpoint)',
      id: 'vci-require-client-authentication',
      detail: 'walletAttestationRequired is false',
      apply: () => ok(loose, 'PUT', '/api/issuer/config', settings({ walletAttestationRequired: false })),
      undo: () => ok(loose, 'PUT', '/api/issuer/config', settings()),
    },
    {
      what: 'no wallet provider trusted',
      id: 'vci-wallet-attestation-x5c',
      detail: 'no wallet provider is trusted',
      apply: () => ok(loose, 'PUT', '/api/issuer/config', settings({ walletProviders: [] })),
      undo: () => ok(loose, 'PUT', '/api/issuer/config', settings()),
    },
    {
      what: 'no authorization code flow',
      id: 'vci-authorization-code',
      detail: 'builtinAuthorizationServerEnabled is false',
      apply: () => ok(loose, 'PUT', '/api/issuer/config', settings({ builtinAuthorizationServerEnabled: false })),
      undo: () => ok(loose, 'PUT', '/api/issuer/config', settings()),
    },
    {
      what: 'a key-bound configuration without key attestation',
      id: 'vci-key-attestation',
      detail: "'no-key-attestation'",
      apply: () =>
        ok(loose, 'POST', '/api/issuer/credentials', credential('no-key-attestation', { config: { format: 'dc+sd-jwt', scope: 'x' } })),
      undo: () => ok(loose, 'DELETE', '/api/issuer/credentials/no-key-attestation'),
    },
    {
      what: 'an SD-JWT VC with neither exp nor status',
      id: 'sd-jwt-exp-or-status',
      detail: "'forever': neither lifeTime (exp) nor statusManagement",
      apply: () => ok(loose, 'POST', '/api/issuer/credentials', credential('forever', { lifeTime: null, statusManagement: false })),
      undo: () => ok(loose, 'DELETE', '/api/issuer/credentials/forever'),
    },
    {
      what: 'an SD-JWT VC signed by a self-signed chain',
      id: 'sd-jwt-x5c',
      detail: "credential configuration 'self-signed' (key chain 'standalone-attestation')",
      apply: async () => {
        await ok(loose, 'POST', '/api/key-chain', { id: 'standalone-attestation', usageType: 'attestation', type: 'standalone' });
        await ok(loose, 'POST', '/api/issuer/credentials', credential('self-signed', { keyChainId: 'standalone-attestation' }));
      },
      undo: async () => {
        await ok(loose, 'DELETE', '/api/issuer/credentials/self-signed');
        await ok(loose, 'DELETE', '/api/key-chain/standalone-attestation');
      },
    },
    {
      what: 'status lists signed by a self-signed default chain',
      id: 'status-list-x5c',
      detail: "credential configuration 'badge' (key chain 'standalone-statusList')",
      apply: () => selfSignedDefault('statusList'),
      undo: () => restoreDefault('statusList'),
    },
    {
      what: 'requests signed by a self-signed default chain',
      id: 'vp-request-x5c',
      detail: "presentation configuration 'badge-check' (key chain 'standalone-access')",
      apply: () => selfSignedDefault('access'),
      undo: () => restoreDefault('access'),
    },
    {
      what: 'metadata signed by a self-signed default chain',
      id: 'vci-signed-metadata',
      detail: "the default attestation key chain 'standalone-attestation' is self-signed",
      apply: () => selfSignedDefault('attestation'),
      undo: () => restoreDefault('attestation'),
    },
    {
      what: 'requests signed with ES384',
      id: 'vp-request-es256',
      detail: "presentation configuration 'es384-check' (key chain 'access-es384')",
      apply: async () => {
        await ok(loose, 'POST', '/api/key-chain', { id: 'access-es384', usageType: 'access', type: 'internalChain', algorithm: 'ES384' });
        await ok(loose, 'POST', '/api/verifier/config', { id: 'es384-check', dcql_query: QUERY, accessKeyChainId: 'access-es384' });
      },
      undo: async () => {
        await ok(loose, 'DELETE', '/api/verifier/config/es384-check');
        await ok(loose, 'DELETE', '/api/key-chain/access-es384');
      },
    },
  ];

  it.each(BREAKS)('names what breaks it: $what ($id)', async ({ id, detail, apply, undo }) => {
    await apply();
    try {
      const broken = entry(await report(loose), id);
      expect(broken.status, broken.detail).toBe('not-met');
      expect(broken.detail).toContain(detail);
    } finally {
      await undo();
    }
    expect(entry(await report(loose), id).status).toBe('met');
  });

  // A configuration can no longer lack a scope (it defaults to the id), so there is no break to name:
  // the report counts the one saved without a scope as having it, and the metadata lists that scope.
  it('counts a configuration saved without a scope as scoped by its id', async () => {
    const counted = async () => {
      const judged = entry(await report(loose), 'vci-scope-per-configuration');
      expect(judged.status, judged.detail).toBe('met');
      return Number(/^every credential configuration \((\d+)\)$/.exec(judged.detail)?.[1]);
    };
    const before = await counted();
    await ok(
      loose,
      'POST',
      '/api/issuer/credentials',
      credential('unscoped', { config: { format: 'dc+sd-jwt', keyAttestationsRequired: {} } }),
    );
    try {
      expect(await counted()).toBe(before + 1);
      const metadata = (await svc.raw('GET', '/.well-known/openid-credential-issuer/issuers/loose')).body;
      expect(metadata.credential_configurations_supported.unscoped.scope).toBe('unscoped');
    } finally {
      await ok(loose, 'DELETE', '/api/issuer/credentials/unscoped');
    }
  });

  it('says which external authorization servers it does not judge', async () => {
    const external = 'https://as.example.com';
    await ok(loose, 'PUT', '/api/issuer/config', settings({ authorizationServers: [{ issuer: external }] }));
    try {
      const judged = entry(await report(loose), 'vci-require-client-authentication');
      expect(judged).toMatchObject({
        status: 'met',
        detail: expect.stringContaining(`not judged: the external authorization server(s) ${external}`),
      });
    } finally {
      await ok(loose, 'PUT', '/api/issuer/config', settings());
    }
    expect(entry(await report(loose), 'vci-require-client-authentication').detail).not.toContain('not judged');
  });

  it('names a configuration whose interactive presentation step is not encrypted, even in the profile', async () => {
    await ok(loose, 'POST', '/api/issuer/credentials', {
      ...credential('plain-iae'),
      iaeActions: [{ type: 'openid4vp-presentation', presentationConfigId: 'badge-check', responseMode: 'iae_post' }],
    });
    expect(entry(await report(loose), 'vp-direct-post-jwt').detail).toContain("credential configuration 'plain-iae'");
    await ok(loose, 'DELETE', '/api/issuer/credentials/plain-iae');
  });

  it('shows a tenant only its own configuration', async () => {
    await ok(loose, 'POST', '/api/issuer/credentials', credential('loose-only', { lifeTime: null, statusManagement: false }));
    const text = JSON.stringify(await report(good));
    expect(text).not.toContain('loose-only');
    expect(entry(await report(good), 'sd-jwt-exp-or-status').status).toBe('met');
    await ok(loose, 'DELETE', '/api/issuer/credentials/loose-only');
  });

  it('answers to issuance:manage or presentation:manage only', async () => {
    for (const role of ['issuance:manage', 'presentation:manage'] as const) {
      const token = await svc.client(good, `report-${role.split(':')[0]}`, [role]);
      expect((await svc.raw('GET', '/api/conformance?profile=haip-1.0', { token })).status).toBe(200);
    }
    const requester = await svc.client(good, 'requester', ['presentation:request', 'issuance:offer']);
    expectProblem(await svc.raw('GET', '/api/conformance?profile=haip-1.0', { token: requester }), 403);
    expect((await svc.raw('GET', '/api/conformance?profile=haip-1.0')).status).toBe(401);
  });

  it('refuses a missing or unknown profile, naming the query parameter', async () => {
    for (const query of ['', '?profile=haip-2.0', '?profile=none']) {
      const reply = await svc.raw('GET', `/api/conformance${query}`, { token: good });
      expectProblem(reply, 400);
      expect(fieldsOf(reply)).toContain('query.profile');
    }
  });
});
