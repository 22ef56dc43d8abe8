// Encrypted credential requests and responses (OpenID4VCI 1.0 section 10) at the credential and
// deferred credential endpoints, against the real server. The wallet side is jose: it encrypts the
// request to the key of credential_request_encryption and decrypts the answer with its own key.
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import { CompactEncrypt, compactDecrypt, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startService, type TestService } from '../support/service.js';
import { type HolderKey, holderKey } from '../support/wallet.js';

let svc: TestService;
let acme: string;
let rootCertificate: string;
let issuer: string;
let provider: Server;
/** What the attribute provider answers: 200 with claims issues, 202 defers. */
let providerAnswer: { status: number; body: unknown } = { status: 202, body: {} };

const GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt' },
  vct: 'urn:example:pid',
  keyBinding: true,
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['family_name'], type: 'string', mandatory: true },
  ],
};
const INLINE = { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann' } };
const VIA_PROVIDER = { type: 'attributeProvider', attributeProviderId: 'registry' };

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  const created = await svc.raw('POST', '/api/issuer/credentials', { token: acme, body: PID });
  expect(created.status, created.text).toBe(201);
  rootCertificate = (await svc.raw('GET', '/api/key-chain/default-attestation', { token: acme })).body.rootCertificate;
  issuer = `${svc.url}/issuers/acme`;
  provider = createServer((request, response) => {
    request
      .resume()
      .on('end', () =>
        response.writeHead(providerAnswer.status, { 'content-type': 'application/json' }).end(JSON.stringify(providerAnswer.body)),
      );
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  const made = await svc.raw('POST', '/api/issuer/attribute-providers', {
    token: acme,
    body: {
      id: 'registry',
      name: 'Registry',
      url: `http://127.0.0.1:${(provider.address() as { port: number }).port}/claims`,
      auth: { type: 'none' },
    },
  });
  expect(made.status, made.text).toBe(201);
});
afterAll(async () => {
  await new Promise<void>((resolve) => provider.close(() => resolve()));
  await svc.stop();
});

const metadataOf = async (tenant = 'acme') => (await svc.raw('GET', `/.well-known/openid-credential-issuer/issuers/${tenant}`)).body;

async function setEncryptionRequired(required: boolean) {
  const current = (await svc.raw('GET', '/api/issuer/config', { token: acme })).body;
  const reply = await svc.raw('PUT', '/api/issuer/config', { token: acme, body: { ...current, credentialEncryptionRequired: required } });
  expect(reply.status, reply.text).toBe(200);
}

/** A pre-authorized offer redeemed: its access token. */
async function accessToken(claims: unknown = INLINE, tenant = 'acme', token = acme) {
  const offer = await svc.raw('POST', '/api/issuer/offer', {
    token,
    body: { response_type: 'uri', flow: 'pre_authorized_code', credentialConfigurationIds: ['pid'], credentialClaims: { pid: claims } },
  });
  expect(offer.status, offer.text).toBe(201);
  const code = offer.body.credentialOffer.grants[GRANT]['pre-authorized_code'];
  const reply = await svc.raw('POST', `/issuers/${tenant}/token`, { form: { grant_type: GRANT, 'pre-authorized_code': code } });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.access_token as string;
}

/** A credential request body with a jwt proof of `key` over a fresh c_nonce. */
async function credentialRequest(key: HolderKey, extra: Record<string, unknown> = {}, tenant = 'acme') {
  const c_nonce = (await svc.raw('POST', `/issuers/${tenant}/nonce`)).body.c_nonce;
  const proof = await new SignJWT({ aud: `${svc.url}/issuers/${tenant}`, iat: Math.floor(Date.now() / 1000), nonce: c_nonce })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: key.publicJwk })
    .sign(await importJWK(key.privateJwk, 'ES256'));
  return { credential_configuration_id: 'pid', proofs: { jwt: [proof] }, ...extra };
}

/** The wallet's response encryption key pair, and what it sends as credential_response_encryption. */
async function walletEncryptionKey(enc = 'A128GCM') {
  const { publicKey, privateKey } = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), alg: 'ECDH-ES', use: 'enc', kid: `wallet-${Math.random().toString(36).slice(2)}` };
  return { privateKey, jwk, parameters: { jwk, enc } };
}

/** The request as a JWE to the issuer's advertised key (or `key`), with header members overridable. */
async function encrypt(body: unknown, options: { enc?: string; header?: Record<string, unknown>; key?: JWK; tenant?: string } = {}) {
  const advertised = (await metadataOf(options.tenant)).credential_request_encryption.jwks.keys[0] as JWK;
  const key = options.key ?? advertised;
  return new CompactEncrypt(new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)))
    .setProtectedHeader({ alg: 'ECDH-ES', enc: options.enc ?? 'A256GCM', kid: advertised.kid, ...options.header })
    .encrypt(await importJWK(key, 'ECDH-ES'));
}

/** POSTs `body` as application/jwt (a string) or JSON (anything else) to a wallet endpoint. */
async function post(path: string, token: string, body: unknown, tenant = 'acme', jwtType = 'application/jwt') {
  const jwt = typeof body === 'string';
  const response = await fetch(`${svc.url}/issuers/${tenant}/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': jwt ? jwtType : 'application/json' },
    body: jwt ? body : JSON.stringify(body),
  });
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').includes('json');
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', text, body: json ? JSON.parse(text) : text };
}

/** Decrypts an encrypted answer with the wallet's key: its header and JSON payload. */
async function decrypt(jwe: string, privateKey: CryptoKey) {
  const { plaintext, protectedHeader } = await compactDecrypt(jwe, privateKey, { keyManagementAlgorithms: ['ECDH-ES'] });
  return { header: protectedHeader, payload: JSON.parse(new TextDecoder().decode(plaintext)) };
}

function expectError(reply: { status: number; body: any; text: string; contentType: string }, error: string, description: RegExp) {
  expect(reply.status, reply.text).toBe(400);
  expect(reply.contentType).toContain('application/json'); // errors are never encrypted
  expect(reply.body.error, reply.text).toBe(error);
  expect(reply.body.error_description, reply.text).toMatch(description);
}

describe('credential request and response encryption', () => {
  it("advertises the tenant's encryption key and the supported algorithms", async () => {
    const metadata = await metadataOf();
    const encryptKey = (await svc.raw('GET', '/api/key-chain/default-encrypt', { token: acme })).body.activeJwk;
    expect(metadata.credential_request_encryption).toEqual({
      jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: encryptKey.x, y: encryptKey.y, kid: encryptKey.kid, use: 'enc', alg: 'ECDH-ES' }] },
      enc_values_supported: ['A128GCM', 'A256GCM'],
      encryption_required: false,
    });
    expect(metadata.credential_response_encryption).toEqual({
      alg_values_supported: ['ECDH-ES'],
      enc_values_supported: ['A128GCM', 'A256GCM'],
      encryption_required: false,
    });
  });

  it('answers an encrypted request with credential_response_encryption as a JWE to the wallet key', async () => {
    const token = await accessToken();
    const holder = await holderKey();
    const wallet = await walletEncryptionKey('A128GCM');
    const jwe = await encrypt(await credentialRequest(holder, { credential_response_encryption: wallet.parameters }), { enc: 'A256GCM' });
    const reply = await post('credential', token, jwe);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.contentType).toContain('application/jwt');
    const { header, payload } = await decrypt(reply.text, wallet.privateKey);
    expect(header).toMatchObject({ alg: 'ECDH-ES', enc: 'A128GCM', kid: wallet.jwk.kid });
    expect(payload.notification_id).toEqual(expect.any(String));
    const verified = await verifySdJwtIndependently(payload.credentials[0].credential, rootCertificate);
    expect(verified.payload.cnf.jwk).toMatchObject({ x: holder.publicJwk.x, y: holder.publicJwk.y });
    expect(verified.claims).toMatchObject({ given_name: 'Erika', family_name: 'Mustermann' });
  });

  it('answers an encrypted request without credential_response_encryption in JSON while encryption is optional', async () => {
    const token = await accessToken();
    const jwe = await encrypt(await credentialRequest(await holderKey()), { enc: 'A128GCM' });
    const reply = await post('credential', token, jwe, 'acme', 'application/jwt; charset=utf-8');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.contentType).toContain('application/json');
    expect(reply.body.credentials).toHaveLength(1);
  });

  it('refuses credential_response_encryption in a plain request (it could be swapped on the way)', async () => {
    const token = await accessToken();
    const wallet = await walletEncryptionKey();
    const reply = await post(
      'credential',
      token,
      await credentialRequest(await holderKey(), { credential_response_encryption: wallet.parameters }),
    );
    expectError(reply, 'invalid_encryption_parameters', /inside an encrypted request/);
  });

  it('refuses requests it cannot decrypt: unknown kid, unsupported enc or alg, compression, another key, not a JWE', async () => {
    const token = await accessToken();
    const body = await credentialRequest(await holderKey());
    const { publicKey } = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
    const cases: [string, RegExp][] = [
      [await encrypt(body, { header: { kid: 'no-such-key' } }), /kid names no encryption key/],
      [await encrypt(body, { header: { kid: undefined } }), /kid names no encryption key/],
      [await encrypt(body, { enc: 'A192GCM' }), /enc must be one of A128GCM, A256GCM/],
      [await encrypt(body, { enc: 'A128CBC-HS256' }), /enc must be one of A128GCM, A256GCM/],
      [await encrypt(body, { key: await exportJWK(publicKey) }), /could not be decrypted/],
      ['eyJhbGciOiJub25lIn0.e30.', /compact JWE/],
      ['not-a-jwe', /compact JWE/],
    ];
    for (const [jwe, description] of cases) expectError(await post('credential', token, jwe), 'invalid_encryption_parameters', description);
    const wrapped = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(body)))
      .setProtectedHeader({ alg: 'ECDH-ES+A128KW', enc: 'A128GCM', kid: 'x' })
      .encrypt(await importJWK((await metadataOf()).credential_request_encryption.jwks.keys[0], 'ECDH-ES+A128KW'));
    expectError(await post('credential', token, wrapped), 'invalid_encryption_parameters', /alg must be ECDH-ES/);
    const zipped = await encrypt(body, { header: { zip: 'DEF' } });
    expectError(await post('credential', token, zipped), 'invalid_encryption_parameters', /zip/);
    expectError(await post('credential', token, await encrypt('[1, 2]')), 'invalid_credential_request', /not a JSON object/);
    expectError(await post('credential', token, await encrypt('{"a":"\\u0000"}')), 'invalid_credential_request', /NUL/);
    // Nothing was issued: the same access token still gets its credential.
    expect((await post('credential', token, await encrypt(body))).status).toBe(200);
  });

  it('refuses unusable credential_response_encryption before issuing anything', async () => {
    const token = await accessToken();
    const { jwk } = await walletEncryptionKey();
    const { privateKey } = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
    const { alg: _alg, ...withoutAlg } = jwk;
    const cases: [unknown, RegExp][] = [
      [{ jwk, enc: 'A192GCM' }, /enc must be one of A128GCM, A256GCM/],
      [{ jwk }, /enc must be one of/],
      [{ jwk: withoutAlg, enc: 'A128GCM' }, /jwk.alg must be ECDH-ES/],
      [{ jwk: { ...jwk, alg: 'RSA-OAEP' }, enc: 'A128GCM' }, /jwk.alg must be ECDH-ES/],
      [{ jwk: { ...jwk, use: 'sig' }, enc: 'A128GCM' }, /use must be enc/],
      [{ jwk: { ...(await exportJWK(privateKey)), alg: 'ECDH-ES' }, enc: 'A128GCM' }, /public EC key/],
      [{ jwk: { ...jwk, x: jwk.y }, enc: 'A128GCM' }, /not a valid public key/],
      [{ jwk, enc: 'A128GCM', zip: 'DEF' }, /zip/],
      ['A128GCM', /must be an object/],
    ];
    for (const [parameters, description] of cases) {
      const jwe = await encrypt(await credentialRequest(await holderKey(), { credential_response_encryption: parameters }));
      expectError(await post('credential', token, jwe), 'invalid_encryption_parameters', description);
    }
    expect((await post('credential', token, await encrypt(await credentialRequest(await holderKey())))).status).toBe(200);
  });

  it('keeps errors of an encrypted request in plain JSON', async () => {
    const token = await accessToken();
    const wallet = await walletEncryptionKey();
    const request = await credentialRequest(await holderKey(), { credential_response_encryption: wallet.parameters });
    const reply = await post('credential', token, await encrypt({ ...request, proofs: { jwt: ['not-a-proof'] } }));
    expectError(reply, 'invalid_proof', /not a JWT/);
  });

  it('takes application/jwt only at the credential and deferred credential endpoints, up to 512 KiB', async () => {
    const token = await accessToken();
    const huge = `${'a'.repeat(513 * 1024)}`;
    expect((await post('credential', token, huge)).status).toBe(413);
    const atToken = await fetch(`${issuer}/token`, { method: 'POST', headers: { 'content-type': 'application/jwt' }, body: 'a.b.c.d.e' });
    expect(atToken.status).toBe(415);
    const atApi = await fetch(`${svc.url}/api/issuer/config`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${acme}`, 'content-type': 'application/jwt' },
      body: 'a.b.c.d.e',
    });
    expect(atApi.status).toBe(415);
  });

  it('accepts a request encrypted to the previous key for a while after a rotation', async () => {
    const before = (await metadataOf()).credential_request_encryption.jwks.keys[0] as JWK;
    const rotated = await svc.raw('POST', '/api/key-chain/default-encrypt/rotate', { token: acme });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.activeJwk.kid).not.toBe(before.kid);
    const token = await accessToken();
    const reply = await post(
      'credential',
      token,
      await encrypt(await credentialRequest(await holderKey()), { key: before, header: { kid: before.kid } }),
    );
    expect(reply.status, reply.text).toBe(200);
    const current = { ...rotated.body.activeJwk, alg: 'ECDH-ES' };
    const next = await accessToken();
    const withNew = await post(
      'credential',
      next,
      await encrypt(await credentialRequest(await holderKey()), { key: current, header: { kid: current.kid } }),
    );
    expect(withNew.status, withNew.text).toBe(200);
  });
});

describe('required encryption (issuer setting credentialEncryptionRequired)', () => {
  beforeAll(() => setEncryptionRequired(true));
  afterAll(() => setEncryptionRequired(false));

  it('says so in the metadata', async () => {
    const metadata = await metadataOf();
    expect(metadata.credential_request_encryption.encryption_required).toBe(true);
    expect(metadata.credential_response_encryption.encryption_required).toBe(true);
  });

  it('refuses a plain request, and an encrypted one that asks for a plain answer', async () => {
    const token = await accessToken();
    expectError(
      await post('credential', token, await credentialRequest(await holderKey())),
      'invalid_encryption_parameters',
      /requires encrypted credential requests/,
    );
    expectError(
      await post('credential', token, await encrypt(await credentialRequest(await holderKey()))),
      'invalid_encryption_parameters',
      /requires encrypted responses/,
    );
    const wallet = await walletEncryptionKey('A256GCM');
    const reply = await post(
      'credential',
      token,
      await encrypt(await credentialRequest(await holderKey(), { credential_response_encryption: wallet.parameters })),
    );
    expect(reply.status, reply.text).toBe(200);
    expect((await decrypt(reply.text, wallet.privateKey)).header.enc).toBe('A256GCM');
  });
});

describe('the deferred credential endpoint, encrypted', () => {
  it('encrypts the 202 of a deferred issuance and each deferred answer to the key its own request names', async () => {
    providerAnswer = { status: 202, body: { message: 'checking records' } };
    const token = await accessToken(VIA_PROVIDER);
    const first = await walletEncryptionKey();
    const deferred = await post(
      'credential',
      token,
      await encrypt(await credentialRequest(await holderKey(), { credential_response_encryption: first.parameters })),
    );
    expect(deferred.status, deferred.text).toBe(202);
    expect(deferred.contentType).toContain('application/jwt');
    const transactionId = (await decrypt(deferred.text, first.privateKey)).payload.transaction_id as string;
    expect(transactionId).toEqual(expect.any(String));

    // Still pending: a 202, encrypted to the key of this request.
    const second = await walletEncryptionKey();
    const pending = await post(
      'deferred-credential',
      token,
      await encrypt({ transaction_id: transactionId, credential_response_encryption: second.parameters }),
    );
    expect(pending.status, pending.text).toBe(202);
    expect((await decrypt(pending.text, second.privateKey)).payload).toEqual({
      transaction_id: transactionId,
      interval: expect.any(Number),
    });

    // A plain request may not name a response key; one that does not is answered in JSON.
    const plainWithKey = await post('deferred-credential', token, {
      transaction_id: transactionId,
      credential_response_encryption: second.parameters,
    });
    expectError(plainWithKey, 'invalid_encryption_parameters', /inside an encrypted request/);
    const plain = await post('deferred-credential', token, { transaction_id: transactionId });
    expect(plain.status, plain.text).toBe(202);
    expect(plain.body.transaction_id).toBe(transactionId);

    const completed = await svc.raw('POST', `/api/issuer/deferred/${transactionId}/complete`, {
      token: acme,
      body: { claims: { given_name: 'Max', family_name: 'Mustermann' } },
    });
    expect(completed.status, completed.text).toBe(200);
    const third = await walletEncryptionKey('A256GCM');
    const delivered = await post(
      'deferred-credential',
      token,
      await encrypt({ transaction_id: transactionId, credential_response_encryption: third.parameters }),
    );
    expect(delivered.status, delivered.text).toBe(200);
    await expect(decrypt(delivered.text, first.privateKey)).rejects.toThrow();
    const { header, payload } = await decrypt(delivered.text, third.privateKey);
    expect(header).toMatchObject({ enc: 'A256GCM', kid: third.jwk.kid });
    const verified = await verifySdJwtIndependently(payload.credentials[0].credential, rootCertificate);
    expect(verified.claims).toMatchObject({ given_name: 'Max' });
  });

  it('refuses a plain or undecryptable deferred request when encryption is required', async () => {
    providerAnswer = { status: 202, body: {} };
    const token = await accessToken(VIA_PROVIDER);
    const deferred = await post('credential', token, await credentialRequest(await holderKey()));
    expect(deferred.status, deferred.text).toBe(202);
    await setEncryptionRequired(true);
    try {
      const transaction = { transaction_id: deferred.body.transaction_id };
      expectError(await post('deferred-credential', token, transaction), 'invalid_encryption_parameters', /requires encrypted/);
      expectError(
        await post('deferred-credential', token, await encrypt(transaction, { header: { kid: 'unknown' } })),
        'invalid_encryption_parameters',
        /kid/,
      );
      const wallet = await walletEncryptionKey();
      const pending = await post(
        'deferred-credential',
        token,
        await encrypt({ ...transaction, credential_response_encryption: wallet.parameters }),
      );
      expect(pending.status, pending.text).toBe(202);
      expect(pending.contentType).toContain('application/jwt');
    } finally {
      await setEncryptionRequired(false);
    }
  });
});

describe('a tenant without an encryption key', () => {
  it('advertises no encryption, refuses encrypted requests and, when encryption is required, every request', async () => {
    const bare = (await svc.tenant('bare')).token;
    expect((await svc.raw('POST', '/api/issuer/credentials', { token: bare, body: PID })).status).toBe(201);
    // Every tenant is made with a default encrypt key chain that cannot be deleted through the API: removed underneath.
    await svc.db.deleteFrom('key_chains').where('tenant_id', '=', 'bare').where('usage_type', '=', 'encrypt').execute();
    const metadata = await metadataOf('bare');
    expect(metadata.credential_request_encryption).toBeUndefined();
    expect(metadata.credential_response_encryption).toBeUndefined();
    const token = await accessToken(INLINE, 'bare', bare);
    const someKey = (await metadataOf()).credential_request_encryption.jwks.keys[0] as JWK;
    const jwe = await new CompactEncrypt(new TextEncoder().encode('{}'))
      .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128GCM', kid: someKey.kid })
      .encrypt(await importJWK(someKey, 'ECDH-ES'));
    expectError(await post('credential', token, jwe, 'bare'), 'invalid_encryption_parameters', /no encryption key/);
    const settings = await svc.raw('PUT', '/api/issuer/config', { token: bare, body: { credentialEncryptionRequired: true } });
    expect(settings.status, settings.text).toBe(200);
    expectError(
      await post('credential', token, await credentialRequest(await holderKey(), {}, 'bare'), 'bare'),
      'credential_request_denied',
      /no encryption key/,
    );
  });
});

describe('protocol documentation', () => {
  it('describes encryption at both endpoints in the OpenAPI document', async () => {
    const document = (await svc.raw('GET', '/api/openapi.json')).body;
    for (const path of ['/issuers/{tenantId}/credential', '/issuers/{tenantId}/deferred-credential']) {
      const operation = document.paths[path].post;
      expect(operation.description).toMatch(/application\/jwt/);
      expect(operation.description).toMatch(/credential_response_encryption/);
      expect(Object.keys(operation.requestBody.content)).toEqual(expect.arrayContaining(['application/json', 'application/jwt']));
    }
    expect(document.paths['/issuers/{tenantId}/credential'].post.description).toMatch(/key_attestation/);
    expect(document.components.schemas.IssuerSettings.properties.credentialEncryptionRequired.description).toMatch(
      /invalid_encryption_parameters/,
    );
  });
});
