// The verifier side of OpenID Federation: a federation on loopback (a trust anchor, an intermediate,
// a foreign credential issuer, real signed statements), presentations of the issuer's SD-JWT VCs
// through the real response endpoint, and every way a chain can fail refusing with the step named.
import type { JWK } from 'jose';
import { afterAll, assert, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Schemas } from '../support/api-types.js';
import { foreignSdJwtVc, startFederation, type TestEntity, type TestFederation, type TestKey, testKey } from '../support/federation.js';
import { PID, PID_ADULT_QUERY, PID_VCT } from '../support/fixtures.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { expectFieldErrors } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey, issueCredential } from '../support/wallet.js';

let svc: TestService;
let admin: string;
let fed: TestFederation;
let anchor: TestEntity;
let intermediate: TestEntity;
let issuer: TestEntity;
let otherAnchor: TestEntity;
let credentialKey: TestKey;
let rogueKey: TestKey;

const CLAIMS = { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true };
const DISCLOSED = ['given_name', 'age_over_18'];
const queryTrusting = (anchors: string[]) => ({
  credentials: [{ ...PID_ADULT_QUERY.credentials[0], trusted_authorities: [{ type: 'openid_federation', values: anchors }] }],
});

/**
 * The federation settings, every other issuer setting left to its default. Sent raw: the generated
 * types (a field with a default is required there) cannot express a body that leaves fields out.
 */
async function federationSettings(settings: Partial<Schemas['FederationSettingsInput']>) {
  const reply = await svc.raw('PUT', '/api/issuer/config', {
    token: admin,
    body: { federation: { role: 'leaf', trustAnchors: [{ entityId: anchor.id }], cacheTtlSeconds: 0, ...settings } },
  });
  expect(reply.status, reply.text).toBe(200);
}

/** The issuer, the intermediate and the anchor as a working chain; each test breaks what it tests. */
function buildFederation() {
  issuer.authorityHints = [intermediate.id];
  issuer.signConfigurationWith = undefined;
  issuer.subordinates.clear();
  issuer.metadata = { openid_credential_issuer: { credential_issuer: issuer.id, jwks: { keys: [credentialKey.publicJwk] } } };
  intermediate.authorityHints = [anchor.id];
  intermediate.subordinates.clear();
  intermediate.subordinate(issuer);
  anchor.subordinates.clear();
  anchor.subordinate(intermediate);
  otherAnchor.subordinate({ id: `${fed.url}/someone-else`, jwks: { keys: [] } });
}

beforeAll(async () => {
  fed = await startFederation();
  anchor = await fed.entity('anchor');
  intermediate = await fed.entity('intermediate');
  issuer = await fed.entity('issuer');
  otherAnchor = await fed.entity('other-anchor');
  credentialKey = await testKey('issuer-credential-key');
  rogueKey = await testKey('rogue-key');
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  expect((await svc.call('POST', '/api/issuer/credentials', { token: admin, body: PID })).status).toBe(201);
  const trust = await svc.call('POST', '/api/trust-list', {
    token: admin,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(trust.status, trust.text).toBe(201);
  // A query that trusts federation anchors needs the settings first; each test sets its own.
  await federationSettings({});
  for (const [id, dcql_query] of [
    ['fed', queryTrusting([anchor.id])],
    ['other-anchor', queryTrusting([otherAnchor.id])],
    ['plain', PID_ADULT_QUERY],
  ] as const) {
    const config = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id, dcql_query } });
    expect(config.status, config.text).toBe(201);
  }
});
afterAll(async () => {
  await svc?.stop();
  await fed?.stop();
});
// Before each test, not after: a test run alone (-t) starts from the same working chain as the first.
beforeEach(() => buildFederation());

async function foreignCredential(key = credentialKey, kid?: string) {
  const holder = await holderKey();
  const signing = kid ? { ...key, privateJwk: { ...key.privateJwk, kid } } : key;
  return { credential: await foreignSdJwtVc(issuer.id, signing, holder.privateJwk, CLAIMS, PID_VCT), holder: holder.privateJwk };
}

async function present(requestId: string, { credential, holder }: { credential: string; holder: JWK }, token = admin) {
  const offer = await svc.call('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId } });
  expect(offer.status, offer.text).toBe(201);
  // No uri only for iso-18013-7 requests.
  assert.isDefined(offer.body.uri, offer.text);
  const resolved = await resolveRequest(offer.body.uri);
  const reply = await submit(resolved, { pid: [await presentSdJwt(credential, holder, resolved, DISCLOSED)] });
  const session = (await svc.call('GET', `/api/session/${offer.body.session}`, { token })).body;
  const logs = (await svc.call('GET', `/api/session/${offer.body.session}/logs`, { token })).body;
  return { reply, session, logs: JSON.stringify(logs) };
}

async function expectAccepted(result: Awaited<ReturnType<typeof present>>) {
  expect(result.reply.status, JSON.stringify(result.reply.body)).toBe(200);
  expect(result.session.status).toBe('completed');
}

function expectRefused(result: Awaited<ReturnType<typeof present>>, reason: RegExp) {
  expect(result.reply.status).toBe(400);
  expect(result.session.status).toBe('failed');
  expect(result.session.errorReason).toMatch(reason);
  expect(result.logs).toMatch(reason);
}

describe('a credential whose issuer resolves to a trusted anchor', () => {
  it('is accepted: issuer configuration, intermediate and anchor read, the credential key taken from the leaf metadata', async () => {
    await federationSettings({ mode: 'federation-only' });
    fed.requests.length = 0;
    const result = await present('fed', await foreignCredential());
    await expectAccepted(result);
    const credentials = (await svc.running.services.sessions.get('acme', result.session.id)).private?.credentials as Record<
      string,
      unknown
    >[];
    expect(credentials[0]).toMatchObject({ issuer: issuer.id, authority: { type: 'openid_federation', values: [anchor.id] } });
    expect(fed.requests).toEqual([
      '/issuer/.well-known/openid-federation',
      '/intermediate/.well-known/openid-federation',
      `/intermediate/fetch?sub=${encodeURIComponent(issuer.id)}`,
      '/anchor/.well-known/openid-federation',
      `/anchor/fetch?sub=${encodeURIComponent(intermediate.id)}`,
    ]);
  });

  it('is accepted with the settings anchors when the query names none', async () => {
    await federationSettings({ mode: 'federation-only' });
    await expectAccepted(await present('plain', await foreignCredential()));
  });

  it("reads the anchor's entity configuration where the settings say", async () => {
    const entityConfigurationUri = `${anchor.id}/.well-known/openid-federation?from=settings`;
    await federationSettings({ mode: 'federation-only', trustAnchors: [{ entityId: anchor.id, entityConfigurationUri }] });
    fed.requests.length = 0;
    await expectAccepted(await present('fed', await foreignCredential()));
    expect(fed.requests).toContain('/anchor/.well-known/openid-federation?from=settings');
    expect(fed.requests).not.toContain('/anchor/.well-known/openid-federation');
  });
});

describe('every other outcome refuses, naming the step', () => {
  it('the chain is broken: the intermediate has no statement about the issuer', async () => {
    await federationSettings({ mode: 'federation-only' });
    intermediate.subordinates.clear();
    expectRefused(await present('fed', await foreignCredential()), /OpenID Federation: trust chain: subordinate statement: .*answered 404/);
  });

  it('a statement has expired', async () => {
    await federationSettings({ mode: 'federation-only' });
    intermediate.subordinate(issuer, { expiresIn: -300 });
    expectRefused(await present('fed', await foreignCredential()), /subordinate statement: the statement has expired/);
  });

  it('the query trusts an unrelated anchor', async () => {
    await federationSettings({ mode: 'federation-only' });
    expectRefused(
      await present('other-anchor', await foreignCredential()),
      /OpenID Federation: trust chain: no authority_hints .* lead to/,
    );
  });

  it('the credential is signed by a key outside the leaf metadata', async () => {
    await federationSettings({ mode: 'federation-only' });
    expectRefused(await present('fed', await foreignCredential(rogueKey)), /credential key: kid rogue-key is not a key/);
    // Naming the issuer's kid does not help: the signature does not verify with that key.
    expectRefused(await present('fed', await foreignCredential(rogueKey, credentialKey.publicJwk.kid)), /credential/);
  });

  it("the issuer's entity configuration is not signed by its own keys", async () => {
    await federationSettings({ mode: 'federation-only' });
    issuer.signConfigurationWith = rogueKey;
    expectRefused(await present('fed', await foreignCredential()), /issuer entity configuration: signed with key rogue-key/);
  });

  it("the intermediate vouches for other keys than those that sign the issuer's configuration", async () => {
    await federationSettings({ mode: 'federation-only' });
    intermediate.subordinate({ id: issuer.id, jwks: { keys: [rogueKey.publicJwk] } });
    expectRefused(await present('fed', await foreignCredential()), /subordinate statement: signed with key issuer-federation-key/);
  });

  it("the anchor's policy replaces the issuer's keys (value): the credential key is no longer the issuer's", async () => {
    await federationSettings({ mode: 'federation-only' });
    anchor.subordinate(intermediate, {
      metadata_policy: { openid_credential_issuer: { jwks: { value: { keys: [rogueKey.publicJwk] } } } },
    });
    expectRefused(await present('fed', await foreignCredential()), /credential key: kid issuer-credential-key/);
  });

  it("the intermediate's policy cannot bring back a parameter the anchor's policy removes (value null, then default)", async () => {
    await federationSettings({ mode: 'federation-only' });
    anchor.subordinate(intermediate, { metadata_policy: { openid_credential_issuer: { logo_uri: { value: null } } } });
    await expectAccepted(await present('fed', await foreignCredential()));
    intermediate.subordinate(issuer, {
      metadata_policy: { openid_credential_issuer: { logo_uri: { default: 'https://tracker.example/logo.png' } } },
    });
    expectRefused(
      await present('fed', await foreignCredential()),
      /metadata policy: openid_credential_issuer.logo_uri: value null removes the parameter, which add or default would set again/,
    );
  });

  it("the anchor's constraints allow no intermediate (max_path_length 0)", async () => {
    await federationSettings({ mode: 'federation-only' });
    anchor.subordinate(intermediate, { constraints: { max_path_length: 1 } });
    await expectAccepted(await present('fed', await foreignCredential()));
    anchor.subordinate(intermediate, { constraints: { max_path_length: 0 } });
    expectRefused(
      await present('fed', await foreignCredential()),
      /constraints: .*anchor allows at most 0 intermediates below it, the chain has 1/,
    );
  });

  it('a policy the metadata does not satisfy (one_of), and a critical operator svc does not understand', async () => {
    await federationSettings({ mode: 'federation-only' });
    anchor.subordinate(intermediate, {
      metadata_policy: { openid_credential_issuer: { credential_issuer: { one_of: ['https://elsewhere.example'] } } },
    });
    expectRefused(await present('fed', await foreignCredential()), /metadata policy: openid_credential_issuer.credential_issuer is/);
    anchor.subordinate(intermediate, {
      metadata_policy: { openid_credential_issuer: { credential_issuer: { regexp: '^x' } } },
      metadata_policy_crit: ['regexp'],
    });
    expectRefused(await present('fed', await foreignCredential()), /metadata policy: .*critical operator regexp/);
    // The same operator, not critical, is left out (OpenID Federation 1.0 section 6.1.4.2).
    anchor.subordinate(intermediate, {
      metadata_policy: { openid_credential_issuer: { credential_issuer: { regexp: '^x', essential: true } } },
    });
    await expectAccepted(await present('fed', await foreignCredential()));
  });
});

describe('what an issuer controls is bounded', () => {
  it('a chain with more intermediates than allowed is refused', async () => {
    await federationSettings({ mode: 'federation-only' });
    // issuer -> intermediate -> hop0 -> ... -> hop4 -> anchor: five intermediates, one too many.
    let below: TestEntity = intermediate;
    for (let i = 0; i < 5; i++) {
      const hop = await fed.entity(`hop${i}`);
      below.authorityHints = [hop.id];
      hop.subordinate(below);
      below = hop;
    }
    below.authorityHints = [anchor.id];
    anchor.subordinate(below);
    expectRefused(await present('fed', await foreignCredential()), /trust chain: more than 4 intermediates/);
  });

  it('authority hints that loop end, refused', async () => {
    await federationSettings({ mode: 'federation-only' });
    intermediate.authorityHints = [issuer.id];
    issuer.subordinate(intermediate);
    expectRefused(await present('fed', await foreignCredential()), /OpenID Federation: trust chain: no authority_hints/);
  });

  it('a statement larger than allowed is not read', async () => {
    await federationSettings({ mode: 'federation-only' });
    issuer.metadata = { ...issuer.metadata, padding: { data: 'x'.repeat(70 * 1024) } };
    expectRefused(await present('fed', await foreignCredential()), /issuer entity configuration: .* could not be read/);
  });
});

describe("the tenant's mode", () => {
  let own: { credential: string; holder: JWK };
  beforeAll(async () => {
    own = await issueCredential(svc, admin, 'pid', CLAIMS); // x5c, trusted through the tenant's LoTE trust list
  });

  it('federation-only refuses a credential trusted only through LoTE', async () => {
    await federationSettings({ mode: 'federation-only' });
    expectRefused(await present('plain', own), /OpenID Federation: credential: the header names no kid/);
  });

  it('hybrid: federation first, LoTE when the issuer does not resolve', async () => {
    await federationSettings({ mode: 'hybrid' });
    await expectAccepted(await present('plain', own));
    await expectAccepted(await present('plain', await foreignCredential()));
    intermediate.subordinates.clear();
    expectRefused(await present('plain', await foreignCredential()), /OpenID Federation: trust chain: .*; LoTE: .*no x5c/);
  });

  it('lote-only never resolves a chain, and refuses a query that asks for federation trust', async () => {
    await federationSettings({ mode: 'lote-only' });
    fed.requests.length = 0;
    await expectAccepted(await present('plain', own));
    expectRefused(await present('plain', await foreignCredential()), /no x5c chain/);
    expectRefused(await present('fed', await foreignCredential()), /mode is lote-only/);
    expect(fed.requests).toEqual([]);
  });

  it('a tenant without federation settings cannot make a query that trusts federation anchors', async () => {
    const globex = (await svc.tenant('globex')).token;
    const config = await svc.raw('POST', '/api/verifier/config', {
      token: globex,
      body: { id: 'fed', dcql_query: queryTrusting([anchor.id]) },
    });
    expectFieldErrors(config, ['body.dcql_query.credentials.0.trusted_authorities.0.type']);
  });

  it('a query made before the federation settings were removed refuses, saying they are missing', async () => {
    const removed = await svc.raw('PUT', '/api/issuer/config', { token: admin, body: { federation: null } });
    expect(removed.status, removed.text).toBe(200);
    fed.requests.length = 0;
    expectRefused(
      await present('fed', await foreignCredential()),
      /untrusted issuer: the query trusts OpenID Federation anchors, and the tenant has no federation settings \(federation in PUT \/api\/trust-config\)/,
    );
    expect(fed.requests).toEqual([]);
  });
});

describe('trust decisions are kept for cacheTtlSeconds', () => {
  it('a second presentation reads no statement; a settings change forgets', async () => {
    await federationSettings({ mode: 'federation-only', cacheTtlSeconds: 300 });
    await expectAccepted(await present('fed', await foreignCredential()));
    fed.requests.length = 0;
    await expectAccepted(await present('fed', await foreignCredential()));
    expect(fed.requests).toEqual([]);
    await federationSettings({ mode: 'federation-only', cacheTtlSeconds: 300 });
    intermediate.subordinates.clear();
    expectRefused(await present('fed', await foreignCredential()), /subordinate statement/);
  });
});
