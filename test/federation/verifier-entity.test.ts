// svc's verifier as an OpenID Federation entity: the tenant's entity configuration carries its
// openid_credential_verifier metadata, a trust anchor on loopback vouches for it, and a presentation
// request with the client identifier prefix openid_federation (OpenID4VP 1.0 section 5.9.3) carries
// the trust chain in its JWS header. A wallet-side check (test/support/federation-wallet.ts, jose and
// @openid-federation/core, not svc's code) verifies the chain and the request with the keys of the
// resolved metadata, then a credential is presented and the session completes.
import { resolveTrustChains, type VerifyCallback } from '@openid-federation/core';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, importJWK, type JWK, jwtVerify, SignJWT } from 'jose';
import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';
import { startFederation, type TestEntity, type TestFederation, testKey } from '../support/federation.js';
import { type TrustedAnchor, verifyFederatedRequest, verifyTrustChain } from '../support/federation-wallet.js';
import { PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import { presentSdJwt, requestOf, submit } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

let svc: TestService;
let fed: TestFederation;
let anchor: TestEntity;
let token: string;
let entityId: string;
/** The anchor as the wallet knows it: its entity identifier and its keys. */
let trusted: TrustedAnchor;

const verifyWithJose: VerifyCallback = async ({ jwt, jwk }) => {
  try {
    await jwtVerify(jwt, createLocalJWKSet({ keys: [jwk as JWK] }), { typ: 'entity-statement+jwt' });
    return true;
  } catch {
    return false;
  }
};

const entityConfiguration = async () => (await fetch(`${entityId}/.well-known/openid-federation`)).text();

beforeAll(async () => {
  fed = await startFederation();
  anchor = await fed.entity('anchor');
  trusted = { entityId: anchor.id, jwks: anchor.jwks };
  svc = await startService();
  token = (await svc.tenant('fedverifier')).token;
  entityId = `${svc.url}/issuers/fedverifier`;
  // The tenant issues the PID (trusted through its own chain) and verifies it.
  const created = await svc.call('POST', '/api/issuer/credentials', { token, body: { ...PID, sdJwtTrustFormat: 'federation' } });
  expect(created.status, created.text).toBe(201);
  // Raw: the settings leave fields to their defaults, which the generated types cannot express.
  const settings = await svc.raw('PUT', '/api/trust-config', {
    token,
    body: {
      federation: { role: 'leaf', mode: 'federation-only', authorityHints: [anchor.id], trustAnchors: [{ entityId: anchor.id }] },
    },
  });
  expect(settings.status, settings.text).toBe(200);
  const config = await svc.call('POST', '/api/verifier/config', { token, body: { id: 'adult', dcql_query: PID_ADULT_QUERY } });
  expect(config.status, config.text).toBe(201);
  anchor.subordinate({ id: entityId, jwks: (decodeJwt(await entityConfiguration()) as { jwks: { keys: JWK[] } }).jwks });
});
afterAll(async () => {
  await svc?.stop();
  await fed?.stop();
});

/** A presentation request with prefix openid_federation, and its request object as the wallet fetches it. */
async function federatedRequest() {
  const offer = await svc.call('POST', '/api/verifier/offer', {
    token,
    body: { response_type: 'uri', requestId: 'adult', clientIdPrefix: 'openid_federation' },
  });
  expect(offer.status, offer.text).toBe(201);
  assert.isDefined(offer.body.requestUri, offer.text);
  const fetched = await fetch(offer.body.requestUri);
  expect(fetched.status).toBe(200);
  return { offer: offer.body, requestObject: await fetched.text() };
}

describe("the verifier's entity configuration", () => {
  it('carries openid_credential_verifier metadata with the access keys, and resolves to the anchor through @openid-federation/core', async () => {
    const chains = await resolveTrustChains({ entityId, trustAnchorEntityIds: [anchor.id], verifyJwtCallback: verifyWithJose });
    expect(chains).toHaveLength(1);
    const metadata = chains[0]?.resolvedLeafMetadata?.openid_credential_verifier as Record<string, any>;
    expect(metadata).toMatchObject({
      client_name: 'Tenant fedverifier',
      client_registration_types: ['automatic'],
      response_types: ['vp_token'],
    });
    expect(Object.keys(metadata.vp_formats_supported)).toEqual(expect.arrayContaining(['dc+sd-jwt', 'mso_mdoc']));
    const access = (await svc.call('GET', '/api/key-chain/default-access', { token })).body.activeJwk;
    expect(metadata.jwks.keys.map((key: JWK) => key.kid)).toContain(access.kid);
    // Signed as before, by the federation key; the issuer metadata is still there.
    expect(Object.keys(decodeJwt(await entityConfiguration()).metadata as object)).toEqual(
      expect.arrayContaining(['openid_credential_issuer', 'openid_credential_verifier']),
    );
  });

  it('has no verifier metadata for a tenant without a presentation configuration', async () => {
    const other = (await svc.tenant('issueronly')).token;
    const settings = await svc.raw('PUT', '/api/trust-config', { token: other, body: { federation: { role: 'leaf' } } });
    expect(settings.status, settings.text).toBe(200);
    const statement = await (await fetch(`${svc.url}/issuers/issueronly/.well-known/openid-federation`)).text();
    expect(Object.keys(decodeJwt(statement).metadata as object)).not.toContain('openid_credential_verifier');
  });
});

describe('a presentation request with the client identifier prefix openid_federation', () => {
  it('carries the trust chain, passes the wallet-side check, and completes with a presented SD-JWT VC', async () => {
    const { offer, requestObject } = await federatedRequest();
    const clientId = `openid_federation:${entityId}`;
    expect(new URL(offer.uri as string).searchParams.get('client_id')).toBe(clientId);
    const header = decodeProtectedHeader(requestObject) as Record<string, any>;
    expect(header.x5c).toBeUndefined();
    // The tenant's configuration, the anchor's statement about it, the anchor's configuration.
    expect(header.trust_chain.map((jwt: string) => [decodeJwt(jwt).iss, decodeJwt(jwt).sub])).toEqual([
      [entityId, entityId],
      [anchor.id, entityId],
      [anchor.id, anchor.id],
    ]);
    const { payload, verifierMetadata } = await verifyFederatedRequest(requestObject, trusted);
    expect(payload).toMatchObject({ client_id: clientId, response_mode: 'direct_post' });
    expect(payload.client_metadata).toBeUndefined();
    expect(verifierMetadata.jwks.keys.map((key: JWK) => key.kid)).toContain(header.kid);

    const issued = await issueCredential(svc, token, 'pid', { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true });
    const request = requestOf(payload);
    const reply = await submit(request, {
      pid: [await presentSdJwt(issued.credential, issued.holder, request, ['given_name', 'age_over_18'])],
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const session = await svc.running.services.sessions.get('fedverifier', offer.session);
    expect(session.status).toBe('completed');
    const result = await svc.call('GET', `/api/session/${offer.session}`, { token });
    expect(result.status).toBe(200);
  });

  it('is refused by the wallet-side check when the chain is broken, expired or does not vouch for the signing key; a policy applies', async () => {
    const { requestObject } = await federatedRequest();
    const chain = (decodeProtectedHeader(requestObject) as { trust_chain: string[] }).trust_chain;
    await expect(verifyTrustChain(chain, entityId, trusted)).resolves.toHaveProperty('openid_credential_verifier');
    // Broken: the anchor's statement about the tenant, signed by an impostor's key under the anchor's kid.
    const impostor = await fed.entity('impostor');
    const forged = await new SignJWT(decodeJwt(chain[1] as string))
      .setProtectedHeader({ alg: 'ES256', typ: 'entity-statement+jwt', kid: anchor.key.publicJwk.kid as string })
      .sign(await importJWK(impostor.key.privateJwk, 'ES256'));
    await expect(verifyTrustChain([chain[0] as string, forged, chain[2] as string], entityId, trusted)).rejects.toThrow(/statement 1/);
    // Expired: the anchor's statement, signed by the anchor, past its exp.
    anchor.subordinate({ id: entityId, jwks: (decodeJwt(chain[0] as string) as { jwks: { keys: JWK[] } }).jwks }, { expiresIn: -60 });
    const expired = (await anchor.subordinateStatement(entityId)) as string;
    await expect(verifyTrustChain([chain[0] as string, expired, chain[2] as string], entityId, trusted)).rejects.toThrow(/exp/);
    // A wallet trusting another anchor (another key) refuses the chain.
    await expect(verifyTrustChain(chain, entityId, { entityId: anchor.id, jwks: impostor.jwks })).rejects.toThrow(/trust anchor/);
    // A valid chain, and a request object signed by a key its metadata does not list.
    const outsider = await testKey('outsider');
    const resigned = await new SignJWT(decodeJwt(requestObject))
      .setProtectedHeader({ alg: 'ES256', typ: 'oauth-authz-req+jwt', kid: 'outsider', trust_chain: chain })
      .sign(await importJWK(outsider.privateJwk, 'ES256'));
    await expect(verifyFederatedRequest(resigned, trusted)).rejects.toThrow(/request object/);
    // A superior's metadata_policy applies to the verifier metadata the wallet resolves.
    anchor.subordinate(
      { id: entityId, jwks: (decodeJwt(chain[0] as string) as { jwks: { keys: JWK[] } }).jwks },
      { metadata_policy: { openid_credential_verifier: { client_name: { value: 'Named by the anchor' } } } },
    );
    const withPolicy = (await anchor.subordinateStatement(entityId)) as string;
    const resolved = await verifyTrustChain([chain[0] as string, withPolicy, chain[2] as string], entityId, trusted);
    expect(resolved.openid_credential_verifier.client_name).toBe('Named by the anchor');
    // Restored for the other tests.
    anchor.subordinate({ id: entityId, jwks: (decodeJwt(chain[0] as string) as { jwks: { keys: JWK[] } }).jwks });
  });
});

describe('validation of the prefix openid_federation', () => {
  const offer = (tenantToken: string, body: Record<string, unknown> = {}) =>
    svc.raw('POST', '/api/verifier/offer', {
      token: tenantToken,
      body: { response_type: 'uri', requestId: 'adult', clientIdPrefix: 'openid_federation', ...body },
    });

  it('is 400 naming body.clientIdPrefix for a tenant without federation settings or without a trust anchor', async () => {
    const plain = (await svc.tenant('nofederation')).token;
    expect(
      (await svc.call('POST', '/api/verifier/config', { token: plain, body: { id: 'adult', dcql_query: PID_ADULT_QUERY } })).status,
    ).toBe(201);
    const without = await offer(plain);
    expect(without.status).toBe(400);
    expect(without.body.errors).toEqual([expect.objectContaining({ field: 'body.clientIdPrefix' })]);
    expect(without.text).toContain('federation settings');

    const settings = await svc.raw('PUT', '/api/trust-config', {
      token: plain,
      body: { federation: { role: 'leaf', authorityHints: [anchor.id] } },
    });
    expect(settings.status, settings.text).toBe(200);
    const noAnchor = await offer(plain);
    expect(noAnchor.status).toBe(400);
    expect(noAnchor.body.errors).toEqual([expect.objectContaining({ field: 'body.clientIdPrefix' })]);
    expect(noAnchor.text).toContain('trust anchor');
    // No session was opened by the refused requests.
    const sessions = await svc.call('GET', '/api/session', { token: plain });
    expect(sessions.status).toBe(200);
    expect(sessions.body.items).toEqual([]);
  });

  it('is 400 naming body.clientIdPrefix when no chain resolves (503 at the request_uri when it stops resolving), and body.responseMode for direct_post.jwt', async () => {
    const lone = (await svc.tenant('notvouched')).token;
    expect(
      (await svc.call('POST', '/api/verifier/config', { token: lone, body: { id: 'adult', dcql_query: PID_ADULT_QUERY } })).status,
    ).toBe(201);
    const settings = await svc.raw('PUT', '/api/trust-config', {
      token: lone,
      body: { federation: { role: 'leaf', authorityHints: [anchor.id], trustAnchors: [{ entityId: anchor.id }], cacheTtlSeconds: 0 } },
    });
    expect(settings.status, settings.text).toBe(200);
    // The anchor has no statement about this tenant.
    const unresolved = await offer(lone);
    expect(unresolved.status).toBe(400);
    expect(unresolved.body.errors).toEqual([expect.objectContaining({ field: 'body.clientIdPrefix' })]);
    expect(unresolved.text).toContain('no trust chain');

    // Vouched for when the request is made, no longer when the wallet fetches it (no chain kept: cacheTtlSeconds 0).
    const loneId = `${svc.url}/issuers/notvouched`;
    const loneJwks = (decodeJwt(await (await fetch(`${loneId}/.well-known/openid-federation`)).text()) as { jwks: { keys: JWK[] } }).jwks;
    anchor.subordinate({ id: loneId, jwks: loneJwks });
    const made = await offer(lone);
    expect(made.status, made.text).toBe(201);
    anchor.subordinates.delete(loneId);
    const fetched = await fetch(made.body.requestUri);
    expect(fetched.status).toBe(503);
    expect(await fetched.json()).toMatchObject({
      error: 'server_error',
      error_description: expect.stringContaining('trust chain does not resolve'),
    });

    const encrypted = await offer(token, { responseMode: 'direct_post.jwt' });
    expect(encrypted.status).toBe(400);
    expect(encrypted.body.errors).toEqual([expect.objectContaining({ field: 'body.responseMode' })]);
  });
});
