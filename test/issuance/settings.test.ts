import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldsOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';
import { receiveCredentials } from '../support/wallet.js';

let svc: TestService;
let admin: string;
const GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  const created = await svc.call('POST', '/api/issuer/credentials', {
    token: admin,
    body: {
      id: 'badge',
      config: { format: 'dc+sd-jwt' },
      vct: 'urn:example:badge',
      fields: [{ path: ['name'], type: 'string', defaultValue: 'Ada' }],
    },
  });
  expect(created.status, created.text).toBe(201);
});
afterAll(() => svc.stop());

const offer = async (body: Record<string, unknown> = {}) =>
  (
    await svc.raw('POST', '/api/issuer/offer', {
      token: admin,
      body: { response_type: 'uri', flow: 'pre_authorized_code', credentialConfigurationIds: ['badge'], ...body },
    })
  ).body;

describe('issuer settings', () => {
  it('starts from documented defaults', async () => {
    const reply = await svc.call('GET', '/api/issuer/config', { token: admin });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      profile: 'none',
      display: [],
      dpopRequired: false,
      dpopNonceRequired: false,
      batchSize: 10,
      txCodeMaxAttempts: 5,
      nonceLifetimeSeconds: 300,
      accessTokenLifetimeSeconds: 600,
      refreshTokenLifetimeSeconds: 86400,
      offerLifetimeSeconds: 86400,
      authorizationServers: [],
      builtinAuthorizationServerEnabled: true,
      walletAttestationRequired: false,
      walletAttestationChallengeRequired: false,
      walletProviders: [],
      credentialEncryptionRequired: false,
      chainedAuthorizationServer: null,
      rateLimits: {},
      federation: null,
      etsiTrustedLists: null,
    });
  });

  it('validates and stores settings, and the metadata follows them', async () => {
    const invalid = await svc.raw('PUT', '/api/issuer/config', {
      token: admin,
      body: { batchSize: 0, txCodeMaxAttempts: 99, extra: true },
    });
    expect(invalid.status).toBe(400);
    expect(fieldsOf(invalid).sort()).toEqual(['body.batchSize', 'body.extra', 'body.txCodeMaxAttempts']);
    const put = await svc.raw('PUT', '/api/issuer/config', {
      token: admin,
      body: { display: [{ name: 'ACME Issuer', locale: 'en' }], batchSize: 2, txCodeMaxAttempts: 2 },
    });
    expect(put.status).toBe(200);
    expect((await svc.call('GET', '/api/issuer/config', { token: admin })).body).toMatchObject({
      batchSize: 2,
      txCodeMaxAttempts: 2,
      dpopRequired: false,
    });
    const metadata = (await svc.call('GET', '/.well-known/openid-credential-issuer/issuers/acme')).body;
    expect(metadata).toMatchObject({ display: [{ name: 'ACME Issuer', locale: 'en' }], batch_credential_issuance: { batch_size: 2 } });
    const audit = (await svc.call('GET', '/api/admin/audit-logs?limit=5', { token: admin })).body;
    expect(audit[0]).toMatchObject({
      actionType: 'issuer_settings.updated',
      changedFields: expect.arrayContaining(['batchSize', 'display', 'txCodeMaxAttempts']),
    });
  });

  it('locks an offer after the configured number of wrong transaction codes', async () => {
    const created = await offer({ tx_code: '1234' });
    const form = (tx: string) => ({
      grant_type: GRANT,
      'pre-authorized_code': created.credentialOffer.grants[GRANT]['pre-authorized_code'],
      tx_code: tx,
    });
    expect((await svc.raw('POST', '/issuers/acme/token', { form: form('0000') })).body.error_description).toContain('1 attempt(s) left');
    expect((await svc.raw('POST', '/issuers/acme/token', { form: form('0000') })).body.error_description).toContain('now locked');
    expect((await svc.raw('POST', '/issuers/acme/token', { form: form('1234') })).body.error).toBe('invalid_grant');
  });

  it('requires DPoP when configured, and still issues to a wallet that uses it', async () => {
    await svc.raw('PUT', '/api/issuer/config', { token: admin, body: { dpopRequired: true } });
    expect((await svc.raw('GET', '/.well-known/oauth-authorization-server/issuers/acme')).body.dpop_bound_access_tokens_required).toBe(
      true,
    );
    const created = await offer();
    const plain = await svc.raw('POST', '/issuers/acme/token', {
      form: { grant_type: GRANT, 'pre-authorized_code': created.credentialOffer.grants[GRANT]['pre-authorized_code'] },
    });
    expect(plain.status).toBe(400);
    expect(plain.body.error).toBe('invalid_request');
    const { response, token } = await receiveCredentials((await offer()).uri, { dpop: true });
    expect(token.accessTokenResponse.token_type).toBe('DPoP');
    expect(response.credentialResponse.credentials).toHaveLength(1);
    await svc.raw('PUT', '/api/issuer/config', { token: admin, body: {} });
  });

  it('refuses an authorization server that is not enabled', async () => {
    const reply = await svc.raw('POST', '/api/issuer/offer', {
      token: admin,
      body: {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['badge'],
        authorization_server: 'https://login.example.com',
      },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.errors[0].field).toBe('body.authorization_server');
  });

  it("keeps each tenant's settings apart", async () => {
    const other = (await svc.tenant('globex')).token;
    await svc.raw('PUT', '/api/issuer/config', { token: admin, body: { batchSize: 7 } });
    expect((await svc.call('GET', '/api/issuer/config', { token: other })).body.batchSize).toBe(10);
  });
});
