// svc as a leaf of a federation: an intermediate on loopback issues a subordinate statement about
// svc's issuer, a trust anchor above it. A resolver written here, independent of svc's (jose's JWT
// verification and key sets, not svc's node:crypto JWS code), walks svc's entity configuration up to
// the anchor; and a credential svc issues with federation trust is verified by svc through that chain.
// (@openid-federation/core 0.2.1 was tried first: it refuses any openid_credential_issuer metadata
// without client_registration_types_supported, a parameter OpenID Federation 1.0 defines for
// openid_provider metadata only, so it cannot resolve a credential issuer that follows the spec.)
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JWK, type JWTPayload, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFederation, type TestEntity, type TestFederation } from '../support/federation.js';
import { PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

let svc: TestService;
let fed: TestFederation;
let anchor: TestEntity;
let intermediate: TestEntity;
let unrelated: TestEntity;
let issuerToken: string;
let issuerId: string;

type Statement = JWTPayload & { jwks: { keys: JWK[] }; authority_hints?: string[]; metadata?: Record<string, any> };

/** A statement verified with `jwks` (typ entity-statement+jwt, exp in the future), by jose. */
async function verified(jwt: string, jwks: { keys: JWK[] }): Promise<Statement> {
  const { payload } = await jwtVerify(jwt, createLocalJWKSet(jwks), {
    typ: 'entity-statement+jwt',
    requiredClaims: ['iss', 'sub', 'iat', 'exp'],
  });
  return payload as Statement;
}

async function read(url: string) {
  const reply = await fetch(url);
  expect(reply.headers.get('content-type'), url).toContain('application/entity-statement+jwt');
  return reply.text();
}

/**
 * A minimal bottom-up resolution (OpenID Federation 1.0 section 10): each entity configuration is
 * self-signed, each superior's subordinate statement is signed by the superior and vouches for the
 * keys that sign the subordinate's configuration, until an entity among `anchors`. Undefined when no
 * path of authority_hints reaches one.
 */
async function independentlyResolve(entityId: string, anchors: string[], depth = 0): Promise<Statement[] | undefined> {
  const configurationJwt = await read(`${entityId}/.well-known/openid-federation`);
  const configuration = await verified(configurationJwt, (decodeJwt(configurationJwt) as Statement).jwks);
  expect([configuration.iss, configuration.sub]).toEqual([entityId, entityId]);
  if (anchors.includes(entityId)) return [configuration];
  if (depth > 4) return undefined;
  for (const superiorId of configuration.authority_hints ?? []) {
    const superiorJwt = await read(`${superiorId}/.well-known/openid-federation`);
    const superior = await verified(superiorJwt, (decodeJwt(superiorJwt) as Statement).jwks);
    const fetchEndpoint = superior.metadata?.federation_entity?.federation_fetch_endpoint as string;
    const statement = await verified(await read(`${fetchEndpoint}?sub=${encodeURIComponent(entityId)}`), superior.jwks);
    expect([statement.iss, statement.sub]).toEqual([superiorId, entityId]);
    await verified(configurationJwt, statement.jwks); // the superior vouches for the keys that sign the configuration
    const above = await independentlyResolve(superiorId, anchors, depth + 1);
    // `above` starts with the superior's configuration, which stays only when the superior is the anchor.
    if (above) return [configuration, statement, ...(above.length === 1 ? above : above.slice(1))];
  }
  return undefined;
}

beforeAll(async () => {
  fed = await startFederation();
  anchor = await fed.entity('anchor');
  intermediate = await fed.entity('intermediate');
  unrelated = await fed.entity('unrelated');
  svc = await startService();
  issuerToken = (await svc.tenant('issuer')).token;
  issuerId = `${svc.url}/issuers/issuer`;
  const created = await svc.call('POST', '/api/issuer/credentials', {
    token: issuerToken,
    body: { ...PID, sdJwtTrustFormat: 'federation', statusManagement: true },
  });
  expect(created.status, created.text).toBe(201);
  const settings = await svc.call('PUT', '/api/issuer/config', {
    token: issuerToken,
    body: { federation: { role: 'leaf', authorityHints: [intermediate.id] } },
  });
  expect(settings.status, settings.text).toBe(200);
  // The intermediate registers svc's issuer with the federation keys svc publishes.
  const configuration = await (await fetch(`${issuerId}/.well-known/openid-federation`)).text();
  intermediate.subordinate({ id: issuerId, jwks: (decodeJwt(configuration) as { jwks: { keys: JWK[] } }).jwks });
  intermediate.authorityHints = [anchor.id];
  anchor.subordinate(intermediate);
  unrelated.subordinate({ id: `${fed.url}/someone-else`, jwks: { keys: [] } });
});
afterAll(async () => {
  await svc?.stop();
  await fed?.stop();
});

describe("svc's entity configuration, resolved by an independent resolver", () => {
  it('resolves to the trust anchor through the intermediate, with the credential keys in the leaf metadata', async () => {
    const chain = await independentlyResolve(issuerId, [anchor.id]);
    expect(chain?.map((statement) => [statement.iss, statement.sub])).toEqual([
      [issuerId, issuerId],
      [intermediate.id, issuerId],
      [anchor.id, intermediate.id],
      [anchor.id, anchor.id],
    ]);
    const metadata = chain?.[0]?.metadata?.openid_credential_issuer as { credential_issuer: string; jwks: { keys: JWK[] } };
    expect(metadata.credential_issuer).toBe(issuerId);
    const attestation = (await svc.call('GET', '/api/key-chain/default-attestation', { token: issuerToken })).body.activeJwk;
    expect(metadata.jwks.keys.map((key) => key.kid)).toContain(attestation.kid);
  });

  it('does not resolve to an anchor svc is not below', async () => {
    expect(await independentlyResolve(issuerId, [unrelated.id])).toBeUndefined();
  });
});

describe('a credential svc issues with federation trust', () => {
  let verifier: string;
  beforeAll(async () => {
    verifier = (await svc.tenant('verifier')).token;
    const settings = await svc.call('PUT', '/api/issuer/config', {
      token: verifier,
      body: { federation: { role: 'leaf', mode: 'federation-only', trustAnchors: [{ entityId: anchor.id }], cacheTtlSeconds: 0 } },
    });
    expect(settings.status, settings.text).toBe(200);
    const query = {
      credentials: [{ ...PID_ADULT_QUERY.credentials[0], trusted_authorities: [{ type: 'openid_federation', values: [anchor.id] }] }],
    };
    expect((await svc.call('POST', '/api/verifier/config', { token: verifier, body: { id: 'fed', dcql_query: query } })).status).toBe(201);
  });

  async function present(issued: { credential: string; holder: JWK }) {
    const offer = await svc.call('POST', '/api/verifier/offer', { token: verifier, body: { response_type: 'uri', requestId: 'fed' } });
    const resolved = await resolveRequest(offer.body.uri);
    const reply = await submit(resolved, {
      pid: [await presentSdJwt(issued.credential, issued.holder, resolved, ['given_name', 'age_over_18'])],
    });
    return { reply, session: await svc.running.services.sessions.get('verifier', offer.body.session) };
  }

  it('is verified through the chain, its status list signer trusted through the same chain, by a tenant without trust lists', async () => {
    const issued = await issueCredential(svc, issuerToken, 'pid', { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true });
    const payload = decodeJwt(issued.credential.split('~')[0] as string) as { status?: { status_list?: unknown } };
    expect(payload.status?.status_list).toBeDefined();
    expect(decodeProtectedHeader(issued.credential.split('~')[0] as string).x5c).toBeUndefined();
    const { reply, session } = await present(issued);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(session.status).toBe('completed');
    expect(session.private?.credentials).toEqual([
      expect.objectContaining({ issuer: issuerId, authority: { type: 'openid_federation', values: [anchor.id] } }),
    ]);
  });

  it('is refused once revoked: the status list was read and trusted', async () => {
    const issued = await issueCredential(svc, issuerToken, 'pid', { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true });
    const revoked = await svc.call('POST', '/api/session/revoke', { token: issuerToken, body: { sessionId: issued.session, status: 1 } });
    expect(revoked.status, revoked.text).toBe(200);
    // The verifier keeps fetched status lists up to their ttl: cleared to read the change now.
    expect((await svc.call('DELETE', '/api/cache/status-list', { token: verifier })).status).toBe(204);
    const { reply, session } = await present(issued);
    expect(reply.status).toBe(400);
    expect(session.errorReason).toBe('status: revoked');
  });
});
