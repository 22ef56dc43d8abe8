// The haip-1.0 profile of a tenant (issuer settings `profile`), through the real server: what it
// refuses, each refusal naming the HAIP rule and section and leaving nothing stored; what it lets
// through, read back by independent libraries (jose for the request object, @peculiar/x509 for the
// certificates); and that a tenant in the profile refuses wallets without attestation at PAR and at
// the token endpoint, for both grants.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';
import { pkce, WALLET_REDIRECT_URI } from '../support/wallet.js';
import { type WalletProvider, walletProvider } from '../support/wallet-provider.js';

let svc: TestService;
let acme: string;
let provider: WalletProvider;

const KEY_ATTESTATIONS = { key_storage: ['iso_18045_high'] };
/** A credential configuration that meets every rule of the profile. */
const compliant = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  config: { format: 'dc+sd-jwt' as const, scope: `${id}_scope`, keyAttestationsRequired: KEY_ATTESTATIONS },
  vct: `urn:example:${id}`,
  fields: [{ path: ['name'], type: 'string' as const, defaultValue: 'Ada' }],
  lifeTime: 3600,
  ...extra,
});
const QUERY = { credentials: [{ id: 'badge', format: 'dc+sd-jwt', meta: { vct_values: ['urn:example:badge'] } }] };
const profileSettings = (extra: Record<string, unknown> = {}) => ({
  profile: 'haip-1.0',
  dpopRequired: true,
  walletAttestationRequired: true,
  walletProviders: [{ name: 'Test Wallet Provider', certificates: [provider.caPem] }],
  ...extra,
});

/** The 400's errors; each message must name the HAIP section and rule id. */
function refusal(reply: { status: number; body: unknown; text: string; headers: Headers }) {
  expectProblem(reply as never, 400);
  return problemOf(reply).errors ?? [];
}
const expectRule = (reply: Parameters<typeof refusal>[0], field: string, section: string, ruleId: string) => {
  const errors = refusal(reply);
  expect(errors, JSON.stringify(errors)).toContainEqual({
    field,
    message: expect.stringContaining(`HAIP 1.0 section ${section} (${ruleId}:`),
  });
};

const createChain = async (body: Record<string, unknown>) => {
  const reply = await svc.raw('POST', '/api/key-chain', { token: acme, body });
  expect(reply.status, reply.text).toBe(201);
};

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  provider = await walletProvider();
});
afterAll(() => svc.stop());

describe('issuer settings: profile', () => {
  it('defaults to none and is documented with its values', async () => {
    const settings = await svc.call('GET', '/api/issuer/config', { token: acme });
    expect(settings.body.profile).toBe('none');
    const doc = (await svc.raw('GET', '/api/openapi.json')).body;
    const schema = doc.components.schemas.IssuerSettings.properties.profile;
    expect(schema.enum).toEqual(['none', 'haip-1.0']);
    expect(schema.description).toContain('haip-1.0');
    expect(schema.examples).toEqual(['haip-1.0']);
  });

  it('refuses haip-1.0 with DPoP or wallet attestation off, naming each rule and section, and stores nothing', async () => {
    const reply = await svc.raw('PUT', '/api/issuer/config', { token: acme, body: { profile: 'haip-1.0' } });
    expectRule(reply, 'body.walletAttestationRequired', '4.4.1', 'wallet-attestation');
    expectRule(reply, 'body.dpopRequired', '4', 'dpop');
    const other = await svc.raw('PUT', '/api/issuer/config', { token: acme, body: profileSettings({ dpopRequired: false }) });
    expect(refusal(other).map((e) => e.field)).toEqual(['body.dpopRequired']);
    expect((await svc.call('GET', '/api/issuer/config', { token: acme })).body.profile).toBe('none');
  });

  it('refuses switching on while a configuration of the tenant breaks the profile, naming it', async () => {
    const bad = await svc.raw('POST', '/api/issuer/credentials', {
      token: acme,
      body: { id: 'loose', config: { format: 'dc+sd-jwt' }, vct: 'urn:example:loose', fields: [] },
    });
    expect(bad.status, bad.text).toBe(201);
    const reply = await svc.raw('PUT', '/api/issuer/config', { token: acme, body: profileSettings() });
    const messages = refusal(reply)
      .filter((e) => e.field === 'body.profile')
      .map((e) => e.message);
    expect(messages).toContainEqual(
      expect.stringMatching(/^credential configuration 'loose' \(config.keyAttestationsRequired\): HAIP 1.0 section 4.5.1/),
    );
    expect(messages).toContainEqual(expect.stringMatching(/^credential configuration 'loose' \(lifeTime\): HAIP 1.0 section 6.1 /));
    expect((await svc.call('GET', '/api/issuer/config', { token: acme })).body.profile).toBe('none');
    expect((await svc.raw('DELETE', '/api/issuer/credentials/loose', { token: acme })).status).toBe(204);
    const on = await svc.raw('PUT', '/api/issuer/config', { token: acme, body: profileSettings() });
    expect(on.status, on.text).toBe(200);
    expect(on.body.profile).toBe('haip-1.0');
  });
});

describe('credential configurations in a haip-1.0 tenant', () => {
  const create = (body: Record<string, unknown>) => svc.raw('POST', '/api/issuer/credentials', { token: acme, body });
  const stored = async (id: string) => (await svc.raw('GET', `/api/issuer/credentials/${id}`, { token: acme })).status;

  it('refuses a key-bound configuration without key attestations (4.5.1)', async () => {
    const reply = await create(compliant('a', { config: { format: 'dc+sd-jwt', scope: 'a' } }));
    expectRule(reply, 'body.config.keyAttestationsRequired', '4.5.1', 'key-attestation');
    expect(await stored('a')).toBe(404);
  });

  it('refuses key attestations without key binding (4.5.1)', async () => {
    expectRule(await create(compliant('b', { keyBinding: false })), 'body.keyBinding', '4.5.1', 'key-binding');
  });

  it('refuses an SD-JWT VC with neither exp (lifeTime) nor a status list entry (6.1)', async () => {
    expectRule(await create(compliant('c', { lifeTime: null })), 'body.lifeTime', '6.1', 'sd-jwt-exp-or-status');
  });

  it('refuses an SD-JWT VC without x5c key resolution (6.1.1)', async () => {
    expectRule(await create(compliant('d', { sdJwtTrustFormat: 'federation' })), 'body.sdJwtTrustFormat', '6.1.1', 'sd-jwt-x5c');
  });

  it('refuses signing with a self-signed key chain (6.1.1)', async () => {
    await createChain({ id: 'self-signed-attestation', usageType: 'attestation', type: 'standalone' });
    const reply = await create(compliant('e', { keyChainId: 'self-signed-attestation' }));
    expectRule(reply, 'body.keyChainId', '6.1.1', 'sd-jwt-x5c');
    expect(refusal(reply)[0]?.message).toContain("key chain 'self-signed-attestation' has a self-signed certificate");
  });

  it('refuses an unencrypted presentation step of interactive authorization (5.1)', async () => {
    await svc.raw('POST', '/api/verifier/config', { token: acme, body: { id: 'for-iae', dcql_query: QUERY } });
    const iaeActions = [{ type: 'openid4vp-presentation', presentationConfigId: 'for-iae', responseMode: 'iae_post' }];
    expectRule(await create(compliant('g', { iaeActions })), 'body.iaeActions.0.responseMode', '5.1', 'direct-post-jwt');
  });

  it('creates a configuration that meets the profile, and refuses a change that would break it', async () => {
    const reply = await create(compliant('badge'));
    expect(reply.status, reply.text).toBe(201);
    const patch = await svc.raw('PATCH', '/api/issuer/credentials/badge', { token: acme, body: { lifeTime: null } });
    expectRule(patch, 'body.lifeTime', '6.1', 'sd-jwt-exp-or-status');
    expect((await svc.raw('GET', '/api/issuer/credentials/badge', { token: acme })).body.lifeTime).toBe(3600);
  });
});

describe('presentations in a haip-1.0 tenant', () => {
  it('refuses a presentation configuration signed by a self-signed or a non-ES256 access chain (5, 7), then takes a CA-issued one', async () => {
    await createChain({ id: 'access-standalone', usageType: 'access', type: 'standalone' });
    const refused = await svc.raw('POST', '/api/verifier/config', {
      token: acme,
      body: { id: 'badge-check', dcql_query: QUERY, accessKeyChainId: 'access-standalone' },
    });
    expectRule(refused, 'body.accessKeyChainId', '5', 'request-x5c');
    expect(refusal(refused)[0]?.message).toContain("key chain 'access-standalone' has a self-signed certificate");
    await createChain({ id: 'access-es384', usageType: 'access', type: 'internalChain', algorithm: 'ES384' });
    const es384 = await svc.raw('POST', '/api/verifier/config', {
      token: acme,
      body: { id: 'badge-check', dcql_query: QUERY, accessKeyChainId: 'access-es384' },
    });
    expectRule(es384, 'body.accessKeyChainId', '7', 'request-es256');
    await createChain({ id: 'access-ca', usageType: 'access', type: 'internalChain' });
    const reply = await svc.raw('POST', '/api/verifier/config', {
      token: acme,
      body: { id: 'badge-check', dcql_query: QUERY, accessKeyChainId: 'access-ca' },
    });
    expect(reply.status, reply.text).toBe(201);
  });

  it('refuses plain direct_post and x509_san_dns requests (5.1, 5), opening no session', async () => {
    const sessionsBefore = (await svc.raw('GET', '/api/session', { token: acme })).body.length;
    const offer = (body: Record<string, unknown>) =>
      svc.raw('POST', '/api/verifier/offer', { token: acme, body: { response_type: 'uri', requestId: 'badge-check', ...body } });
    expectRule(await offer({ responseMode: 'direct_post' }), 'body.responseMode', '5.1', 'direct-post-jwt');
    expectRule(await offer({ clientIdPrefix: 'x509_san_dns' }), 'body.clientIdPrefix', '5', 'x509-hash');
    expect((await svc.raw('GET', '/api/session', { token: acme })).body.length).toBe(sessionsBefore);
  });

  it('signs the request object with x509_hash and a CA-issued leaf, the anchor left out, for direct_post.jwt', async () => {
    const offer = await svc.raw('POST', '/api/verifier/offer', { token: acme, body: { response_type: 'uri', requestId: 'badge-check' } });
    expect(offer.status, offer.text).toBe(201);
    const jwt = await (await fetch(offer.body.requestUri)).text();
    const header = decodeProtectedHeader(jwt);
    expect(header.alg).toBe('ES256');
    const chain = (header.x5c ?? []).map((der) => new x509.X509Certificate(der));
    expect(chain.length).toBeGreaterThan(0);
    for (const cert of chain) expect(await cert.isSelfSigned()).toBe(false);
    const payload = decodeJwt(jwt);
    expect(payload.client_id).toMatch(/^x509_hash:/);
    expect(payload.response_mode).toBe('direct_post.jwt');
    expect(payload.client_metadata).toMatchObject({ encrypted_response_enc_values_supported: ['A128GCM', 'A256GCM'] });
  });

  it('refuses making a self-signed chain the default that configurations sign with (5, 6.1), and requests go on', async () => {
    const makeDefault = (id: string) => svc.raw('PATCH', `/api/key-chain/${id}`, { token: acme, body: { default: true } });
    expect((await makeDefault('access-ca')).status).toBe(200);
    const saved = await svc.raw('POST', '/api/verifier/config', { token: acme, body: { id: 'by-default', dcql_query: QUERY } });
    expect(saved.status, saved.text).toBe(201);
    await createChain({ id: 'later', usageType: 'access', type: 'standalone' });
    const refused = await makeDefault('later');
    expectRule(refused, 'body.default', '5', 'request-x5c');
    expect(refusal(refused)[0]?.message).toContain("key chain 'later' has a self-signed certificate");
    const chains = (await svc.raw('GET', '/api/key-chain', { token: acme })).body as { id: string; default: boolean }[];
    expect(chains.find((c) => c.id === 'access-ca')?.default).toBe(true);
    expect(chains.find((c) => c.id === 'later')?.default).toBe(false);
    const standaloneStatus = await svc.raw('POST', '/api/key-chain', {
      token: acme,
      body: { id: 'status-standalone', usageType: 'statusList', type: 'standalone', default: true },
    });
    expectRule(standaloneStatus, 'body.default', '6.1', 'status-list-x5c');
    expect((await svc.raw('GET', '/api/key-chain/status-standalone', { token: acme })).status).toBe(404);
    const offer = await svc.raw('POST', '/api/verifier/offer', { token: acme, body: { response_type: 'uri', requestId: 'by-default' } });
    expect(offer.status, offer.text).toBe(201);
  });

  it('refuses switching the profile on while a presentation configuration is signed by a self-signed chain, naming it', async () => {
    const settings = (await svc.call('GET', '/api/issuer/config', { token: acme })).body;
    const off = await svc.raw('PUT', '/api/issuer/config', { token: acme, body: { ...settings, profile: 'none' } });
    expect(off.status, off.text).toBe(200);
    const saved = await svc.raw('POST', '/api/verifier/config', {
      token: acme,
      body: { id: 'later', dcql_query: QUERY, accessKeyChainId: 'later' },
    });
    expect(saved.status, saved.text).toBe(201);
    const on = await svc.raw('PUT', '/api/issuer/config', { token: acme, body: settings });
    expect(refusal(on)).toContainEqual({
      field: 'body.profile',
      message: expect.stringMatching(/^presentation configuration 'later' \(accessKeyChainId\): HAIP 1.0 section 5 \(request-x5c:/),
    });
    expect((await svc.raw('DELETE', '/api/verifier/config/later', { token: acme })).status).toBe(204);
    expect((await svc.raw('PUT', '/api/issuer/config', { token: acme, body: settings })).status).toBe(200);
  });
});

// Tenants created before default key chains were CA-issued may still have self-signed defaults: the
// profile can be switched on while nothing signs with them, but nothing new may then sign with them.
describe('a haip-1.0 tenant whose default key chains are self-signed', () => {
  /** A tenant in the profile whose default status list and access chains are self-signed (standalone). */
  async function legacyTenant(id: string) {
    const { token } = await svc.tenant(id);
    for (const usageType of ['statusList', 'access']) {
      const chain = { id: `standalone-${usageType}`, usageType, type: 'standalone', default: true };
      const reply = await svc.raw('POST', '/api/key-chain', { token, body: chain });
      expect(reply.status, reply.text).toBe(201);
    }
    const on = await svc.raw('PUT', '/api/issuer/config', { token, body: profileSettings() });
    expect(on.status, on.text).toBe(200);
    return token;
  }
  const useDefault = async (token: string, id: string) => {
    const reply = await svc.raw('PATCH', `/api/key-chain/${id}`, { token, body: { default: true } });
    expect(reply.status, reply.text).toBe(200);
  };

  it('refuses status lists signed by the self-signed default chain (6.1); the CA-issued default is taken', async () => {
    const token = await legacyTenant('legacy-status');
    const create = () =>
      svc.raw('POST', '/api/issuer/credentials', { token, body: compliant('f', { statusManagement: true, lifeTime: null }) });
    const refused = await create();
    expectRule(refused, 'body.statusListSigner', '6.1', 'status-list-x5c');
    expect(refusal(refused)[0]?.message).toContain("key chain 'standalone-statusList' has a self-signed certificate");
    expect((await svc.raw('GET', '/api/issuer/credentials/f', { token })).status).toBe(404);
    await useDefault(token, 'default-statusList');
    const reply = await create();
    expect(reply.status, reply.text).toBe(201);
  });

  it('refuses a presentation configuration signed by the self-signed default access chain (5); the CA-issued default is taken', async () => {
    const token = await legacyTenant('legacy-access');
    const create = () => svc.raw('POST', '/api/verifier/config', { token, body: { id: 'badge-check', dcql_query: QUERY } });
    const refused = await create();
    expectRule(refused, 'body.accessKeyChainId', '5', 'request-x5c');
    expect(refusal(refused)[0]?.message).toContain("key chain 'standalone-access' has a self-signed certificate");
    expect((await svc.raw('GET', '/api/verifier/config/badge-check', { token })).status).toBe(404);
    await useDefault(token, 'default-access');
    const reply = await create();
    expect(reply.status, reply.text).toBe(201);
  });
});

describe('wallets of a haip-1.0 tenant', () => {
  const offer = async (flow: string) => {
    const reply = await svc.raw('POST', '/api/issuer/offer', {
      token: acme,
      body: { response_type: 'uri', flow, credentialConfigurationIds: ['badge'] },
    });
    expect(reply.status, reply.text).toBe(201);
    return reply.body.credentialOffer.grants;
  };

  it('refuses PAR without a wallet attestation (4.3, 4.4.1)', async () => {
    const grants = await offer('authorization_code');
    const reply = await svc.raw('POST', '/issuers/acme/par', {
      form: {
        client_id: 'some-wallet',
        response_type: 'code',
        redirect_uri: WALLET_REDIRECT_URI,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        issuer_state: grants.authorization_code.issuer_state,
        scope: 'badge_scope',
      },
    });
    expect(reply.status, reply.text).toBe(401);
    expect(reply.body.error).toBe('invalid_client');
  });

  it('refuses the pre-authorized code grant without a wallet attestation (4.4.1)', async () => {
    const grants = await offer('pre_authorized_code');
    const code = grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code'];
    const reply = await svc.raw('POST', '/issuers/acme/token', {
      form: { grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code', 'pre-authorized_code': code },
    });
    expect(reply.status, reply.text).toBe(401);
    expect(reply.body.error).toBe('invalid_client');
  });

  it('publishes attestation as the only client authentication, and DPoP as required', async () => {
    const as = (await svc.raw('GET', '/.well-known/oauth-authorization-server/issuers/acme')).body;
    expect(as.token_endpoint_auth_methods_supported).toEqual(['attest_jwt_client_auth']);
    expect(as.dpop_bound_access_tokens_required).toBe(true);
    expect(as.require_pushed_authorization_requests).toBe(true);
    expect(as.dpop_signing_alg_values_supported).toContain('ES256');
  });
});
