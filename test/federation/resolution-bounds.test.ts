// How long a trust chain resolution may hold a presentation, and how often it reads the federation:
// a federation on loopback whose entities answer slowly, a service whose resolution deadline
// (FEDERATION_RESOLUTION_DEADLINE_MS) is short enough for a test, and responses posted at once.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { foreignSdJwtVc, startFederation, type TestEntity, type TestFederation, type TestKey, testKey } from '../support/federation.js';
import { PID_ADULT_QUERY, PID_VCT } from '../support/fixtures.js';
import { presentSdJwt, resolveRequest, responseForm } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey } from '../support/wallet.js';

const DEADLINE_MS = 1_000;
const SLOW_MS = 300;

let svc: TestService;
let admin: string;
let globex: string;
let fed: TestFederation;
let anchor: TestEntity;
let intermediate: TestEntity;
let issuer: TestEntity;
let credentialKey: TestKey;

const CLAIMS = { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true };

beforeAll(async () => {
  fed = await startFederation();
  anchor = await fed.entity('anchor');
  intermediate = await fed.entity('intermediate');
  issuer = await fed.entity('issuer');
  credentialKey = await testKey('issuer-credential-key');
  svc = await startService({ FEDERATION_RESOLUTION_DEADLINE_MS: String(DEADLINE_MS) });
  admin = await verifierTenant('acme');
  globex = await verifierTenant('globex');
});

/** A tenant that trusts `anchor` and asks for the PID through it (presentation configuration 'fed'). */
async function verifierTenant(id: string) {
  const token = (await svc.tenant(id)).token;
  // cacheTtlSeconds 0: every presentation resolves, so only sharing can spare a fetch.
  const settings = await svc.raw('PUT', '/api/issuer/config', {
    token,
    body: { federation: { role: 'leaf', mode: 'federation-only', trustAnchors: [{ entityId: anchor.id }], cacheTtlSeconds: 0 } },
  });
  expect(settings.status, settings.text).toBe(200);
  const query = {
    credentials: [{ ...PID_ADULT_QUERY.credentials[0], trusted_authorities: [{ type: 'openid_federation', values: [anchor.id] }] }],
  };
  const config = await svc.call('POST', '/api/verifier/config', { token, body: { id: 'fed', dcql_query: query } });
  expect(config.status, config.text).toBe(201);
  return token;
}
afterAll(async () => {
  await svc?.stop();
  await fed?.stop();
});

/** issuer -> intermediate -> anchor, answering at once. */
function buildFederation() {
  issuer.authorityHints = [intermediate.id];
  issuer.answerDelayMs = 0;
  issuer.metadata = { openid_credential_issuer: { credential_issuer: issuer.id, jwks: { keys: [credentialKey.publicJwk] } } };
  intermediate.authorityHints = [anchor.id];
  intermediate.subordinate(issuer);
  anchor.subordinate(intermediate);
}
afterEach(() => buildFederation());

/** A new session asking for the foreign issuer's PID, and `count` forms answering it with the same credential. */
async function responses(count: number, token = admin) {
  const offer = await svc.call('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId: 'fed' } });
  expect(offer.status, offer.text).toBe(201);
  const resolved = await resolveRequest(offer.body.uri as string);
  const holder = await holderKey();
  const credential = await foreignSdJwtVc(issuer.id, credentialKey, holder.privateJwk, CLAIMS, PID_VCT);
  const presentation = await presentSdJwt(credential, holder.privateJwk, resolved, ['given_name', 'age_over_18']);
  const form = await responseForm(resolved, { pid: [presentation] });
  const post = () => svc.raw('POST', new URL(resolved.responseUri).pathname, { form });
  return { session: offer.body.session as string, posts: Array.from({ length: count }, () => post) };
}

const sessionOf = async (id: string, token = admin) => (await svc.call('GET', `/api/session/${id}`, { token })).body;

describe('one resolution has a deadline', () => {
  it('30 slow authority hints end at the deadline, the chain refused naming it', async () => {
    buildFederation();
    const hints: string[] = [];
    for (let i = 0; i < 30; i++) {
      const slow = await fed.entity(`slow${i}`);
      slow.answerDelayMs = SLOW_MS;
      hints.push(slow.id);
    }
    issuer.authorityHints = [...hints, intermediate.id];
    const { session, posts } = await responses(1);
    const started = Date.now();
    const [post] = posts;
    const reply = await post?.();
    const elapsed = Date.now() - started;
    expect(reply?.status).toBe(400);
    const failed = await sessionOf(session);
    expect(failed.status).toBe('failed');
    expect(failed.errorReason).toMatch(`OpenID Federation: trust chain: not resolved within the deadline of ${DEADLINE_MS} ms`);
    // Without a deadline the 23 slow hints the statement budget allows take 23 × 300 ms.
    expect(elapsed).toBeLessThan(DEADLINE_MS + 1_500);
  });
});

describe('callers that need the same chain at once share one resolution', () => {
  it('four parallel responses to one presentation read the chain once', async () => {
    buildFederation();
    // Slow enough that all four arrive while the first resolution is under way.
    issuer.answerDelayMs = SLOW_MS;
    const { session, posts } = await responses(4);
    fed.requests.length = 0;
    const replies = await Promise.all(posts.map((post) => post()));
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1);
    expect((await sessionOf(session)).status).toBe('completed');
    expect(fed.requests).toEqual([
      '/issuer/.well-known/openid-federation',
      '/intermediate/.well-known/openid-federation',
      `/intermediate/fetch?sub=${encodeURIComponent(issuer.id)}`,
      '/anchor/.well-known/openid-federation',
      `/anchor/fetch?sub=${encodeURIComponent(intermediate.id)}`,
    ]);
  });

  it("one tenant's resolution never answers another's: parallel responses of two tenants each read the chain", async () => {
    buildFederation();
    issuer.answerDelayMs = SLOW_MS;
    const atAcme = await responses(1);
    const atGlobex = await responses(1, globex);
    fed.requests.length = 0;
    const replies = await Promise.all([...atAcme.posts, ...atGlobex.posts].map((post) => post()));
    expect(replies.map((reply) => reply.status)).toEqual([200, 200]);
    expect((await sessionOf(atAcme.session)).status).toBe('completed');
    expect((await sessionOf(atGlobex.session, globex)).status).toBe('completed');
    expect(fed.requests.filter((path) => path === '/issuer/.well-known/openid-federation')).toHaveLength(2);
    expect(fed.requests).toHaveLength(10);
  });

  it('a resolution that ended is not shared: the next presentation reads the chain again (cacheTtlSeconds 0)', async () => {
    buildFederation();
    fed.requests.length = 0;
    for (const fetched of [5, 10]) {
      const { session, posts } = await responses(1);
      const [post] = posts;
      expect((await post?.())?.status).toBe(200);
      expect((await sessionOf(session)).status).toBe('completed');
      expect(fed.requests).toHaveLength(fetched);
    }
  });
});
