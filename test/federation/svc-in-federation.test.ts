// svc as a leaf of a federation: an intermediate on loopback issues a subordinate statement about
// svc's issuer, a trust anchor above it. @openid-federation/core, a resolver independent of svc's (its
// signatures checked here with jose, not svc's node:crypto JWS code), resolves svc's entity
// configuration to the anchor as an outside check would; and a credential svc issues with federation
// trust is verified by svc through that chain.
import { resolveTrustChains, type VerifyCallback } from '@openid-federation/core';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JWK, jwtVerify } from 'jose';
import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';
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

const ENTITY_STATEMENT = { typ: 'entity-statement+jwt' };

/** [iss, sub, kid] of every statement whose signature the resolver had checked here. */
let verifiedWithJose: [unknown, unknown, unknown][] = [];

/** The resolver's signature check, by jose, with the key it picked (the statement's own or its superior's). */
const verifyWithJose: VerifyCallback = async ({ jwt, jwk, claims }) => {
  try {
    await jwtVerify(jwt, createLocalJWKSet({ keys: [jwk as JWK] }), ENTITY_STATEMENT);
  } catch {
    return false;
  }
  verifiedWithJose.push([claims.iss, claims.sub, jwk.kid]);
  return true;
};

function resolveSvc(trustAnchorEntityIds: string[]) {
  verifiedWithJose = [];
  return resolveTrustChains({ entityId: issuerId, trustAnchorEntityIds, verifyJwtCallback: verifyWithJose });
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
  // Raw (here and below): the settings leave every other field to its default, which the generated
  // types (a field with a default is required there) cannot express.
  const settings = await svc.raw('PUT', '/api/issuer/config', {
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

describe("svc's entity configuration, resolved by @openid-federation/core", () => {
  it('resolves to the trust anchor through the intermediate, with the credential keys in the leaf metadata', async () => {
    const chains = await resolveSvc([anchor.id]);
    expect(chains).toHaveLength(1);
    const [trust] = chains;
    // The library's chain: the subordinate statements upward, then the anchor's configuration. It does
    // not itself compare each statement's iss with the next one's sub (OpenID Federation 1.0 section
    // 10.2), nor check that a superior vouches for the keys that sign its subordinate's configuration:
    // both are checked here.
    expect(trust?.chain.map((statement) => [statement.iss, statement.sub])).toEqual([
      [intermediate.id, issuerId],
      [anchor.id, intermediate.id],
      [anchor.id, anchor.id],
    ]);
    expect(trust?.trustAnchorEntityConfiguration.sub).toBe(anchor.id);
    // svc's configuration was checked against svc's federation key, the intermediate's statement against the intermediate's.
    const federationKey = (await svc.call('GET', '/api/key-chain/default-federation', { token: issuerToken })).body.activeJwk;
    expect(verifiedWithJose).toEqual(
      expect.arrayContaining([
        [issuerId, issuerId, federationKey.kid],
        [intermediate.id, issuerId, intermediate.key.publicJwk.kid],
      ]),
    );
    const configuration = await (await fetch(`${issuerId}/.well-known/openid-federation`)).text();
    await jwtVerify(configuration, createLocalJWKSet(trust?.chain[0]?.jwks as { keys: JWK[] }), ENTITY_STATEMENT);

    const metadata = trust?.resolvedLeafMetadata?.openid_credential_issuer;
    expect(metadata).toMatchObject({ credential_issuer: issuerId, client_registration_types_supported: [] });
    const attestation = (await svc.call('GET', '/api/key-chain/default-attestation', { token: issuerToken })).body.activeJwk;
    expect(metadata?.jwks?.keys.map((key) => key.kid)).toContain(attestation.kid);
    // The built-in authorization server's metadata passed the library's validation too.
    expect(Object.keys(trust?.resolvedLeafMetadata ?? {})).toEqual(expect.arrayContaining(['oauth_authorization_server']));
  });

  it('does not resolve to an anchor svc is not below', async () => {
    expect(await resolveSvc([unrelated.id])).toEqual([]);
    const besideTheAnchor = await resolveSvc([unrelated.id, anchor.id]);
    expect(besideTheAnchor.map((trust) => trust.trustAnchorEntityConfiguration.sub)).toEqual([anchor.id]);
  });
});

describe('a credential svc issues with federation trust', () => {
  let verifier: string;
  beforeAll(async () => {
    verifier = (await svc.tenant('verifier')).token;
    const settings = await svc.raw('PUT', '/api/issuer/config', {
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
    // No uri only for iso-18013-7 requests.
    assert.isDefined(offer.body.uri, offer.text);
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
