// An external authorization server that is an OpenID Federation entity: its entity configuration
// (on loopback, below a trust anchor) carries oauth_authorization_server metadata with the keys of its
// RFC 9068 access tokens. The issuer's federation mode decides whether the credential endpoint takes
// those keys from the resolved chain (federation-only, hybrid) or from RFC 8414 metadata (lote-only).
import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../support/api-types.js';
import { startFederation, type TestEntity, type TestFederation, type TestKey, testKey } from '../support/federation.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey, keyProof } from '../support/wallet.js';

type FederationSettings = Schemas['FederationSettingsInput'];

let svc: TestService;
let acme: string;
let fed: TestFederation;
let anchor: TestEntity;
let server: TestEntity;
let tokenKey: TestKey;
let issuer: string;

beforeAll(async () => {
  fed = await startFederation();
  anchor = await fed.entity('anchor');
  server = await fed.entity('as');
  tokenKey = await testKey('as-token-key');
  server.metadata = { oauth_authorization_server: { issuer: server.id, jwks: { keys: [tokenKey.publicJwk] } } };
  server.authorityHints = [anchor.id];
  anchor.subordinate(server);
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  issuer = `${svc.url}/issuers/acme`;
  const created = await svc.call('POST', '/api/issuer/credentials', {
    token: acme,
    body: {
      id: 'pid',
      config: { format: 'dc+sd-jwt', scope: 'pid_scope' },
      vct: 'urn:example:pid',
      fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
    },
  });
  expect(created.status, created.text).toBe(201);
});
afterAll(async () => {
  await svc?.stop();
  await fed?.stop();
});

/**
 * The issuer settings with this federation mode. Sent raw: the body leaves every other setting to its
 * default, which the generated types (a field with a default is required there) cannot express.
 */
async function settings(mode: FederationSettings['mode']) {
  const reply = await svc.raw('PUT', '/api/issuer/config', {
    token: acme,
    body: {
      authorizationServers: [{ issuer: server.id }],
      federation: { role: 'leaf', mode, trustAnchors: [{ entityId: anchor.id }], cacheTtlSeconds: 0 },
    },
  });
  expect(reply.status, reply.text).toBe(200);
}

/** An RFC 9068 access token of the federation's authorization server for this issuer. */
async function accessToken(key = tokenKey) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ client_id: 'wallet', scope: 'pid_scope', given_name: 'Erika', jti: randomUUID() })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.privateJwk.kid as string })
    .setIssuer(server.id)
    .setAudience(issuer)
    .setSubject('erika')
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .sign(await importJWK(key.privateJwk, 'ES256'));
}

/** A credential request with the token and a key proof (OpenID4VCI 1.0 section 8), as a wallet sends it. */
async function requestCredential(token: string) {
  // Raw: the document leaves the answers of the wallet protocol's endpoints undescribed.
  const nonce = await svc.raw('POST', '/issuers/acme/nonce');
  expect(nonce.status, nonce.text).toBe(200);
  const reply = await svc.raw('POST', '/issuers/acme/credential', {
    headers: { authorization: `Bearer ${token}` },
    body: { credential_configuration_id: 'pid', proofs: { jwt: [await keyProof(await holderKey(), issuer, nonce.body.c_nonce)] } },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.credentials as { credential: string }[];
}

const refusal = async (token: string) => {
  const reply = await svc.raw('POST', '/issuers/acme/credential', {
    headers: { authorization: `Bearer ${token}` },
    body: { credential_configuration_id: 'pid' },
  });
  expect(reply.status, reply.text).toBe(401);
  expect(reply.body.error).toBe('invalid_token');
  return reply.body.error_description as string;
};

describe('an external authorization server in the federation', () => {
  it('federation-only: its tokens verify with the keys of its resolved oauth_authorization_server metadata', async () => {
    await settings('federation-only');
    expect(await requestCredential(await accessToken())).toHaveLength(1);
  });

  it('federation-only: a token signed by a key outside that metadata, or a server not below the anchor, is refused', async () => {
    await settings('federation-only');
    expect(await refusal(await accessToken(await testKey('rogue')))).toMatch(/no key of the provider matches its kid/);
    anchor.subordinates.clear();
    try {
      expect(await refusal(await accessToken())).toMatch(/not trusted: OpenID Federation: trust chain: subordinate statement/);
    } finally {
      anchor.subordinate(server);
    }
  });

  it('hybrid: a server that does not resolve falls back to its RFC 8414 metadata (here: none, so it is refused for that)', async () => {
    await settings('hybrid');
    expect(await requestCredential(await accessToken())).toHaveLength(1);
    anchor.subordinates.clear();
    try {
      expect(await refusal(await accessToken())).toMatch(/could not be read/);
    } finally {
      anchor.subordinate(server);
    }
  });

  it('lote-only: the federation is not asked', async () => {
    await settings('lote-only');
    fed.requests.length = 0;
    expect(await refusal(await accessToken())).toMatch(/could not be read/);
    expect(fed.requests.filter((path) => path.includes('openid-federation'))).toEqual([]);
  });
});
