// The issuer side of OpenID Federation: the settings, the entity configuration svc serves, and
// SD-JWT VCs issued with sdJwtTrustFormat federation naming a key of that configuration's metadata.
import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PID } from '../support/fixtures.js';
import { expectFieldErrors } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

let svc: TestService;
let admin: string;

const FEDERATION = {
  role: 'leaf',
  mode: 'hybrid',
  authorityHints: ['https://intermediate.example.eu'],
  trustAnchors: [{ entityId: 'https://anchor.example.eu' }],
};

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  const created = await svc.call('POST', '/api/issuer/credentials', { token: admin, body: { ...PID, sdJwtTrustFormat: 'federation' } });
  expect(created.status, created.text).toBe(201);
});
afterAll(() => svc.stop());

/**
 * Raw: the bodies here are partial (every other setting takes its default, which the generated types,
 * a field with a default being required there, cannot express) or deliberately invalid.
 */
const putSettings = (body: Record<string, unknown>, token = admin) => svc.raw('PUT', '/api/issuer/config', { token, body });

async function entityConfiguration(tenant = 'acme') {
  const reply = await fetch(`${svc.url}/issuers/${tenant}/.well-known/openid-federation`);
  return { status: reply.status, type: reply.headers.get('content-type'), text: await reply.text() };
}

/** The statement verified with the key of its own jwks that its kid names. */
async function selfSigned(jwt: string) {
  const payload = decodeJwt(jwt) as { jwks: { keys: JWK[] } } & Record<string, any>;
  const { kid } = decodeProtectedHeader(jwt);
  const key = payload.jwks.keys.find((k) => k.kid === kid);
  expect(key, 'the signing key is in its own jwks').toBeDefined();
  await compactVerify(jwt, await importJWK(key as JWK, decodeProtectedHeader(jwt).alg));
  return payload;
}

describe('federation settings', () => {
  it('are refused naming the field when they do not fit', async () => {
    expectFieldErrors(await putSettings({ federation: { ...FEDERATION, mode: 'both' } }), ['body.federation.mode']);
    expectFieldErrors(await putSettings({ federation: { ...FEDERATION, role: 'anchor' } }), ['body.federation.role']);
    expectFieldErrors(await putSettings({ federation: { ...FEDERATION, authorityHints: ['ftp://x.example'] } }), [
      'body.federation.authorityHints.0',
    ]);
    expectFieldErrors(await putSettings({ federation: { ...FEDERATION, cacheTtlSeconds: -1 } }), ['body.federation.cacheTtlSeconds']);
  });

  it('need issuance:manage', async () => {
    const reader = await svc.client(admin, 'fed-reader', ['presentation:manage']);
    expect((await putSettings({ federation: FEDERATION }, reader)).status).toBe(403);
  });

  it('without them the issuer serves no entity configuration, and says the settings are missing', async () => {
    const missing = await entityConfiguration();
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text)).toEqual({
      error: 'invalid_request',
      error_description:
        "the issuer 'acme' has no federation settings, so no entity configuration: set federation in its trust settings (PUT /api/trust-config)",
    });
    // An unknown tenant is still an unknown issuer.
    const unknown = await entityConfiguration('no-such-tenant');
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.text).error_description).toBe("no credential issuer 'no-such-tenant'");
  });

  it('are stored with their defaults, and make a federation key chain', async () => {
    const reply = await putSettings({ federation: FEDERATION });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.federation).toEqual({ ...FEDERATION, cacheTtlSeconds: 300 });
    const chains = await svc.call('GET', '/api/key-chain?usageType=federation', { token: admin });
    expect(chains.body.map((c: { id: string }) => c.id)).toEqual(['default-federation']);
  });
});

describe('the entity configuration', () => {
  it('is self-signed, names the issuer, its superiors and the keys credentials are signed with', async () => {
    expect((await putSettings({ federation: FEDERATION })).status).toBe(200);
    const served = await entityConfiguration();
    expect(served.status, served.text).toBe(200);
    expect(served.type).toContain('application/entity-statement+jwt');
    expect(decodeProtectedHeader(served.text)).toMatchObject({ typ: 'entity-statement+jwt', alg: 'ES256' });
    const claims = await selfSigned(served.text);
    const issuer = `${svc.url}/issuers/acme`;
    expect(claims.iss).toBe(issuer);
    expect(claims.sub).toBe(issuer);
    expect(claims.authority_hints).toEqual(FEDERATION.authorityHints);
    expect(claims.exp - claims.iat).toBeLessThanOrEqual(86_400);
    expect(claims.exp).toBeGreaterThan(Date.now() / 1000);
    const federationKeys = (await svc.call('GET', '/api/key-chain/default-federation', { token: admin })).body.activeJwk;
    expect(claims.jwks.keys.map((k: JWK) => k.kid)).toContain(federationKeys.kid);
    const metadata = claims.metadata.openid_credential_issuer;
    expect(metadata.credential_issuer).toBe(issuer);
    expect(Object.keys(metadata.credential_configurations_supported)).toEqual(['pid']);
    // The keys that sign credentials and their status lists.
    const attestation = (await svc.call('GET', '/api/key-chain/default-attestation', { token: admin })).body.activeJwk;
    const statusList = (await svc.call('GET', '/api/key-chain/default-statusList', { token: admin })).body.activeJwk;
    expect(metadata.jwks.keys.map((k: JWK) => k.kid).sort()).toEqual([attestation.kid, statusList.kid].sort());
    expect(claims.jwks.keys.map((k: JWK) => k.kid)).not.toContain(attestation.kid);
    expect(claims.metadata.oauth_authorization_server.issuer).toBe(issuer);
    // No federation client registration (automatic or explicit, OpenID Federation 1.0 section 12), said
    // in the entity configuration only, where resolvers such as @openid-federation/core require it.
    expect(metadata.client_registration_types_supported).toEqual([]);
    const plain = await svc.raw('GET', '/.well-known/openid-credential-issuer/issuers/acme');
    expect(plain.body.credential_issuer).toBe(issuer);
    expect(plain.body.client_registration_types_supported).toBeUndefined();
  });

  it('names another entity id when the settings give one, and no authorization server when the built-in one is off', async () => {
    const entityId = 'https://issuer.example.eu/acme';
    const reply = await putSettings({ federation: { ...FEDERATION, entityId }, builtinAuthorizationServerEnabled: false });
    expect(reply.status, reply.text).toBe(200);
    const claims = await selfSigned((await entityConfiguration()).text);
    expect([claims.iss, claims.sub]).toEqual([entityId, entityId]);
    expect(claims.metadata.oauth_authorization_server).toBeUndefined();
    // Verifiers resolve the chain from a credential's iss: credentials with federation trust name the entity.
    expect((await putSettings({ federation: { ...FEDERATION, entityId } })).status).toBe(200);
    const { credential } = await issueCredential(svc, admin, 'pid', { given_name: 'Erika', family_name: 'Mustermann' });
    expect(decodeJwt(credential.split('~')[0] as string).iss).toBe(entityId);
    expect((await putSettings({ federation: FEDERATION })).status).toBe(200);
  });

  it("is the tenant's own: another tenant without federation serves none", async () => {
    await svc.tenant('globex');
    expect((await entityConfiguration('globex')).status).toBe(404);
  });
});

describe('credentials with sdJwtTrustFormat federation', () => {
  it('carry no x5c, and their kid names a key of the entity configuration metadata that verifies them', async () => {
    expect((await putSettings({ federation: FEDERATION })).status).toBe(200);
    const { credential } = await issueCredential(svc, admin, 'pid', { given_name: 'Erika', family_name: 'Mustermann' });
    const jwt = credential.split('~')[0] as string;
    const header = decodeProtectedHeader(jwt);
    expect(header.x5c).toBeUndefined();
    const claims = await selfSigned((await entityConfiguration()).text);
    const key = claims.metadata.openid_credential_issuer.jwks.keys.find((k: JWK) => k.kid === header.kid);
    expect(key, 'kid found in the metadata').toBeDefined();
    const verified = await compactVerify(jwt, await importJWK(key, header.alg));
    expect(JSON.parse(new TextDecoder().decode(verified.payload)).iss).toBe(`${svc.url}/issuers/acme`);
  });
});
