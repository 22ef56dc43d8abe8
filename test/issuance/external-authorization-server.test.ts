// An external authorization server (issuer settings authorizationServers): a real OpenID Provider
// (oidc-provider) on a loopback port whose JWT access tokens (RFC 9068) the credential endpoint takes.
// The tokens are signed with the provider's own key and found through its discovery document and
// jwks_uri; the wallet (@openid4vc/openid4vci) asks for credentials with them, DPoP-bound. Then every
// way such a token can be wrong.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { calculateJwkThumbprint } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCredentialsToken, startOpenIdProvider, type TestProvider } from '../support/oidc-provider.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startService, type TestService } from '../support/service.js';
import { type HolderKey, holderKey, walletClient } from '../support/wallet.js';

let svc: TestService;
let acme: string;
let provider: TestProvider;
let stranger: TestProvider;
let rootCertificate: string;
let issuer: string;

const ERIKA = { given_name: 'Erika', family_name: 'Mustermann' };

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  [provider, stranger] = await Promise.all([
    startOpenIdProvider({ algorithm: 'ES256', clients: [{ clientId: 'wallet-backend', secret: 'wallet-backend-secret-0123' }] }),
    startOpenIdProvider({ algorithm: 'ES256', clients: [] }),
  ]);
  issuer = `${svc.url}/issuers/acme`;
  for (const body of [
    {
      id: 'pid',
      config: { format: 'dc+sd-jwt', scope: 'pid_scope' },
      vct: 'urn:example:pid',
      keyBinding: true,
      fields: [
        { path: ['given_name'], type: 'string', mandatory: true },
        { path: ['family_name'], type: 'string', mandatory: true },
      ],
    },
    {
      id: 'membership',
      config: { format: 'dc+sd-jwt', scope: 'membership_scope' },
      vct: 'urn:example:membership',
      keyBinding: true,
      fields: [{ path: ['member_level'], type: 'string', defaultValue: 'basic' }],
    },
  ]) {
    const created = await svc.raw('POST', '/api/issuer/credentials', { token: acme, body });
    expect(created.status, created.text).toBe(201);
  }
  const settings = await svc.raw('PUT', '/api/issuer/config', {
    token: acme,
    body: { authorizationServers: [{ issuer: provider.issuer }] },
  });
  expect(settings.status, settings.text).toBe(200);
  rootCertificate = (await svc.raw('GET', '/api/key-chain/default-attestation', { token: acme })).body.rootCertificate;
});
afterAll(async () => {
  await Promise.all([provider?.stop(), stranger?.stop()]);
  await svc?.stop();
});

/** An access token of `by` as RFC 9068 describes it, for this issuer, with `claims` over the defaults. */
async function accessToken(claims: Record<string, unknown> = {}, by: TestProvider = provider) {
  const now = Math.floor(Date.now() / 1000);
  return by.mint({
    iss: by.issuer,
    aud: issuer,
    sub: 'erika',
    client_id: 'wallet',
    jti: randomUUID(),
    iat: now,
    exp: now + 300,
    scope: 'openid pid_scope',
    ...ERIKA,
    ...claims,
  });
}

/** A credential request as the wallet library makes it: nonce, proof of `key`, DPoP proof of `dpopKey` when given. */
async function requestCredential(token: string, options: { key?: HolderKey; dpopKey?: HolderKey; configurationId?: string } = {}) {
  const key = options.key ?? (await holderKey());
  const client = walletClient([key]);
  const issuerMetadata = await client.resolveIssuerMetadata(issuer);
  const configurationId = options.configurationId ?? 'pid';
  const { c_nonce } = await client.requestNonce({ issuerMetadata });
  const proof = await client.createCredentialRequestJwtProof({
    issuerMetadata,
    signer: key.signer,
    nonce: c_nonce,
    credentialConfigurationId: configurationId,
  });
  try {
    const response = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: token,
      credentialConfigurationId: configurationId,
      proofs: { jwt: [proof.jwt] },
      ...(options.dpopKey && { dpop: { signer: options.dpopKey.signer } }),
    });
    const [issued] = (response.credentialResponse.credentials ?? []) as { credential: string }[];
    return { ok: true as const, credential: issued?.credential as string, metadata: issuerMetadata };
  } catch (err) {
    return { ok: false as const, error: String((err as Error).message) };
  }
}

const sessionsOfAcme = async () => (await svc.raw('GET', '/api/session?type=issuance&pageSize=100', { token: acme })).body.items as any[];

describe('an external authorization server', () => {
  it('is listed in authorization_servers of the issuer metadata', async () => {
    const metadata = (await svc.raw('GET', '/.well-known/openid-credential-issuer/issuers/acme')).body;
    expect(metadata.authorization_servers).toEqual([issuer, provider.issuer]);
  });

  it('issues with its DPoP-bound access token the credential its scope grants, with the claims the token carries', async () => {
    const key = await holderKey();
    const token = await accessToken({ cnf: { jkt: await calculateJwkThumbprint(key.publicJwk) } });
    const result = await requestCredential(token, { key, dpopKey: key });
    expect(result.ok, result.ok ? '' : result.error).toBe(true);
    if (!result.ok) return;
    const { claims } = await verifySdJwtIndependently(result.credential, rootCertificate);
    expect(claims).toMatchObject(ERIKA);
    // The token's protocol claims are no credential claims.
    expect(claims.client_id).toBeUndefined();
    const [session] = (await sessionsOfAcme()).filter((s) => s.externalIssuer === provider.issuer);
    expect(session).toMatchObject({ consumed: true, status: 'completed', externalSubject: 'erika', credentialConfigurationIds: ['pid'] });
    const logs = (await svc.raw('GET', `/api/session/${session.id}/logs`, { token: acme })).body;
    expect(JSON.stringify(logs)).toContain(provider.issuer);
  });

  it('grants by authorization_details too, and one token opens one session for all its requests', async () => {
    const token = await accessToken({
      scope: 'openid',
      authorization_details: [
        { type: 'openid_credential', credential_configuration_id: 'pid' },
        { type: 'openid_credential', credential_configuration_id: 'unknown-one' },
      ],
    });
    const before = (await sessionsOfAcme()).length;
    const client = walletClient([await holderKey()]);
    const issuerMetadata = await client.resolveIssuerMetadata(issuer);
    // Granted by authorization_details: requested by its credential_identifier (the configuration id).
    const requestBody = async (body: Record<string, unknown>) => {
      const key = await holderKey();
      const { c_nonce } = (await svc.raw('POST', '/issuers/acme/nonce')).body;
      const proof = await walletClient([key]).createCredentialRequestJwtProof({
        issuerMetadata,
        signer: key.signer,
        nonce: c_nonce,
        credentialConfigurationId: 'pid',
      });
      return svc.raw('POST', '/issuers/acme/credential', {
        headers: { authorization: `Bearer ${token}` },
        body: { ...body, proofs: { jwt: [proof.jwt] } },
      });
    };
    const byIdentifier = await requestBody({ credential_identifier: 'pid' });
    expect(byIdentifier.status, byIdentifier.text).toBe(200);
    const again = await requestBody({ credential_identifier: 'pid' });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_credential_request');
    const notGranted = await requestBody({ credential_configuration_id: 'membership' });
    expect(notGranted.body.error, notGranted.text).toBe('unknown_credential_configuration');
    expect((await sessionsOfAcme()).length).toBe(before + 1);
  });

  it('a second token reusing a jti reaches the session of the first only for the same sub and client_id', async () => {
    const jti = randomUUID();
    const first = await requestCredential(await accessToken({ jti }));
    expect(first.ok, first.ok ? '' : first.error).toBe(true);
    const [opened] = (await sessionsOfAcme()).filter((s) => s.externalSubject === 'erika' && s.status === 'completed');
    for (const [name, claims] of [
      ['another sub', { jti, sub: 'mallory', given_name: 'Mallory' }],
      ['another client_id', { jti, client_id: 'other-wallet' }],
    ] as const) {
      const token = await accessToken(claims);
      const reply = await svc.raw('POST', '/issuers/acme/credential', {
        headers: { authorization: `Bearer ${token}` },
        body: { credential_configuration_id: 'pid' },
      });
      expect(reply.status, name).toBe(401);
      expect(reply.body, name).toMatchObject({ error: 'invalid_token', error_description: expect.stringMatching(/jti/) });
    }
    // The first user's session is untouched; the same token still reaches it (and finds pid issued).
    const again = await requestCredential(await accessToken({ jti }));
    expect(again.ok ? 'issued' : again.error).toMatch(/already been issued/);
    expect((await svc.running.services.sessions.get('acme', opened.id)).status).toBe('completed');
  });

  it('refuses a DPoP-bound token without a proof of its key, or with another key', async () => {
    const key = await holderKey();
    const token = await accessToken({ cnf: { jkt: await calculateJwkThumbprint(key.publicJwk) } });
    const bearer = await requestCredential(token, { key });
    expect(bearer.ok).toBe(false);
    expect(bearer.ok ? '' : bearer.error).toMatch(/invalid_token|DPoP/);
    const other = await requestCredential(token, { key, dpopKey: await holderKey() });
    expect(other.ok).toBe(false);
  });

  const refusals: [string, () => Promise<string>, RegExp][] = [
    ['another audience', () => accessToken({ aud: 'https://another-issuer.example' }), /aud/],
    ['expired', () => accessToken({ iat: Math.floor(Date.now() / 1000) - 900, exp: Math.floor(Date.now() / 1000) - 300 }), /expired/],
    ['without jti', () => accessToken({ jti: undefined }), /jti/],
    ['without client_id', () => accessToken({ client_id: undefined }), /client_id/],
    ['granting no configuration of this issuer', () => accessToken({ scope: 'openid email' }), /grants no credential configuration/],
    [
      'with a forged signature',
      async () => {
        const [header, payload] = (await accessToken()).split('.');
        const [, , signature] = (await accessToken({ sub: 'mallory' })).split('.');
        return `${header}.${payload}.${signature}`;
      },
      /signature/,
    ],
    [
      'signed by a server the issuer does not list, in the name of the listed one',
      () => accessToken({ iss: provider.issuer }, stranger),
      /signature|kid|key/,
    ],
    ['of a server the issuer does not list', () => accessToken({}, stranger), /invalid or expired/],
  ];
  for (const [name, make, reason] of refusals) {
    it(`refuses a token ${name} (invalid_token)`, async () => {
      const reply = await svc.raw('POST', '/issuers/acme/credential', {
        headers: { authorization: `Bearer ${await make()}` },
        body: { credential_configuration_id: 'pid' },
      });
      expect(reply.status, reply.text).toBe(401);
      expect(reply.body.error).toBe('invalid_token');
      expect(reply.body.error_description).toMatch(reason);
    });
  }

  it('refuses a token the provider made for another resource (its real token endpoint), and every token once the server is disabled', async () => {
    const real = await clientCredentialsToken(provider.issuer, 'wallet-backend', 'wallet-backend-secret-0123');
    expect(real.status).toBe(200);
    const reply = await svc.raw('POST', '/issuers/acme/credential', {
      headers: { authorization: `Bearer ${real.token}` },
      body: { credential_configuration_id: 'pid' },
    });
    expect(reply.status, reply.text).toBe(401);
    expect(reply.body.error_description).toMatch(/aud/);
    const token = await accessToken();
    const disabled = await svc.raw('PUT', '/api/issuer/config', {
      token: acme,
      body: { authorizationServers: [{ issuer: provider.issuer, enabled: false }] },
    });
    expect(disabled.status, disabled.text).toBe(200);
    try {
      const refused = await svc.raw('POST', '/issuers/acme/credential', {
        headers: { authorization: `Bearer ${token}` },
        body: { credential_configuration_id: 'pid' },
      });
      expect(refused.status).toBe(401);
    } finally {
      await svc.raw('PUT', '/api/issuer/config', { token: acme, body: { authorizationServers: [{ issuer: provider.issuer }] } });
    }
  });

  it('follows a key rotation of the server, but fetches its keys again for unknown kids at most every 30 s', async () => {
    // A server of its own: the pause between fetches is per key set.
    const rotating = await startOpenIdProvider({ algorithm: 'ES256', clients: [] });
    const listed = await svc.raw('PUT', '/api/issuer/config', {
      token: acme,
      body: { authorizationServers: [{ issuer: provider.issuer }, { issuer: rotating.issuer }] },
    });
    expect(listed.status, listed.text).toBe(200);
    try {
      expect((await requestCredential(await accessToken({}, rotating))).ok).toBe(true);
      await rotating.rotate();
      const keySetFetches = () => rotating.requests.filter((path) => path.endsWith('/jwks')).length;
      const before = keySetFetches();
      // Signed with the new key: the cached key set lacks its kid, so it is fetched again once.
      const rotated = await requestCredential(await accessToken({}, rotating));
      expect(rotated.ok, rotated.ok ? '' : rotated.error).toBe(true);
      expect(keySetFetches()).toBe(before + 1);
      // Made-up kids (anyone can send them) fetch nothing more.
      await expectMadeUpKidsRefused(await accessToken({}, rotating));
      expect(keySetFetches()).toBe(before + 1);
    } finally {
      await svc.raw('PUT', '/api/issuer/config', { token: acme, body: { authorizationServers: [{ issuer: provider.issuer }] } });
      await rotating.stop();
    }
  });

  async function expectMadeUpKidsRefused(token: string) {
    const [header, payload, signature] = token.split('.') as [string, string, string];
    for (let i = 0; i < 5; i++) {
      const kid = { ...JSON.parse(Buffer.from(header, 'base64url').toString()), kid: `made-up-${i}` };
      const reply = await svc.raw('POST', '/issuers/acme/credential', {
        headers: { authorization: `Bearer ${Buffer.from(JSON.stringify(kid)).toString('base64url')}.${payload}.${signature}` },
        body: { credential_configuration_id: 'pid' },
      });
      expect(reply.status, reply.text).toBe(401);
      expect(reply.body.error_description).toMatch(/kid/);
    }
  }

  it('asks a listed server that does not answer its metadata again after a pause, not at every request naming it', async () => {
    const asked: string[] = [];
    const failing = createServer((request, response) => {
      asked.push(request.url ?? '');
      response.writeHead(503).end();
    });
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    const failingIssuer = `http://127.0.0.1:${(failing.address() as AddressInfo).port}`;
    const listed = await svc.raw('PUT', '/api/issuer/config', {
      token: acme,
      body: { authorizationServers: [{ issuer: provider.issuer }, { issuer: failingIssuer }] },
    });
    expect(listed.status, listed.text).toBe(200);
    try {
      for (let i = 0; i < 5; i++) {
        const reply = await svc.raw('POST', '/issuers/acme/credential', {
          headers: { authorization: `Bearer ${await accessToken({ iss: failingIssuer }, stranger)}` },
          body: { credential_configuration_id: 'pid' },
        });
        expect(reply.status, reply.text).toBe(401);
        expect(reply.body.error_description).toMatch(/could not be read/);
      }
      // The first request tried both metadata locations (RFC 8414, then OpenID Connect Discovery); the others nothing.
      expect(asked).toEqual(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']);
    } finally {
      await svc.raw('PUT', '/api/issuer/config', { token: acme, body: { authorizationServers: [{ issuer: provider.issuer }] } });
      await new Promise((resolve) => failing.close(resolve));
    }
  });

  it('does not take a token for this tenant at another tenant', async () => {
    const globex = (await svc.tenant('globex')).token;
    await svc.raw('PUT', '/api/issuer/config', { token: globex, body: { authorizationServers: [{ issuer: provider.issuer }] } });
    const reply = await svc.raw('POST', '/issuers/globex/credential', {
      headers: { authorization: `Bearer ${await accessToken()}` },
      body: { credential_configuration_id: 'pid' },
    });
    expect(reply.status, reply.text).toBe(401);
    expect(reply.body.error_description).toMatch(/aud/);
  });
});
