// The authorization code flow asked by scope (OpenID4VCI 1.0 section 5.1.2; HAIP 1.0 section 4.2: the
// wallet names the credential by the scope value of its configuration): the pushed request names
// scope values instead of (or beside) authorization_details, unknown values are ignored, the token
// response says which scope values were granted, and the credential endpoint issues those
// configurations by credential_configuration_id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeRequest, pushAuthorizationRequest, redeemCode } from '../support/authorization.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startService, type TestService } from '../support/service.js';
import { type HolderKey, holderKey, keyProof, pkce } from '../support/wallet.js';

let svc: TestService;
let acme: string;
let rootCertificate: string;

const configuration = (id: string, scope?: string) => ({
  id,
  config: { format: 'dc+sd-jwt', ...(scope && { scope }) },
  vct: `urn:example:${id}`,
  fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
});

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  const globex = (await svc.tenant('globex')).token;
  const created = [
    await svc.raw('POST', '/api/issuer/credentials', { token: acme, body: configuration('pid') }),
    await svc.raw('POST', '/api/issuer/credentials', { token: acme, body: configuration('email', 'org.example.email') }),
    await svc.raw('POST', '/api/issuer/credentials', { token: globex, body: configuration('badge', 'org.example.badge') }),
  ];
  for (const reply of created) expect(reply.status, reply.text).toBe(201);
  rootCertificate = (await svc.raw('GET', '/api/key-chain/default-attestation', { token: acme })).body.rootCertificate;
});
afterAll(() => svc.stop());

const ISSUER = () => `${svc.url}/issuers/acme`;
const CLAIMS = { type: 'inline', claims: { given_name: 'Erika' } };

async function offer(): Promise<string> {
  const reply = await svc.raw('POST', '/api/issuer/offer', {
    token: acme,
    body: {
      response_type: 'uri',
      flow: 'authorization_code',
      credentialConfigurationIds: ['pid', 'email'],
      credentialClaims: { pid: CLAIMS, email: CLAIMS },
    },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body.credentialOffer.grants.authorization_code.issuer_state;
}

/**
 * PAR with `fields`, the authorization endpoint (with `atAuthorize` beside client_id and request_uri),
 * and the token endpoint: the token response.
 */
async function tokenFor(fields: Record<string, string | undefined>, atAuthorize: Record<string, string> = {}) {
  const { verifier, challenge } = pkce();
  const pushed = await pushAuthorizationRequest(svc, 'acme', await offer(), { code_challenge: challenge, ...fields });
  expect(pushed.status, pushed.text).toBe(201);
  const answer = await authorizeRequest(svc, 'acme', { ...atAuthorize, client_id: 'raw-wallet', request_uri: pushed.body.request_uri });
  const code = answer.location?.searchParams.get('code');
  expect(code, answer.body).toEqual(expect.any(String));
  const token = await redeemCode(svc, 'acme', code as string, verifier);
  expect(token.status, token.text).toBe(200);
  return token.body;
}

async function credential(accessToken: string, request: Record<string, string>, key: HolderKey) {
  const nonce = (await svc.raw('POST', '/issuers/acme/nonce')).body.c_nonce;
  return svc.raw('POST', '/issuers/acme/credential', {
    headers: { authorization: `Bearer ${accessToken}` },
    body: { ...request, proofs: { jwt: [await keyProof(key, ISSUER(), nonce)] } },
  });
}

describe('authorization by scope', () => {
  it("publishes a scope for every configuration (the default one is the id), and the authorization server's scopes_supported lists them", async () => {
    const metadata = (await svc.raw('GET', '/.well-known/openid-credential-issuer/issuers/acme')).body;
    expect(metadata.credential_configurations_supported.pid.scope).toBe('pid');
    expect(metadata.credential_configurations_supported.email.scope).toBe('org.example.email');
    const server = (await svc.raw('GET', '/.well-known/oauth-authorization-server/issuers/acme')).body;
    expect(server.scopes_supported).toEqual(['pid', 'org.example.email']);
    const other = (await svc.raw('GET', '/.well-known/oauth-authorization-server/issuers/globex')).body;
    expect(other.scopes_supported).toEqual(['org.example.badge']);
  });

  it('grants what the scope values name, ignoring unknown ones; the token response says which; the credential is issued by configuration id', async () => {
    const token = await tokenFor({ scope: 'openid pid unknown.value' });
    expect(token.scope).toBe('pid');
    expect(token.authorization_details).toBeUndefined();
    const key = await holderKey();
    const issued = await credential(token.access_token, { credential_configuration_id: 'pid' }, key);
    expect(issued.status, issued.text).toBe(200);
    const { payload } = await verifySdJwtIndependently(issued.body.credentials[0].credential, rootCertificate);
    expect(payload.vct).toBe('urn:example:pid');
    // Offered, but not asked for by scope: not granted.
    const notGranted = await credential(token.access_token, { credential_configuration_id: 'email' }, key);
    expect(notGranted.status).toBe(400);
    expect(notGranted.body.error).toBe('unknown_credential_configuration');
  });

  it('takes the scope of the pushed request only: a scope repeated at the authorization endpoint adds nothing', async () => {
    const token = await tokenFor({ scope: 'pid' }, { scope: 'pid org.example.email' });
    expect(token.scope).toBe('pid');
    const refused = await credential(token.access_token, { credential_configuration_id: 'email' }, await holderKey());
    expect(refused.body.error).toBe('unknown_credential_configuration');
  });

  it('names the scope values granted again when the tokens are refreshed', async () => {
    const token = await tokenFor({ scope: 'org.example.email pid' });
    expect(token.scope.split(' ').sort()).toEqual(['org.example.email', 'pid']);
    const refreshed = await svc.raw('POST', '/issuers/acme/token', {
      form: { grant_type: 'refresh_token', refresh_token: token.refresh_token, client_id: 'raw-wallet' },
    });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.body.scope).toBe(token.scope);
  });

  it('takes scope beside authorization_details: each configuration is requested the way it was asked for', async () => {
    const details = JSON.stringify([{ type: 'openid_credential', credential_configuration_id: 'email' }]);
    const token = await tokenFor({ scope: 'pid', authorization_details: details });
    expect(token.scope).toBe('pid');
    expect(token.authorization_details).toEqual([
      { type: 'openid_credential', credential_configuration_id: 'email', credential_identifiers: ['email'] },
    ]);
    const key = await holderKey();
    expect((await credential(token.access_token, { credential_configuration_id: 'pid' }, key)).status).toBe(200);
    expect((await credential(token.access_token, { credential_identifier: 'email' }, key)).status).toBe(200);
  });

  it("refuses with invalid_scope a request whose scope values name no configuration of the offer, another tenant's included", async () => {
    for (const scope of ['org.example.badge', 'unknown.value']) {
      const pushed = await pushAuthorizationRequest(svc, 'acme', await offer(), { scope });
      expect(pushed.status, scope).toBe(400);
      expect(pushed.body.error).toBe('invalid_scope');
    }
  });
});
