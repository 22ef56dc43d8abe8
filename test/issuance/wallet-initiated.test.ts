// Wallet-initiated issuance at the built-in authorization server (OpenID4VCI 1.0 section 3): the
// wallet starts from the issuer's metadata with no offer, so no issuer_state (optional in section
// 5.1.3). The request is taken when the configurations' interactive authorization steps identify the
// person; refused, saying why, when nothing would. (The chained server's case, where the upstream
// login identifies the person, is in chained-as.test.ts.)
import 'reflect-metadata';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redeemCode } from '../support/authorization.js';
import { postWebResult, signWebResult } from '../support/iae.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey, keyProof, pkce, WALLET_REDIRECT_URI } from '../support/wallet.js';

const CLIENT_ID = 'metadata-wallet';
let svc: TestService;
let admin: string;
let integrator: CryptoKeyPair;
let rootCertificate: string;

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  integrator = (await generateKeyPair('ES256', { extractable: true })) as CryptoKeyPair;
  const fields = [{ path: ['member_level'], type: 'string', mandatory: true }];
  for (const body of [
    {
      id: 'membership',
      config: { format: 'dc+sd-jwt', scope: 'membership_scope' },
      vct: 'urn:example:membership',
      fields,
      iaeActions: [{ type: 'redirect-to-web', url: 'https://integrator.example/join', callbackKey: await exportJWK(integrator.publicKey) }],
    },
    { id: 'plain', config: { format: 'dc+sd-jwt', scope: 'plain_scope' }, vct: 'urn:example:plain', fields },
  ]) {
    const created = await svc.raw('POST', '/api/issuer/credentials', { token: admin, body });
    expect(created.status, created.text).toBe(201);
  }
  rootCertificate = (await svc.raw('GET', '/api/key-chain/default-attestation', { token: admin })).body.rootCertificate;
});
afterAll(() => svc.stop());

/** The parameters of an authorization request without issuer_state, for `scope`. */
function requestWithoutOffer(scope: string, challenge = pkce().challenge) {
  return {
    client_id: CLIENT_ID,
    response_type: 'code',
    redirect_uri: WALLET_REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'from-metadata',
    scope,
  };
}

describe('wallet-initiated authorization (no issuer_state)', () => {
  it("runs the configuration's interactive steps, which identify the person, and issues with what they produced", async () => {
    const { verifier, challenge } = pkce();
    const started = await svc.raw('POST', '/issuers/acme/iae', {
      form: { ...requestWithoutOffer('membership_scope', challenge), interaction_types_supported: 'redirect_to_web' },
    });
    expect(started.status, started.text).toBe(200);
    expect(started.body).toMatchObject({ status: 'require_interaction', type: 'redirect_to_web' });
    // Until its code is redeemed the session lives 15 minutes, not the offer lifetime (a day).
    const lifetime = async () => {
      const [row] = await svc.db
        .selectFrom('sessions')
        .select(['created_at', 'expires_at'])
        .where('tenant_id', '=', 'acme')
        .orderBy('created_at', 'desc')
        .limit(1)
        .execute();
      return (Date.parse(String(row?.expires_at)) - Date.parse(String(row?.created_at))) / 1000;
    };
    expect(await lifetime()).toBe(900);
    const opened = await fetch(
      `${svc.url}/issuers/acme/authorize?${new URLSearchParams({ client_id: CLIENT_ID, request_uri: started.body.request_uri })}`,
      { redirect: 'manual' },
    );
    expect(opened.status).toBe(302);
    const page = new URL(opened.headers.get('location') as string);
    const back = await postWebResult(page, await signWebResult(page, integrator.privateKey, { claims: { member_level: 'gold' } }));
    expect(back.status, back.text).toBe(303);
    expect(back.location?.searchParams.get('state')).toBe('from-metadata');
    const code = back.location?.searchParams.get('code') as string;

    const token = await redeemCode(svc, 'acme', code, verifier, CLIENT_ID);
    expect(token.status, token.text).toBe(200);
    // The wallet showed what identifies the person: the session now lives as an offer would (86400 s by default).
    expect(await lifetime()).toBe(86400);
    const key = await holderKey();
    const { c_nonce } = (await svc.raw('POST', '/issuers/acme/nonce')).body;
    const proof = await keyProof(key, `${svc.url}/issuers/acme`, c_nonce);
    const issued = await svc.raw('POST', '/issuers/acme/credential', {
      headers: { authorization: `Bearer ${token.body.access_token}` },
      body: { credential_configuration_id: 'membership', proofs: { jwt: [proof] } },
    });
    expect(issued.status, issued.text).toBe(200);
    const { claims } = await verifySdJwtIndependently(issued.body.credentials[0].credential, rootCertificate);
    expect(claims.member_level).toBe('gold');

    const [row] = await svc.db.selectFrom('sessions').select('id').where('public_data', 'like', '%"wallet-initiated"%').execute();
    const logs = ((await svc.call('GET', `/api/session/${row?.id}/logs`, { token: admin })).body as { message: string }[]).map(
      (l) => l.message,
    );
    expect(logs).toEqual(
      expect.arrayContaining(['wallet-initiated authorization request', 'interactive authorization completed', 'credential issued']),
    );
  });

  it('refuses a configuration nothing would identify the person for, saying so; one the issuer lacks is unknown', async () => {
    const before = await svc.db.selectFrom('sessions').select('id').execute();
    const plain = await svc.call('POST', '/issuers/acme/par', { form: requestWithoutOffer('plain_scope') });
    expect(plain.status).toBe(400);
    expect(plain.body).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringMatching(/issuer_state is required for 'plain'/),
    });
    const unknown = await svc.call('POST', '/issuers/acme/par', {
      form: {
        ...requestWithoutOffer('membership_scope'),
        authorization_details: JSON.stringify([{ type: 'openid_credential', credential_configuration_id: 'nothing-here' }]),
      },
    });
    expect(unknown.body).toMatchObject({
      error: 'invalid_authorization_details',
      error_description: "'nothing-here' is not a credential configuration of this credential issuer",
    });
    // A refused request opens no session.
    expect(await svc.db.selectFrom('sessions').select('id').execute()).toHaveLength(before.length);
  });

  it('a pushed wallet-initiated request goes on at the interactive authorization endpoint, not at the plain authorization endpoint', async () => {
    const pushed = await svc.raw('POST', '/issuers/acme/par', { form: requestWithoutOffer('membership_scope') });
    expect(pushed.status, pushed.text).toBe(201);
    const authorize = await fetch(
      `${svc.url}/issuers/acme/authorize?${new URLSearchParams({ client_id: CLIENT_ID, request_uri: pushed.body.request_uri })}`,
      { redirect: 'manual' },
    );
    const location = new URL(authorize.headers.get('location') as string);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/requires interactive authorization/);
  });
});

describe('bounded: an address, and an issuer, open at most so many wallet-initiated sessions per window', () => {
  let limited: TestService;
  let token: string;
  beforeAll(async () => {
    // Addresses come from X-Forwarded-For (TRUST_PROXY), so one test can be many wallets.
    limited = await startService({
      TRUST_PROXY: 'true',
      WALLET_INITIATED_LIMIT_PER_ADDRESS: '5',
      WALLET_INITIATED_LIMIT_PER_TENANT: '12',
      WALLET_INITIATED_WINDOW: '60',
    });
    // 'offers' makes a credential offer with its token, which is the last one kept.
    for (const tenant of ['bounded', 'neighbour', 'offers']) {
      token = (await limited.tenant(tenant)).token;
      const membership = {
        id: 'membership',
        config: { format: 'dc+sd-jwt', scope: 'membership_scope' },
        vct: 'urn:example:membership',
        fields: [{ path: ['member_level'], type: 'string', mandatory: true }],
        iaeActions: [
          { type: 'redirect-to-web', url: 'https://integrator.example/join', callbackKey: await exportJWK(integrator.publicKey) },
        ],
      };
      expect((await limited.raw('POST', '/api/issuer/credentials', { token, body: membership })).status).toBe(201);
    }
  });
  afterAll(() => limited.stop());

  const from = (address: string) => ({ 'x-forwarded-for': address });
  const par = (address: string, tenant = 'bounded') =>
    limited.raw('POST', `/issuers/${tenant}/par`, { form: requestWithoutOffer('membership_scope'), headers: from(address) });
  const sessionsOf = async (tenant: string) =>
    (await limited.db.selectFrom('sessions').select('id').where('tenant_id', '=', tenant).execute()).length;

  it('100 parallel PARs from one address open 5 sessions; the rest are 429 with Retry-After, the same for the first interactive authorization request', async () => {
    const replies = await Promise.all(Array.from({ length: 100 }, () => par('198.51.100.1')));
    expect(replies.filter((reply) => reply.status === 201)).toHaveLength(5);
    const refused = replies.filter((reply) => reply.status !== 201);
    expect(new Set(refused.map((reply) => reply.status))).toEqual(new Set([429]));
    expect(refused[0]?.body).toEqual({
      error: 'invalid_request',
      error_description: expect.stringMatching(/^too many wallet-initiated authorization requests from this address; retry in \d+ s$/),
    });
    const retryAfter = Number(refused[0]?.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await sessionsOf('bounded')).toBe(5);

    const iae = await limited.raw('POST', '/issuers/bounded/iae', {
      form: { ...requestWithoutOffer('membership_scope'), interaction_types_supported: 'redirect_to_web' },
      headers: from('198.51.100.1'),
    });
    expect(iae.status).toBe(429);
    expect(iae.headers.get('retry-after')).toEqual(expect.any(String));
    expect(await sessionsOf('bounded')).toBe(5);

    // Another address, and the same address at another issuer, still start flows.
    expect((await par('198.51.100.2')).status).toBe(201);
    const started = await limited.raw('POST', '/issuers/neighbour/iae', {
      form: { ...requestWithoutOffer('membership_scope'), interaction_types_supported: 'redirect_to_web' },
      headers: from('198.51.100.1'),
    });
    expect(started.status, started.text).toBe(200);
    expect(started.body).toMatchObject({ status: 'require_interaction', type: 'redirect_to_web' });
  });

  it('the issuer takes 12 per window from all addresses together; requests with an offer are not counted', async () => {
    // 6 admitted so far in this window (5 + 1 above): 20 more addresses get 6 more between them.
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => par(`203.0.113.${i + 1}`)));
    expect(replies.filter((reply) => reply.status === 201)).toHaveLength(6);
    const refused = replies.find((reply) => reply.status === 429);
    expect(refused?.body.error_description).toMatch(/^too many wallet-initiated authorization requests to this issuer; retry in \d+ s$/);
    expect(await sessionsOf('bounded')).toBe(12);

    // An offer's request names its session: it opens none, and is not limited.
    const offer = await limited.call('POST', '/api/issuer/offer', {
      token,
      body: {
        response_type: 'uri',
        flow: 'authorization_code',
        credentialConfigurationIds: ['membership'],
        credentialClaims: { membership: { type: 'inline', claims: { member_level: 'gold' } } },
      },
    });
    expect(offer.status, offer.text).toBe(201);
    const issuerState = (offer.body.credentialOffer as any).grants.authorization_code.issuer_state as string;
    const pushed = await limited.raw('POST', '/issuers/offers/par', {
      form: { ...requestWithoutOffer('membership_scope'), issuer_state: issuerState },
      headers: from('198.51.100.1'),
    });
    expect(pushed.status, pushed.text).toBe(201);
  });

  it('a new window admits again; the clean-up job drops the windows that have passed', async () => {
    const windows = () => limited.db.selectFrom('request_windows').select('key').where('key', 'like', 'wallet-initiated%').execute();
    // 23 (issuer, address) pairs and 2 issuers have windows; one of them began more than a window ago.
    expect(await windows()).toHaveLength(25);
    const lapsed = new Date(Date.now() - 61_000).toISOString();
    await limited.db.updateTable('request_windows').set({ window_start: lapsed }).where('key', 'like', '%198.51.100.2%').execute();
    await limited.running.services.scheduler.runNow('request-windows-cleanup');
    expect(await windows()).toHaveLength(24);
    // The issuer's window still counts: moved back too, its requests are admitted again.
    await limited.db.updateTable('request_windows').set({ window_start: lapsed }).execute();
    expect((await par('198.51.100.1')).status).toBe(201);
  });
});
