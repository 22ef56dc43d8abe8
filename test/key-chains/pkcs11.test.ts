// Key chains whose keys live in a PKCS#11 token: a real SoftHSM2 token made for this run. Credentials
// signed there are verified independently (jose and @sd-jwt for SD-JWT VC, node:crypto over the raw
// COSE_Sign1 for mdoc) with the chain's certificates; the token itself is asked what it holds.
import { verify, X509Certificate } from 'node:crypto';
import { Decoder, Encoder } from 'cbor-x';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pkcs11KeyProvider } from '../../src/key-chains/providers/pkcs11/provider.js';
import type { Operation, RequestBodyOf } from '../support/api-types.js';
import { MDL_NAMESPACE, mdl, PID } from '../support/fixtures.js';
import { tenantInstance } from '../support/kms-files.js';
import { expectFieldErrors, problemOf } from '../support/problems.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startService, type TestService } from '../support/service.js';
import { SOFTHSM_MODULE, type SoftHsm, softHsm } from '../support/softhsm.js';
import { issueCredential } from '../support/wallet.js';

const PIN = '314159';
let hsm: SoftHsm;
let svc: TestService;
let acme: string;
/** The namespace of acme's keys in the token: svc.acme.<instance>. */
let acmeKeys: string;
let other: string;

const providers = (pin: unknown, tokenLabel = 'svc-test') => ({
  defaultProvider: 'db',
  providers: [{ id: 'hsm', type: 'pkcs11', module: SOFTHSM_MODULE, tokenLabel, pin }],
});

beforeAll(async () => {
  hsm = softHsm('svc-test', PIN);
  svc = await startService({ KMS_PROVIDERS: hsm.kmsFile(providers({ env: 'TEST_HSM_PIN' })), TEST_HSM_PIN: PIN });
  acme = (await svc.tenant('acme')).token;
  acmeKeys = `svc.acme.${await tenantInstance(svc.db, 'acme')}`;
  other = (await svc.tenant('other')).token;
});
afterAll(async () => {
  await svc?.stop();
  hsm?.remove();
});

type KeyChainBody = RequestBodyOf<Operation<'/api/key-chain', 'POST'>>;

const token = () => svc.running.services.keyChains.provider('hsm') as Pkcs11KeyProvider;
const pemBlocks = (pem: string) => pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];

/** A key chain in the token: kmsProvider hsm, the rest as given. */
async function createChain(body: Omit<KeyChainBody, 'kmsProvider'>) {
  const reply = await svc.call('POST', '/api/key-chain', { token: acme, body: { kmsProvider: 'hsm', ...body } });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

/** The issuer signature of an mdoc (IssuerSigned as OpenID4VCI sends it), checked by hand with the leaf of its x5chain. */
function verifyMdocIssuerAuth(credential: string, root: X509Certificate) {
  const decoder = new Decoder({ mapsAsObjects: false, useRecords: false, tagUint8Array: false });
  const issuerSigned = decoder.decode(Buffer.from(credential, 'base64url')) as Map<string, unknown>;
  const issuerAuth = issuerSigned.get('issuerAuth') as [Uint8Array, Map<number, Uint8Array | Uint8Array[]>, Uint8Array, Uint8Array];
  const [protectedHeader, unprotected, payload, signature] = issuerAuth;
  const x5chain = unprotected.get(33) as Uint8Array | Uint8Array[];
  const leaf = new X509Certificate(Buffer.from(Array.isArray(x5chain) ? (x5chain[0] as Uint8Array) : x5chain));
  expect(leaf.verify(root.publicKey)).toBe(true);
  const toBeSigned = new Encoder({ mapsAsObjects: false, useRecords: false, tagUint8Array: false }).encode([
    'Signature1',
    protectedHeader,
    new Uint8Array(),
    payload,
  ]);
  expect(verify('sha256', toBeSigned, { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
  return leaf;
}

describe('GET /api/key-chain/providers', () => {
  it('lists db and the token with what each can do', async () => {
    const reply = await svc.call('GET', '/api/key-chain/providers', { token: acme });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual([
      {
        id: 'db',
        type: 'db',
        default: true,
        capabilities: { generate: true, import: true, algorithms: ['ES256', 'ES384', 'ES512'], decrypt: true },
      },
      {
        id: 'hsm',
        type: 'pkcs11',
        default: false,
        capabilities: { generate: true, import: false, algorithms: ['ES256', 'ES384', 'ES512'], decrypt: false },
      },
    ]);
  });

  it('needs a management role of the tenant', async () => {
    const offerer = await svc.client(acme, 'acme-offers', ['issuance:offer']);
    expect((await svc.call('GET', '/api/key-chain/providers', { token: offerer })).status).toBe(403);
    expect((await svc.call('GET', '/api/key-chain/providers')).status).toBe(401);
  });
});

describe('a key chain in the token', () => {
  let chain: any;
  beforeAll(async () => {
    chain = await createChain({
      id: 'hsm-attestation',
      usageType: 'attestation',
      type: 'internalChain',
      externalKeyId: 'acme-attestation',
    });
  });

  it('is made there: the database holds public keys only, the token a sensitive, non-extractable key', async () => {
    expect(chain).toMatchObject({ kmsProvider: 'hsm', externalKeyId: 'acme-attestation', type: 'internalChain' });
    const row = await svc.db.selectFrom('key_chains').selectAll().where('id', '=', 'hsm-attestation').executeTakeFirstOrThrow();
    for (const column of [row.active_jwk, row.root_jwk as string]) {
      const stored = JSON.parse(column);
      expect(stored.jwk).not.toHaveProperty('d');
      expect(Object.keys(stored.jwk).sort()).toEqual(['crv', 'kty', 'x', 'y']);
    }
    expect(JSON.parse(row.active_jwk).ref).toBe(`${acmeKeys}.acme-attestation`);
    expect(JSON.parse(row.root_jwk as string).ref).toBe(`${acmeKeys}.acme-attestation-root`);
    for (const label of [`${acmeKeys}.acme-attestation`, `${acmeKeys}.acme-attestation-root`]) {
      expect(await token().keyAttributes(label)).toEqual({ token: true, sensitive: true, extractable: false, private: true, sign: true });
    }
  });

  it('has an internal chain whose leaf the root in the token signed', async () => {
    const [leafPem, rootPem] = pemBlocks((await svc.call('GET', '/api/key-chain/hsm-attestation/certificate', { token: acme })).text);
    const leaf = new X509Certificate(leafPem as string);
    const root = new X509Certificate(rootPem as string);
    expect(leaf.verify(root.publicKey)).toBe(true);
    expect(root.verify(root.publicKey)).toBe(true);
    expect(leaf.publicKey.export({ format: 'jwk' })).toMatchObject({ x: chain.activeJwk.x, y: chain.activeJwk.y });
  });

  it('signs SD-JWT VCs and mdocs that verify with the chain certificate', async () => {
    const pid = { ...PID, id: 'pid-hsm', keyChainId: 'hsm-attestation' };
    expect((await svc.call('POST', '/api/issuer/credentials', { token: acme, body: pid })).status).toBe(201);
    const sdJwt = await issueCredential(svc, acme, 'pid-hsm', { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true });
    const { header, claims } = await verifySdJwtIndependently(sdJwt.credential, chain.rootCertificate);
    expect(claims.given_name).toBe('Erika');
    expect(header.alg).toBe('ES256');

    const mdoc = { ...mdl(['given_name', 'family_name']), id: 'mdl-hsm', keyChainId: 'hsm-attestation' };
    expect((await svc.call('POST', '/api/issuer/credentials', { token: acme, body: mdoc })).status).toBe(201);
    const issued = await issueCredential(svc, acme, 'mdl-hsm', { [MDL_NAMESPACE]: { given_name: 'Erika', family_name: 'Mustermann' } });
    const leaf = verifyMdocIssuerAuth(issued.credential, new X509Certificate(chain.rootCertificate));
    expect(leaf.publicKey.export({ format: 'jwk' })).toMatchObject({ x: chain.activeJwk.x });
  });

  it('rotates to a new key made in the token; the previous one stays published', async () => {
    const reply = await svc.call('POST', '/api/key-chain/hsm-attestation/rotate', { token: acme });
    expect(reply.status, reply.text).toBe(200);
    const rotated = reply.body;
    expect(rotated.activeJwk.kid).not.toBe(chain.activeJwk.kid);
    expect(rotated.previousJwk?.kid).toBe(chain.activeJwk.kid);
    expect(rotated.rootJwk?.kid).toBe(chain.rootJwk.kid);
    const row = await svc.db.selectFrom('key_chains').selectAll().where('id', '=', 'hsm-attestation').executeTakeFirstOrThrow();
    const ref = JSON.parse(row.active_jwk).ref as string;
    expect(ref).toMatch(new RegExp(`^${acmeKeys}\\.acme-attestation-\\d{8}t\\d{9}z$`));
    expect(await token().keyAttributes(ref)).toMatchObject({ token: true, sensitive: true, extractable: false });
    const sdJwt = await issueCredential(svc, acme, 'pid-hsm', { given_name: 'Max', family_name: 'Mustermann' });
    const { header } = await verifySdJwtIndependently(sdJwt.credential, chain.rootCertificate);
    const leaf = new X509Certificate(Buffer.from((header.x5c as string[])[0] as string, 'base64'));
    expect(leaf.publicKey.export({ format: 'jwk' })).toMatchObject({ x: rotated.activeJwk.x, y: rotated.activeJwk.y });
  });

  it('takes the key the token already has under the externalKeyId', async () => {
    const again = await createChain({ id: 'hsm-same-key', usageType: 'access', type: 'standalone', externalKeyId: 'acme-attestation' });
    expect(again.activeJwk.kid).toBe(chain.activeJwk.kid);
    const cert = new X509Certificate(again.activeCertificate);
    expect(cert.verify(cert.publicKey)).toBe(true);
  });

  it('is not visible to another tenant', async () => {
    expect((await svc.call('GET', '/api/key-chain/hsm-attestation', { token: other })).status).toBe(404);
  });
});

describe('refusals', () => {
  it('names kmsProvider for a provider that is not configured', async () => {
    const reply = await svc.call('POST', '/api/key-chain', {
      token: acme,
      body: { usageType: 'access', type: 'standalone', kmsProvider: 'vault', externalKeyId: 'x' },
    });
    expect(reply.status).toBe(400);
    expect(problemOf(reply).errors?.[0]?.field).toBe('body.kmsProvider');
  });

  it('names both kmsProvider and externalKeyId when an unknown provider comes without a key name', async () => {
    const reply = await svc.call('POST', '/api/key-chain', {
      token: acme,
      body: { usageType: 'access', type: 'standalone', kmsProvider: 'vault' },
    });
    expectFieldErrors(reply, ['body.kmsProvider', 'body.externalKeyId']);
    expect(problemOf(reply).errors?.[0]?.message).toBe("no provider 'vault' is configured; configured: db, hsm");
    expect(problemOf(reply).errors?.[1]?.message).toBe("required when kmsProvider is 'vault' (not db)");
  });

  it('names externalKeyId when it is missing or not a name every provider takes', async () => {
    for (const externalKeyId of [undefined, 'a b/c']) {
      const reply = await svc.call('POST', '/api/key-chain', {
        token: acme,
        body: { usageType: 'access', type: 'standalone', kmsProvider: 'hsm', ...(externalKeyId && { externalKeyId }) },
      });
      expect(reply.status).toBe(400);
      expect(problemOf(reply).errors?.[0]?.field).toBe('body.externalKeyId');
    }
  });

  it('keeps keys for decryption in db: the token does not decrypt', async () => {
    const reply = await svc.call('POST', '/api/key-chain', {
      token: acme,
      body: { usageType: 'encrypt', type: 'standalone', kmsProvider: 'hsm', externalKeyId: 'acme-enc' },
    });
    expect(reply.status).toBe(400);
    expect(problemOf(reply).errors?.[0]?.field).toBe('body.kmsProvider');
  });
});

describe('a token that is gone', () => {
  it('fails signatures with a 503 naming the provider, never another key, and /health/ready says so; a token back is found again', async () => {
    expect((await svc.call('GET', '/health/ready')).body).toEqual({ status: 'ok', checks: { database: 'ok', 'keyProvider:hsm': 'ok' } });
    const putBack = hsm.keepCopy();
    hsm.deleteToken('svc-test');
    const ready = await svc.call('GET', '/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.checks?.database).toBe('ok');
    expect(ready.body.checks?.['keyProvider:hsm']).toBe('cannot sign');
    const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'hsm-attestation', usageType: 'attestation' });
    const failure = await signer.sign(Buffer.from('data')).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toMatchObject({ status: 503, extra: { provider: 'hsm' } });
    expect((failure as Error).message).toMatch(/^key provider 'hsm' could not sign; the service log has the reason$/);
    // The health check found the token lost; this signature looked for it again, and the log says so.
    expect(((failure as Error).cause as Error).message).toBe("no token labelled 'svc-test' is present");
    const rotation = await svc.call('POST', '/api/key-chain/hsm-attestation/rotate', { token: acme });
    expect(rotation.status).toBe(503);
    expect(problemOf(rotation).detail).toMatch(/key provider 'hsm'/);

    putBack();
    expect((await svc.call('GET', '/health/ready')).body.checks?.['keyProvider:hsm']).toBe('ok');
    const signature = await signer.sign(Buffer.from('data'));
    const leaf = new X509Certificate(Buffer.from(signer.x5c[0] as string, 'base64'));
    expect(verify('sha256', Buffer.from('data'), { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
  });
});
