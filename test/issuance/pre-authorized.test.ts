import 'reflect-metadata';
import { createHash, createPrivateKey, type JsonWebKey, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { decodeJwt, exportJWK, generateKeyPair, importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldsOf } from '../support/problems.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey, receiveCredentials } from '../support/wallet.js';

let svc: TestService;
let admin: string;
let rootCertificate: string;

const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt', display: [{ name: 'Person identification', locale: 'en' }] },
  vct: 'urn:eudi:pid:1',
  keyBinding: true,
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true, display: [{ locale: 'en', name: 'Given name' }] },
    { path: ['family_name'], type: 'string', mandatory: true },
    { path: ['birthdate'], type: 'date' },
    { path: ['nationality'], type: 'string', disclosable: false, defaultValue: 'DE' },
  ],
};
const GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

beforeAll(async () => {
  // Webhook retries a few milliseconds apart, so the retry test does not wait for the default delays.
  // A horizon of two seconds: a failing webhook gives up after the listed delays and a few doublings.
  svc = await startService({ WEBHOOK_RETRY_DELAYS_MS: '20,40,80', WEBHOOK_RETRY_HORIZON_SECONDS: '2' });
  admin = (await svc.tenant('acme')).token;
  const created = await svc.raw('POST', '/api/issuer/credentials', { token: admin, body: PID });
  expect(created.status, created.text).toBe(201);
  rootCertificate = (await svc.raw('GET', '/api/key-chain/default-attestation', { token: admin })).body.rootCertificate;
});
afterAll(() => svc.stop());

const offer = async (body: Record<string, unknown> = {}, token = admin) =>
  svc.raw('POST', '/api/issuer/offer', {
    token,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: ['pid'],
      credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12' } } },
      ...body,
    },
  });
const codeOf = (reply: { body: any }) => reply.body.credentialOffer.grants[GRANT]['pre-authorized_code'] as string;

const verifySdJwt = (credential: string) => verifySdJwtIndependently(credential, rootCertificate);

describe('pre-authorized SD-JWT VC issuance', () => {
  it('publishes issuer metadata describing the configuration', async () => {
    const metadata = (await svc.raw('GET', '/.well-known/openid-credential-issuer/issuers/acme')).body;
    expect(metadata).toMatchObject({
      credential_issuer: `${svc.url}/issuers/acme`,
      credential_endpoint: `${svc.url}/issuers/acme/credential`,
      nonce_endpoint: `${svc.url}/issuers/acme/nonce`,
      credential_configurations_supported: {
        pid: {
          format: 'dc+sd-jwt',
          vct: 'urn:eudi:pid:1',
          cryptographic_binding_methods_supported: ['jwk'],
          credential_signing_alg_values_supported: ['ES256'],
          proof_types_supported: { jwt: { proof_signing_alg_values_supported: ['ES256', 'ES384', 'ES512'] } },
        },
      },
    });
    expect(metadata.credential_configurations_supported.pid.credential_metadata.claims).toContainEqual({
      path: ['given_name'],
      mandatory: true,
      display: [{ locale: 'en', name: 'Given name' }],
    });
    const as = (await svc.raw('GET', '/.well-known/oauth-authorization-server/issuers/acme')).body;
    expect(as).toMatchObject({
      issuer: `${svc.url}/issuers/acme`,
      token_endpoint: `${svc.url}/issuers/acme/token`,
      'pre-authorized_grant_anonymous_access_supported': true,
    });
    expect(metadata.status_list_aggregation_endpoint).toBe(`${svc.url}/issuers/acme/status-lists`);
    expect(as.status_list_aggregation_endpoint).toBe(metadata.status_list_aggregation_endpoint);
    expect((await fetch(metadata.status_list_aggregation_endpoint)).status).toBe(200);
    expect((await svc.call('GET', '/.well-known/openid-credential-issuer/issuers/nobody')).status).toBe(404);
  });

  it('shows a change of the configurations or the issuer settings in the metadata at once', async () => {
    const metadata = async () => (await svc.raw('GET', '/.well-known/openid-credential-issuer/issuers/acme')).body;
    await metadata(); // built and kept
    const extra = { ...PID, id: 'pid-extra', vct: 'urn:example:extra' };
    expect((await svc.raw('POST', '/api/issuer/credentials', { token: admin, body: extra })).status).toBe(201);
    expect(Object.keys((await metadata()).credential_configurations_supported)).toContain('pid-extra');
    expect((await svc.call('DELETE', '/api/issuer/credentials/pid-extra', { token: admin })).status).toBe(204);
    expect(Object.keys((await metadata()).credential_configurations_supported)).not.toContain('pid-extra');
    const settings = (await svc.call('GET', '/api/issuer/config', { token: admin })).body;
    const display = [{ name: 'Acme issuer', locale: 'en' }];
    expect((await svc.call('PUT', '/api/issuer/config', { token: admin, body: { ...settings, display } })).status).toBe(200);
    expect((await metadata()).display).toEqual(display);
    expect((await svc.call('PUT', '/api/issuer/config', { token: admin, body: settings })).status).toBe(200);
  });

  it('issues a credential a wallet library receives, verifiable with an independent SD-JWT library', async () => {
    const created = await offer();
    expect(created.status, created.text).toBe(201);
    expect(created.body.uri).toMatch(/^openid-credential-offer:\/\/\?credential_offer_uri=/);
    const { response, keys } = await receiveCredentials(created.body.uri);
    const credential = ((response.credentialResponse.credentials ?? [])[0] as { credential: string }).credential;
    const verified = await verifySdJwt(credential);
    expect(verified.header.typ).toBe('dc+sd-jwt');
    expect(verified.payload).toMatchObject({
      iss: `${svc.url}/issuers/acme`,
      vct: 'urn:eudi:pid:1',
      nationality: 'DE',
      cnf: { jwk: { x: keys[0]?.publicJwk.x, y: keys[0]?.publicJwk.y } },
    });
    const signed = decodeJwt(credential.split('~')[0] as string);
    expect(signed.given_name).toBeUndefined(); // selectively disclosable: only in a disclosure
    expect(signed.nationality).toBe('DE'); // disclosable: false
    expect((signed._sd as string[]).length).toBe(3);
    expect(verified.claims).toMatchObject({ given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12', nationality: 'DE' });
    expect(response.credentialResponse.notification_id).toEqual(expect.any(String));

    const session = await svc.running.services.sessions.get('acme', created.body.session);
    expect(session).toMatchObject({ status: 'completed', consumed: true });
    expect(session.consumedAt).toEqual(expect.any(String));
  });

  it('issues a batch: one credential per proof, each bound to its key', async () => {
    const keys = await Promise.all([holderKey(), holderKey(), holderKey()]);
    const { response } = await receiveCredentials((await offer()).body.uri, { keys });
    const credentials = response.credentialResponse.credentials ?? [];
    expect(credentials).toHaveLength(3);
    const bound = await Promise.all(
      credentials.map(async (c) => (await verifySdJwt((c as { credential: string }).credential)).payload.cnf.jwk.x),
    );
    expect(bound.sort()).toEqual(keys.map((k) => k.publicJwk.x).sort());
  });

  it('requires the transaction code, counts wrong ones and locks the offer after five', async () => {
    const created = await offer({ tx_code: '493817' });
    expect(created.body.credentialOffer.grants[GRANT].tx_code).toEqual({ input_mode: 'numeric', length: 6 });
    const token = (tx?: string) =>
      svc.raw('POST', '/issuers/acme/token', {
        form: { grant_type: GRANT, 'pre-authorized_code': codeOf(created), ...(tx && { tx_code: tx }) },
      });
    const missing = await token();
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_request');
    for (let attempt = 1; attempt <= 5; attempt++) {
      const wrong = await token('000000');
      expect(wrong.status).toBe(400);
      expect(wrong.body.error).toBe('invalid_grant');
      expect((await svc.running.services.sessions.get('acme', created.body.session)).txCodeFailedAttempts).toBe(attempt);
    }
    const locked = await token('493817');
    expect(locked.status).toBe(400);
    expect(locked.body.error).toBe('invalid_grant');
    expect((await svc.running.services.sessions.get('acme', created.body.session)).status).toBe('failed');
  });

  it('accepts the right transaction code', async () => {
    const { response } = await receiveCredentials((await offer({ tx_code: 'bluebird' })).body.uri, { txCode: 'bluebird' });
    expect(response.credentialResponse.credentials).toHaveLength(1);
  });

  it('redeems an offer once, even when two wallets race for it', async () => {
    const created = await offer();
    const form = { grant_type: GRANT, 'pre-authorized_code': codeOf(created) };
    const [first, second] = await Promise.all([
      svc.call('POST', '/issuers/acme/token', { form }),
      svc.call('POST', '/issuers/acme/token', { form }),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 400]);
    const third = await svc.call('POST', '/issuers/acme/token', { form });
    expect(third.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('binds tokens to DPoP when the wallet uses it, and then refuses them as plain bearer tokens', async () => {
    const { response, token, keys, client, issuerMetadata } = await receiveCredentials((await offer()).body.uri, { dpop: true });
    expect(token.accessTokenResponse.token_type).toBe('DPoP');
    expect(response.credentialResponse.credentials).toHaveLength(1);
    const { c_nonce } = await client.requestNonce({ issuerMetadata });
    const proof = await client.createCredentialRequestJwtProof({
      issuerMetadata,
      signer: (keys[0] as any).signer,
      nonce: c_nonce,
      credentialConfigurationId: 'pid',
    });
    const bearer = await svc.raw('POST', '/issuers/acme/credential', {
      headers: { authorization: `Bearer ${token.accessTokenResponse.access_token}` },
      body: { credential_configuration_id: 'pid', proofs: { jwt: [proof.jwt] } },
    });
    expect(bearer.status).toBe(401);
    expect(bearer.body.error).toBe('invalid_token');
  });
});

describe('credential request failures', () => {
  async function tokenFor() {
    const reply = await svc.raw('POST', '/issuers/acme/token', {
      form: { grant_type: GRANT, 'pre-authorized_code': codeOf(await offer()) },
    });
    return reply.body.access_token as string;
  }
  async function proof(
    options: { nonce?: string; aud?: string; iat?: number; typ?: string; signWith?: Awaited<ReturnType<typeof holderKey>> } = {},
  ) {
    const key = await holderKey();
    const signer = options.signWith ?? key;
    const nonce = options.nonce ?? (await svc.raw('POST', '/issuers/acme/nonce')).body.c_nonce;
    return new SignJWT({
      aud: options.aud ?? `${svc.url}/issuers/acme`,
      ...(nonce !== 'none' && { nonce }),
      iat: options.iat ?? Math.floor(Date.now() / 1000),
    })
      .setProtectedHeader({ alg: 'ES256', typ: options.typ ?? 'openid4vci-proof+jwt', jwk: key.publicJwk })
      .sign(await importJWK(signer.privateJwk, 'ES256'));
  }
  const request = (token: string, body: Record<string, unknown>) =>
    svc.raw('POST', '/issuers/acme/credential', { headers: { authorization: `Bearer ${token}` }, body });

  it('refuses a request without an access token or with a forged one', async () => {
    expect((await svc.call('POST', '/issuers/acme/credential', { body: { credential_configuration_id: 'pid' } })).status).toBe(401);
    const forged = await request('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl', { credential_configuration_id: 'pid' });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toContain('invalid_token');
  });

  it('refuses a configuration that is not part of the offer', async () => {
    const reply = await request(await tokenFor(), { credential_configuration_id: 'mdl', proofs: { jwt: [await proof()] } });
    expect(reply.body.error).toBe('unknown_credential_configuration');
  });

  it('refuses a proof without nonce, with an unknown nonce, and a replayed nonce', async () => {
    const token = await tokenFor();
    expect(
      (await request(token, { credential_configuration_id: 'pid', proofs: { jwt: [await proof({ nonce: 'none' })] } })).body.error,
    ).toBe('invalid_nonce');
    expect(
      (await request(token, { credential_configuration_id: 'pid', proofs: { jwt: [await proof({ nonce: 'made-up' })] } })).body.error,
    ).toBe('invalid_nonce');
    const nonce = (await svc.raw('POST', '/issuers/acme/nonce')).body.c_nonce;
    expect((await request(token, { credential_configuration_id: 'pid', proofs: { jwt: [await proof({ nonce })] } })).status).toBe(200);
    const again = await request(await tokenFor(), { credential_configuration_id: 'pid', proofs: { jwt: [await proof({ nonce })] } });
    expect(again.body.error).toBe('invalid_nonce');
  });

  it('refuses an expired nonce', async () => {
    const nonce = (await svc.raw('POST', '/issuers/acme/nonce')).body.c_nonce;
    await svc.db
      .updateTable('nonces')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .execute();
    const reply = await request(await tokenFor(), { credential_configuration_id: 'pid', proofs: { jwt: [await proof({ nonce })] } });
    expect(reply.body.error).toBe('invalid_nonce');
  });

  it('refuses a proof signed by another key than its jwk, a wrong audience, a stale iat and a wrong typ', async () => {
    const token = await tokenFor();
    const other = await holderKey();
    for (const options of [
      { signWith: other },
      { aud: 'https://someone.else' },
      { iat: Math.floor(Date.now() / 1000) - 3600 },
      { typ: 'JWT' },
    ]) {
      const reply = await request(token, { credential_configuration_id: 'pid', proofs: { jwt: [await proof(options)] } });
      expect(reply.status, JSON.stringify(options)).toBe(400);
      expect(reply.body.error, JSON.stringify(options)).toBe('invalid_proof');
    }
  });

  it('refuses key proofs and DPoP proofs that a careful verifier must: wrong curve for alg, alg none or HS256, crit, expired, signed by another key', async () => {
    const key = await holderKey();
    const p384 = await generateKeyPair('ES384', { extractable: true });
    const p384Jwk = await exportJWK(p384.publicKey);
    const now = Math.floor(Date.now() / 1000);
    const unsigned = (header: Record<string, unknown>, payload: Record<string, unknown>) =>
      `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.`;
    // Signed with node:crypto directly: jose would refuse to sign some of these (an unknown crit).
    const esSign = async (
      header: Record<string, unknown>,
      payload: Record<string, unknown>,
      privateJwk: object = key.privateJwk,
      hash = 'sha256',
    ) => {
      const input = `${Buffer.from(JSON.stringify({ alg: 'ES256', ...header })).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
      const signature = sign(hash, Buffer.from(input), {
        key: createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' }),
        dsaEncoding: 'ieee-p1363',
      });
      return `${input}.${signature.toString('base64url')}`;
    };
    const p384Private = await exportJWK(p384.privateKey);

    // Key proofs.
    const token = await tokenFor();
    const freshNonce = async () => (await svc.raw('POST', '/issuers/acme/nonce')).body.c_nonce as string;
    const claims = async () => ({ aud: `${svc.url}/issuers/acme`, nonce: await freshNonce(), iat: now });
    const typ = 'openid4vci-proof+jwt';
    const hostileProofs: Record<string, () => Promise<string>> = {
      'alg ES256 with a P-384 key': async () => esSign({ typ, jwk: p384Jwk }, await claims(), p384Private),
      'alg none': async () => unsigned({ alg: 'none', typ, jwk: key.publicJwk }, await claims()),
      'alg HS256': async () =>
        new SignJWT(await claims())
          .setProtectedHeader({ alg: 'HS256', typ, jwk: key.publicJwk } as never)
          .sign(new TextEncoder().encode('k'.repeat(32))),
      crit: async () => esSign({ typ, jwk: key.publicJwk, crit: ['x-unknown'], 'x-unknown': 1 }, await claims()),
      expired: async () => esSign({ typ, jwk: key.publicJwk }, { ...(await claims()), exp: now - 600 }),
      'not yet valid': async () => esSign({ typ, jwk: key.publicJwk }, { ...(await claims()), nbf: now + 600 }),
      'an RSA jwk': async () => esSign({ typ, jwk: { kty: 'RSA', n: 'AQAB', e: 'AQAB' } }, await claims()),
    };
    for (const [name, make] of Object.entries(hostileProofs)) {
      const reply = await request(token, { credential_configuration_id: 'pid', proofs: { jwt: [await make()] } });
      expect(reply.status, name).toBe(400);
      expect(reply.body.error, name).toBe('invalid_proof');
    }

    // DPoP proofs at the token endpoint.
    const tokenUrl = `${svc.url}/issuers/acme/token`;
    const dpopClaims = () => ({ htm: 'POST', htu: tokenUrl, iat: Math.floor(Date.now() / 1000), jti: crypto.randomUUID() });
    const other = await holderKey();
    const hostileDpop: Record<string, () => Promise<string>> = {
      'signed by another key': () => esSign({ typ: 'dpop+jwt', jwk: key.publicJwk }, dpopClaims(), other.privateJwk),
      'alg none': async () => unsigned({ alg: 'none', typ: 'dpop+jwt', jwk: key.publicJwk }, dpopClaims()),
      'wrong curve for alg': () =>
        esSign({ typ: 'dpop+jwt', jwk: p384Jwk }, dpopClaims(), undefined, 'ES256').catch(() =>
          unsigned({ alg: 'ES256', typ: 'dpop+jwt', jwk: p384Jwk }, dpopClaims()),
        ),
      crit: () => esSign({ typ: 'dpop+jwt', jwk: key.publicJwk, crit: ['x-unknown'], 'x-unknown': 1 }, dpopClaims()),
      expired: () => esSign({ typ: 'dpop+jwt', jwk: key.publicJwk }, { ...dpopClaims(), exp: Math.floor(Date.now() / 1000) - 600 }),
      'another URL': () => esSign({ typ: 'dpop+jwt', jwk: key.publicJwk }, { ...dpopClaims(), htu: `${svc.url}/issuers/other/token` }),
    };
    for (const [name, make] of Object.entries(hostileDpop)) {
      const reply = await svc.raw('POST', '/issuers/acme/token', {
        headers: { dpop: await make() },
        form: { grant_type: GRANT, 'pre-authorized_code': codeOf(await offer()) },
      });
      expect(reply.status, name).toBe(400);
      expect(reply.body.error, name).toBe('invalid_dpop_proof');
    }
    // A DPoP proof is good once: its replay is refused.
    const once = await esSign({ typ: 'dpop+jwt', jwk: key.publicJwk }, dpopClaims());
    const first = await svc.raw('POST', '/issuers/acme/token', {
      headers: { dpop: once },
      form: { grant_type: GRANT, 'pre-authorized_code': codeOf(await offer()) },
    });
    expect(first.body.token_type).toBe('DPoP');
    const replay = await svc.raw('POST', '/issuers/acme/token', {
      headers: { dpop: once },
      form: { grant_type: GRANT, 'pre-authorized_code': codeOf(await offer()) },
    });
    expect(replay.body.error).toBe('invalid_dpop_proof');
    // The bound token works only with a proof of the same key, over that token.
    const credentialUrl = `${svc.url}/issuers/acme/credential`;
    const bound = first.body.access_token as string;
    const ath = createHash('sha256').update(bound).digest('base64url');
    const resourceProof = (privateJwk = key.privateJwk, extra: Record<string, unknown> = {}) =>
      esSign({ typ: 'dpop+jwt', jwk: key.publicJwk }, { ...dpopClaims(), htu: credentialUrl, ath, ...extra }, privateJwk);
    const body = { credential_configuration_id: 'pid', proofs: { jwt: [await proof()] } };
    for (const [name, dpop] of [
      ['proof of the same key over another token', await resourceProof(undefined, { ath: 'x'.repeat(43) })],
      [
        'proof by another key',
        await esSign({ typ: 'dpop+jwt', jwk: other.publicJwk }, { ...dpopClaims(), htu: credentialUrl, ath }, other.privateJwk),
      ],
    ] as const) {
      const reply = await svc.raw('POST', '/issuers/acme/credential', { headers: { authorization: `DPoP ${bound}`, dpop }, body });
      expect([400, 401], name).toContain(reply.status);
      expect(['invalid_dpop_proof', 'invalid_token'], name).toContain(reply.body.error);
    }
    const good = await svc.call('POST', '/issuers/acme/credential', {
      headers: { authorization: `DPoP ${bound}`, dpop: await resourceProof() },
      body,
    });
    expect(good.status, good.text).toBe(200);
  });

  it('issues a configuration once per offer', async () => {
    const token = await tokenFor();
    expect((await request(token, { credential_configuration_id: 'pid', proofs: { jwt: [await proof()] } })).status).toBe(200);
    expect((await request(token, { credential_configuration_id: 'pid', proofs: { jwt: [await proof()] } })).body.error).toBe(
      'invalid_credential_request',
    );
  });
});

describe('offers', () => {
  it('refuses configurations outside the client allow-list with 403', async () => {
    const created = await svc.call('POST', '/api/client', {
      token: admin,
      body: { clientId: 'acme-limited', roles: ['issuance:offer'], allowedIssuanceConfigs: ['other'] },
    });
    const limited = await svc.token('acme-limited', created.body.secret);
    expect((await offer({}, limited)).status).toBe(403);
  });

  it('names unknown configurations, invalid inline claims and unsupported response types', async () => {
    const unknown = await offer({ credentialConfigurationIds: ['nope'], credentialClaims: {} });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].field).toBe('body.credentialConfigurationIds.0');
    const missing = await offer({ credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika' } } } });
    expect(missing.status).toBe(400);
    expect(fieldsOf(missing).join(' ')).toContain('family_name');
    const flow = await offer({ flow: 'implicit' });
    expect(flow.status).toBe(400);
    expect(flow.body.errors[0].field).toBe('body.flow');
    const annexC = await offer({ response_type: 'iso-18013-7' });
    expect(annexC.body.errors[0].field).toBe('body.response_type');
  });

  it("keeps one tenant's offers away from another tenant's issuer", async () => {
    await svc.tenant('globex');
    const created = await offer();
    const reply = await svc.raw('POST', '/issuers/globex/token', { form: { grant_type: GRANT, 'pre-authorized_code': codeOf(created) } });
    expect(reply.body.error).toBe('invalid_grant');
  });
});

describe('claims from an attribute provider, and deferred issuance', () => {
  let provider: Server;
  let answer: { status: number; body: unknown } = { status: 202, body: { message: 'checking records' } };
  const received: { body: any; apiKey: unknown }[] = [];
  beforeAll(async () => {
    provider = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        received.push({ body: JSON.parse(body), apiKey: req.headers['x-api-key'] });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    const { port } = provider.address() as { port: number };
    const made = await svc.call('POST', '/api/issuer/attribute-providers', {
      token: admin,
      body: {
        id: 'registry',
        name: 'Population registry',
        url: `http://127.0.0.1:${port}/claims`,
        auth: { type: 'header', header: { name: 'X-Api-Key', value: 'registry-secret' } },
      },
    });
    expect(made.status, made.text).toBe(201);
  });
  afterAll(() => new Promise<void>((resolve) => provider.close(() => resolve())));
  const viaProvider = { credentialClaims: { pid: { type: 'attributeProvider', attributeProviderId: 'registry' } } };

  it('asks the provider with its credentials and issues what it answers', async () => {
    answer = { status: 200, body: { claims: { given_name: 'Max', family_name: 'Mustermann' } } };
    const created = await offer(viaProvider);
    const { response } = await receiveCredentials(created.body.uri);
    const verified = await verifySdJwt(((response.credentialResponse.credentials ?? [])[0] as { credential: string }).credential);
    expect(verified.claims).toMatchObject({ given_name: 'Max', family_name: 'Mustermann' });
    expect(received.at(-1)).toMatchObject({
      apiKey: 'registry-secret',
      body: { sessionId: created.body.session, credentialConfigurationId: 'pid' },
    });
  });

  it('defers when the provider is not ready, then delivers once the integrator completes it', async () => {
    answer = { status: 202, body: { message: 'checking records' } };
    const created = await offer(viaProvider);
    const { response, client, issuerMetadata, token } = await receiveCredentials(created.body.uri);
    const transactionId = response.credentialResponse.transaction_id as string;
    expect(transactionId).toEqual(expect.any(String));
    const auth = { authorization: `Bearer ${token.accessTokenResponse.access_token}` };
    const pending = await svc.call('POST', '/issuers/acme/deferred-credential', { headers: auth, body: { transaction_id: transactionId } });
    expect(pending.status).toBe(202);
    const completed = await svc.call('POST', `/api/issuer/deferred/${transactionId}/complete`, {
      token: admin,
      body: { claims: { given_name: 'Late', family_name: 'Arrival' } },
    });
    expect(completed.body).toEqual({ transactionId, status: 'ready' });
    const delivered = await client.retrieveDeferredCredentials({
      issuerMetadata,
      accessToken: token.accessTokenResponse.access_token,
      transactionId,
    });
    const verified = await verifySdJwt(((delivered.deferredCredentialResponse.credentials ?? [])[0] as { credential: string }).credential);
    expect(verified.claims).toMatchObject({ given_name: 'Late' });
    const again = await svc.raw('POST', '/issuers/acme/deferred-credential', { headers: auth, body: { transaction_id: transactionId } });
    expect(again.body.error).toBe('invalid_transaction_id');
  });

  it('answers invalid_transaction_id after the integrator fails the transaction', async () => {
    answer = { status: 202, body: {} };
    const created = await offer(viaProvider);
    const { response, token } = await receiveCredentials(created.body.uri);
    const transactionId = response.credentialResponse.transaction_id as string;
    const failed = await svc.call('POST', `/api/issuer/deferred/${transactionId}/fail`, { token: admin });
    expect(failed.body).toMatchObject({ transactionId, status: 'failed' });
    const reply = await svc.raw('POST', '/issuers/acme/deferred-credential', {
      headers: { authorization: `Bearer ${token.accessTokenResponse.access_token}` },
      body: { transaction_id: transactionId },
    });
    expect(reply.body.error).toBe('invalid_transaction_id');
  });
});

describe('notifications', () => {
  it('records what the wallet reports about the credential', async () => {
    const created = await offer();
    const { response, client, issuerMetadata, token } = await receiveCredentials(created.body.uri);
    await client.sendNotification({
      issuerMetadata,
      accessToken: token.accessTokenResponse.access_token,
      notification: { notificationId: response.credentialResponse.notification_id as string, event: 'credential_accepted' },
    });
    const session = await svc.running.services.sessions.get('acme', created.body.session);
    expect(session.public.notifications).toEqual([expect.objectContaining({ event: 'credential_accepted' })]);
    const unknown = await svc.raw('POST', '/issuers/acme/notification', {
      headers: { authorization: `Bearer ${token.accessTokenResponse.access_token}` },
      body: { notification_id: 'nope', event: 'credential_accepted' },
    });
    expect(unknown.body.error).toBe('invalid_notification_id');
    expect(decodeJwt(token.accessTokenResponse.access_token).sub).toBe(created.body.session);
  });
});

describe('webhook notifications', () => {
  let receiver: Server;
  let failWith = 0;
  const deliveries: { body: any; auth: unknown }[] = [];
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        deliveries.push({ body: JSON.parse(body), auth: req.headers.authorization });
        res.writeHead(failWith || 204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as { port: number };
    const made = await svc.call('POST', '/api/issuer/webhook-endpoints', {
      token: admin,
      body: {
        id: 'crm',
        name: 'CRM',
        url: `http://127.0.0.1:${port}/hook`,
        auth: { type: 'header', header: { name: 'Authorization', value: 'Bearer hook-secret' } },
      },
    });
    expect(made.status, made.text).toBe(201);
  });
  afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  const logsOf = (sessionId: string) =>
    svc.db.selectFrom('session_logs').selectAll().where('session_id', '=', sessionId).orderBy('seq').execute();

  it('sends each status change of the session to the webhook endpoint with its auth header', async () => {
    failWith = 0;
    const created = await offer({ webhookEndpointId: 'crm' });
    await receiveCredentials(created.body.uri);
    await expect
      .poll(() => deliveries.filter((d) => d.body.sessionId === created.body.session).map((d) => d.body.status), { timeout: 5000 })
      .toEqual(['fetched', 'completed']);
    const last = deliveries.at(-1);
    expect(last).toMatchObject({
      auth: 'Bearer hook-secret',
      body: { type: 'issuance.status', tenantId: 'acme', previousStatus: 'fetched', credentialConfigurationIds: ['pid'] },
    });
    await expect.poll(async () => (await logsOf(created.body.session)).filter((l) => l.message === 'webhook delivered').length).toBe(2);
  });

  it('logs a failed delivery in the session log and retries it', async () => {
    failWith = 500;
    const created = await offer({ webhookEndpointId: 'crm' });
    await svc.raw(
      'GET',
      `/issuers/acme/credential-offer/${new URL(decodeURIComponent(created.body.uri.split('credential_offer_uri=')[1])).pathname.split('/').pop()}`,
    );
    await expect
      .poll(async () => (await logsOf(created.body.session)).some((l) => l.message === 'webhook delivery failed; giving up'), {
        timeout: 5000,
      })
      .toBe(true);
    const failures = (await logsOf(created.body.session)).filter((l) => l.message.startsWith('webhook delivery failed'));
    expect(JSON.parse(failures[0]?.details as string)).toMatchObject({ webhookEndpointId: 'crm', attempt: 1, reason: 'answered 500' });
    // An attempt, a retry per configured delay, then retries at doubling waits until the horizon; the last gives up.
    expect(failures.length).toBeGreaterThanOrEqual(4);
    expect(failures.map((f) => JSON.parse(f.details as string).attempt)).toEqual(failures.map((_, i) => i + 1));
    expect(failures.slice(0, -1).every((f) => f.message === 'webhook delivery failed; will retry')).toBe(true);
    expect(failures.map((f) => f.message).at(-1)).toBe('webhook delivery failed; giving up');
    failWith = 0;
  });
});
