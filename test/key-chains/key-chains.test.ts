import 'reflect-metadata';
import { generateKeyPairSync, X509Certificate as NodeX509, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import {
  CompactEncrypt,
  calculateJwkThumbprint,
  createLocalJWKSet,
  decodeProtectedHeader,
  importJWK,
  importX509,
  type JWK,
  jwtVerify,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldsOf, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

x509.cryptoProvider.set(crypto); // the global Web Crypto (node:crypto webcrypto)

let svc: TestService;
let acme: string;
let other: string;
beforeAll(async () => {
  svc = await startService({ PUBLIC_URL: 'https://issuer.example.com', CERTIFICATE_COUNTRY: 'DE', JOB_INTERVAL_SECONDS: '1' });
  acme = (await svc.tenant('acme')).token;
  other = (await svc.tenant('other')).token;
});
afterAll(() => svc.stop());

const pemBlocks = (pem: string) => pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
const x5cToPem = (der: string) => `-----BEGIN CERTIFICATE-----\n${der.match(/.{1,64}/g)?.join('\n')}\n-----END CERTIFICATE-----`;

const commonNameOf = (pem: string) => /^CN=(.*)$/m.exec(new NodeX509(pem).subject)?.[1] ?? '';

async function create(token: string, body: Record<string, unknown>) {
  const reply = await svc.raw('POST', '/api/key-chain', { token, body });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

describe('tenant defaults', () => {
  it('gives a new tenant one default key chain per usage type', async () => {
    const reply = await svc.call('GET', '/api/key-chain', { token: acme });
    expect(reply.status).toBe(200);
    const byUsage = Object.fromEntries(reply.body.map((k: any) => [k.usageType, k]));
    expect(Object.keys(byUsage).sort()).toEqual(['access', 'attestation', 'encrypt', 'statusList', 'trustList']);
    for (const chain of reply.body) expect(chain).toMatchObject({ default: true, kmsProvider: 'db', algorithm: 'ES256', tenantId: 'acme' });
    expect(byUsage.attestation).toMatchObject({ id: 'default-attestation', type: 'internalChain', usage: 'sign' });
    expect(byUsage.attestation.rootCertificate).toContain('BEGIN CERTIFICATE');
    expect(byUsage.encrypt.usage).toBe('encrypt');
  });

  it('filters by usage type', async () => {
    const reply = await svc.call('GET', '/api/key-chain?usageType=access', { token: acme });
    expect(reply.body.map((k) => k.id)).toEqual(['default-access']);
  });

  it('never returns private key material', async () => {
    const reply = await svc.call('GET', '/api/key-chain', { token: acme });
    expect(reply.text).not.toMatch(/"d":/);
  });
});

describe('certificates', () => {
  it('issues an internal chain whose leaf verifies against its root, with the ISO 18013-5 profiles', async () => {
    const chain = await svc.call('GET', '/api/key-chain/default-attestation/certificate', { token: acme });
    expect(chain.status).toBe(200);
    expect(chain.headers.get('content-type')).toContain('application/pem-certificate-chain');
    const [leafPem, rootPem] = pemBlocks(chain.text);
    const leaf = new NodeX509(leafPem as string);
    const root = new NodeX509(rootPem as string);
    expect(leaf.verify(root.publicKey)).toBe(true);
    expect(leaf.checkIssued(root)).toBe(true);
    expect(root.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.subjectAltName).toContain('DNS:issuer.example.com');
    expect(leaf.subjectAltName).toContain('URI:https://issuer.example.com/issuers/acme');
    expect(leaf.keyUsage).toContain('1.0.18013.5.1.2');
    expect(leaf.subject).toContain('C=DE');
    const days = (Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)) / 86_400_000;
    expect(Math.round(days)).toBe(365);
    const parsedRoot = new x509.X509Certificate(rootPem as string);
    const usage = parsedRoot.getExtension(x509.KeyUsagesExtension);
    expect(usage?.usages).toBe(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
    expect(parsedRoot.getExtension(x509.BasicConstraintsExtension)?.pathLength).toBe(0);
    expect(parsedRoot.getExtension(x509.CRLDistributionPointsExtension)).toBeDefined();
  });

  it('creates standalone and internal chains with ES256, ES384 and ES512 and the requested validity', async () => {
    for (const [algorithm, crv] of [
      ['ES256', 'P-256'],
      ['ES384', 'P-384'],
      ['ES512', 'P-521'],
    ] as const) {
      const chain = await create(acme, {
        usageType: 'access',
        type: 'standalone',
        algorithm,
        certValidityDays: 30,
        subject: { commonName: 'Verifier', country: 'NL' },
      });
      expect(chain).toMatchObject({ algorithm, type: 'standalone', default: false, activeJwk: { kty: 'EC', crv } });
      const cert = new NodeX509(chain.activeCertificate);
      expect(cert.subject).toContain('CN=Verifier');
      expect(cert.subject).toContain('C=NL');
      expect(cert.verify(cert.publicKey)).toBe(true);
      expect(Math.round((Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 86_400_000)).toBe(30);
      const internal = await create(acme, { usageType: 'statusList', type: 'internalChain', algorithm });
      expect(new NodeX509(internal.activeCertificate).verify(new NodeX509(internal.rootCertificate).publicKey)).toBe(true);
    }
  });

  it('keeps every subject within RFC 5280: a common name the root CA would take past 64 characters is a 400 naming it', async () => {
    const before = (await svc.call('GET', '/api/key-chain', { token: acme })).body.length;
    // An internal chain's root CA is named '<common name> CA': 62 + 3 characters would be 65.
    const tooLong = await svc.raw('POST', '/api/key-chain', {
      token: acme,
      body: { usageType: 'access', type: 'internalChain', subject: { commonName: 'c'.repeat(62) } },
    });
    expect(tooLong.status).toBe(400);
    expect(fieldsOf(tooLong)).toEqual(['body.subject.commonName']);
    expect(problemOf(tooLong).errors?.[0]?.message).toMatch(/at most 61 characters .*root CA of an internal chain adds ' CA'/);
    expect((await svc.call('GET', '/api/key-chain', { token: acme })).body).toHaveLength(before);
    // 61 characters fit, the root's name is then exactly 64; a standalone chain has no root and keeps 64.
    const fits = await create(acme, { usageType: 'access', type: 'internalChain', subject: { commonName: 'c'.repeat(61) } });
    expect(commonNameOf(fits.rootCertificate)).toBe(`${'c'.repeat(61)} CA`);
    expect(commonNameOf(fits.activeCertificate)).toBe('c'.repeat(61));
    const standalone = await create(acme, { usageType: 'access', type: 'standalone', subject: { commonName: 's'.repeat(64) } });
    expect(commonNameOf(standalone.activeCertificate)).toBe('s'.repeat(64));
  });

  it("shortens the default common names of a 64-character tenant id's chains to fit, root CA included", async () => {
    const longTenant = 't'.repeat(64);
    const token = (await svc.tenant(longTenant)).token;
    const chains = (await svc.call('GET', '/api/key-chain', { token })).body;
    expect(chains.length).toBeGreaterThan(0);
    for (const chain of chains) {
      for (const pem of [chain.activeCertificate, ...(chain.rootCertificate ? [chain.rootCertificate] : [])])
        expect([...commonNameOf(pem)].length, `${chain.id}: ${commonNameOf(pem)}`).toBeLessThanOrEqual(64);
      expect(chain.subject.commonName).toMatch(new RegExp(`^t+ ${chain.usageType}$`));
    }
  });

  it('publishes a CRL signed by the chain CA', async () => {
    const reply = await fetch(`${svc.url}/issuers/acme/key-chains/default-attestation/crl`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/pkix-crl');
    const crl = new x509.X509Crl(new Uint8Array(await reply.arrayBuffer()));
    const chain = (await svc.raw('GET', '/api/key-chain/default-attestation', { token: acme })).body;
    const root = new x509.X509Certificate(chain.rootCertificate);
    expect(await crl.verify({ publicKey: root.publicKey })).toBe(true);
    expect(crl.entries).toEqual([]);
  });
});

describe('signing', () => {
  it('signs JWTs for every usage that verify with jose against the published chain', async () => {
    const { signing } = svc.running.services;
    for (const usageType of ['attestation', 'access', 'statusList', 'trustList'] as const) {
      const jwt = await signing.signJwt('acme', { usageType }, { typ: 'JWT' }, { sub: usageType, iat: Math.floor(Date.now() / 1000) });
      const header = decodeProtectedHeader(jwt);
      expect(header.alg).toBe('ES256');
      const published = await svc.call('GET', `/api/key-chain/default-${usageType}/certificate`, { token: acme });
      const [leafPem] = pemBlocks(published.text);
      expect(x5cToPem((header.x5c as string[])[0] as string).replace(/\s/g, '')).toBe((leafPem as string).replace(/\s/g, ''));
      const { payload } = await jwtVerify(jwt, await importX509(leafPem as string, 'ES256'));
      expect(payload.sub).toBe(usageType);
    }
  });

  it('signs with kid instead of x5c when asked, verifiable through the public JWKS', async () => {
    const jwt = await svc.running.services.signing.signJwt('acme', { usageType: 'statusList' }, {}, { n: 1 }, { x5c: false });
    const jwks = (await svc.raw('GET', '/issuers/acme/jwks.json')).body;
    expect((await jwtVerify(jwt, createLocalJWKSet(jwks))).payload.n).toBe(1);
  });

  it('signs COSE_Sign1 that verifies over the Sig_structure with the x5chain key', async () => {
    const { Decoder, Encoder } = await import('cbor-x');
    const payload = new TextEncoder().encode('mso bytes');
    const sign1 = await svc.running.services.signing.signCoseSign1('acme', { usageType: 'attestation' }, payload);
    // Tag 18 (COSE_Sign1) is the one byte 0xd2; the array after it is decoded with no tag extensions involved.
    expect(sign1[0]).toBe(0xd2);
    const decoded = new Decoder({ mapsAsObjects: false }).decode(sign1.subarray(1)) as [
      Uint8Array,
      Map<number, unknown>,
      Uint8Array,
      Uint8Array,
    ];
    const [protectedBytes, unprotected, body, signature] = decoded;
    expect(new Decoder({ mapsAsObjects: false }).decode(protectedBytes)).toEqual(new Map([[1, -7]]));
    const certificate = new NodeX509(Buffer.from(unprotected.get(33) as Uint8Array));
    const toBeSigned = new Encoder({ tagUint8Array: false }).encode(['Signature1', protectedBytes, new Uint8Array(), body]);
    const { verify } = await import('node:crypto');
    expect(verify('sha256', toBeSigned, { key: certificate.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
  });

  it('decrypts an ECDH-ES JWE made by jose for the public encryption key', async () => {
    const { keys } = (await svc.raw('GET', '/api/key-chain/default-encrypt/public-key', { token: acme })).body;
    const jwe = await new CompactEncrypt(new TextEncoder().encode('{"vp_token":"x"}'))
      .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256GCM', kid: keys[0].kid })
      .encrypt(await importJWK(keys[0], 'ECDH-ES'));
    const { plaintext } = await svc.running.services.signing.decryptJwe('acme', { usageType: 'encrypt' }, jwe);
    expect(new TextDecoder().decode(plaintext)).toBe('{"vp_token":"x"}');
  });
});

describe('rotation', () => {
  it('rotates on request, keeps publishing the previous key, and old signatures keep verifying', async () => {
    const chain = await create(acme, { id: 'rotating', usageType: 'trustList', type: 'internalChain' });
    const old = await svc.running.services.signing.signJwt(
      'acme',
      { keyChainId: 'rotating', usageType: 'trustList' },
      {},
      { v: 'old' },
      { x5c: false },
    );
    const rotated = await svc.raw('POST', '/api/key-chain/rotating/rotate', { token: acme });
    expect(rotated.status).toBe(200);
    expect(rotated.body.activeJwk.kid).not.toBe(chain.activeJwk.kid);
    expect(rotated.body.previousJwk.kid).toBe(chain.activeJwk.kid);
    expect(rotated.body.rootJwk.kid).toBe(chain.rootJwk.kid);
    expect(Date.parse(rotated.body.previousKeyExpiry)).toBeGreaterThan(Date.now() + 300 * 86_400_000);
    expect(new NodeX509(rotated.body.activeCertificate).verify(new NodeX509(chain.rootCertificate).publicKey)).toBe(true);

    const jwks = createLocalJWKSet((await svc.call('GET', '/issuers/acme/jwks.json')).body);
    expect((await jwtVerify(old, jwks)).payload.v).toBe('old');
    const fresh = await svc.running.services.signing.signJwt(
      'acme',
      { keyChainId: 'rotating', usageType: 'trustList' },
      {},
      { v: 'new' },
      { x5c: false },
    );
    expect(decodeProtectedHeader(fresh).kid).toBe(rotated.body.activeJwk.kid);

    // Once the previous key expires, the scheduled job stops publishing it.
    await svc.db
      .updateTable('key_chains')
      .set({ previous_key_expiry: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', 'rotating')
      .execute();
    await expect
      .poll(async () => (await svc.call('GET', '/api/key-chain/rotating', { token: acme })).body.previousJwk, { timeout: 5000 })
      .toBeNull();
    const after = createLocalJWKSet((await svc.call('GET', '/issuers/acme/jwks.json')).body);
    await expect(jwtVerify(old, after)).rejects.toThrow();
  });

  it('rotates on schedule, once, when the interval has passed', async () => {
    const chain = await create(acme, {
      id: 'scheduled',
      usageType: 'access',
      type: 'standalone',
      rotationEnabled: true,
      rotationIntervalDays: 1,
    });
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000).toISOString();
    await svc.db.updateTable('key_chains').set({ created_at: twoDaysAgo, updated_at: twoDaysAgo }).where('id', '=', 'scheduled').execute();
    await expect
      .poll(async () => (await svc.call('GET', '/api/key-chain/scheduled', { token: acme })).body.lastRotatedAt, { timeout: 5000 })
      .not.toBeNull();
    const rotated = (await svc.raw('GET', '/api/key-chain/scheduled', { token: acme })).body;
    expect(rotated.previousJwk.kid).toBe(chain.activeJwk.kid);
    const audit = (await svc.call('GET', '/api/admin/audit-logs?limit=50', { token: acme })).body;
    const entries = audit.filter((e: any) => e.actionType === 'key_chain.rotated' && e.after.id === 'scheduled');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actorType: 'system', actorId: 'system:scheduler' });
  });

  it('refuses to rotate an imported key chain', async () => {
    const { privateKey } = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign']);
    const jwk = await webcrypto.subtle.exportKey('jwk', privateKey);
    await svc.raw('POST', '/api/key-chain/import', { token: acme, body: { id: 'imported-rot', usageType: 'access', privateJwk: jwk } });
    expect((await svc.call('POST', '/api/key-chain/imported-rot/rotate', { token: acme })).status).toBe(409);
  });
});

describe('import and certificates from outside', () => {
  async function externalCa() {
    const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const caKeys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
    const ca = await x509.X509CertificateGenerator.createSelfSigned({
      name: 'CN=Registrar CA',
      keys: caKeys,
      signingAlgorithm: alg,
      extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
    });
    const issue = async (publicKey: x509.PublicKeyType, cn: string) =>
      x509.X509CertificateGenerator.create({
        subject: `CN=${cn}`,
        issuer: ca.subject,
        publicKey,
        signingKey: caKeys.privateKey,
        signingAlgorithm: alg,
      });
    return { ca, issue };
  }

  it('imports a private key with its chain, keeps the root apart, and stores the key encrypted', async () => {
    const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    const jwk = await webcrypto.subtle.exportKey('jwk', keys.privateKey);
    const { ca, issue } = await externalCa();
    const leaf = await issue(keys.publicKey, 'Imported access');
    const reply = await svc.raw('POST', '/api/key-chain/import', {
      token: acme,
      body: { id: 'imported', usageType: 'access', privateJwk: jwk, certificateChain: `${leaf.toString('pem')}\n${ca.toString('pem')}` },
    });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toMatchObject({ type: 'imported', activeJwk: { x: jwk.x, y: jwk.y } });
    expect(pemBlocks(reply.body.activeCertificate)).toHaveLength(1);
    expect(reply.body.rootCertificate.replace(/\s/g, '')).toBe(ca.toString('pem').replace(/\s/g, ''));
    expect(reply.text).not.toContain(jwk.d);

    const row = await svc.db
      .selectFrom('key_chains')
      .selectAll()
      .where('tenant_id', '=', 'acme')
      .where('id', '=', 'imported')
      .executeTakeFirstOrThrow();
    expect(row.active_jwk.startsWith('v1.')).toBe(true);
    expect(JSON.stringify(row)).not.toContain(jwk.d as string);
    // The sealed key is bound to its row: copied into another key chain it no longer opens.
    await create(acme, { id: 'victim', usageType: 'access', type: 'standalone' });
    await svc.db
      .updateTable('key_chains')
      .set({ active_jwk: row.active_jwk })
      .where('tenant_id', '=', 'acme')
      .where('id', '=', 'victim')
      .execute();
    expect((await svc.call('GET', '/api/key-chain/victim', { token: acme })).status).toBe(500);
    await svc.db.deleteFrom('key_chains').where('tenant_id', '=', 'acme').where('id', '=', 'victim').execute();
  });

  it('replaces the certificate of the same key, and refuses one for another key', async () => {
    const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    const created = await create(acme, { id: 'registrar-cert', usageType: 'access', type: 'standalone' });
    const { ca, issue } = await externalCa();
    const ownKey = await importJWK(created.activeJwk, 'ES256');
    const good = await issue(ownKey as CryptoKey, 'Registered RP');
    const patched = await svc.call('PATCH', '/api/key-chain/registrar-cert', {
      token: acme,
      body: { certificate: `${good.toString('pem')}\n${ca.toString('pem')}` },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(new NodeX509(patched.body.activeCertificate).subject).toBe('CN=Registered RP');
    expect(patched.body.activeJwk.kid).toBe(created.activeJwk.kid);

    const foreign = await issue(keys.publicKey, 'Someone else');
    const refused = await svc.call('PATCH', '/api/key-chain/registrar-cert', {
      token: acme,
      body: { certificate: foreign.toString('pem') },
    });
    expect(refused.status).toBe(400);
    expect(problemOf(refused).errors).toEqual([{ field: 'body.certificate', message: 'the first certificate does not certify this key' }]);
  });

  it("refuses, on an internal chain, a root certificate that does not certify the chain's root key, and changes nothing", async () => {
    const created = await create(acme, { id: 'internal-patched', usageType: 'attestation', type: 'internalChain' });
    const { ca, issue } = await externalCa();
    const leaf = await issue((await importJWK(created.activeJwk, 'ES256')) as CryptoKey, 'Leaf under another root');
    const refused = await svc.call('PATCH', '/api/key-chain/internal-patched', {
      token: acme,
      body: { certificate: `${leaf.toString('pem')}\n${ca.toString('pem')}` },
    });
    expect(refused.status, refused.text).toBe(400);
    expect(problemOf(refused).errors).toEqual([
      { field: 'body.certificate', message: "the last (self-signed) certificate does not certify the key chain's root key" },
    ]);
    const after = (await svc.call('GET', '/api/key-chain/internal-patched', { token: acme })).body;
    expect(after.rootCertificate).toBe(created.rootCertificate);
    expect(after.activeCertificate).toBe(created.activeCertificate);
    // Its own leaf and root are taken.
    const own = await svc.call('PATCH', '/api/key-chain/internal-patched', {
      token: acme,
      body: { certificate: `${created.activeCertificate}\n${created.rootCertificate}` },
    });
    expect(own.status, own.text).toBe(200);
  });

  it('rejects bad input with a 400 naming the field', async () => {
    const cases: [string, string, Record<string, unknown>, string][] = [
      ['POST', '/api/key-chain', { usageType: 'signing', type: 'standalone' }, 'body.usageType'],
      ['POST', '/api/key-chain', { usageType: 'access', type: 'hsm' }, 'body.type'],
      ['POST', '/api/key-chain', { usageType: 'access', type: 'standalone', algorithm: 'RS256' }, 'body.algorithm'],
      ['POST', '/api/key-chain', { usageType: 'access', type: 'standalone', kmsProvider: 'pkcs11' }, 'externalKeyId'],
      [
        'POST',
        '/api/key-chain',
        { usageType: 'access', type: 'standalone', kmsProvider: 'pkcs11', externalKeyId: 'slot-1' },
        'kmsProvider',
      ],
      ['POST', '/api/key-chain/import', { usageType: 'access', privateJwk: { kty: 'RSA', n: 'AQAB', e: 'AQAB', d: 'AQAB' } }, 'privateJwk'],
      [
        'POST',
        '/api/key-chain/import',
        { usageType: 'access', privateJwk: { kty: 'OKP', crv: 'Ed25519', x: 'AA', d: 'AA' } },
        'privateJwk',
      ],
      ['POST', '/api/key-chain/import', { usageType: 'access', privateJwk: { kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' } }, 'privateJwk'],
      ['POST', '/api/key-chain', { usageType: 'access', type: 'standalone', certValidityDays: 1000 }, 'body.certValidityDays'],
      ['POST', '/api/key-chain', { usageType: 'access', type: 'standalone', unknown: 1 }, 'body.unknown'],
    ];
    for (const [method, path, body, field] of cases) {
      const reply = await svc.raw(method, path, { token: acme, body });
      expect(reply.status, `${JSON.stringify(body)}: ${reply.text}`).toBe(400);
      expect(fieldsOf(reply).join(' '), JSON.stringify(body)).toContain(field);
    }
    const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    const { issue } = await externalCa();
    const mismatched = await issue(keys.publicKey, 'Other key');
    const { privateKey } = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign']);
    const reply = await svc.raw('POST', '/api/key-chain/import', {
      token: acme,
      body: {
        usageType: 'access',
        privateJwk: await webcrypto.subtle.exportKey('jwk', privateKey),
        certificateChain: mismatched.toString('pem'),
      },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.errors[0].field).toBe('body.certificateChain');
  });

  it('answers 400 naming the member for every malformed private JWK, and stores nothing', async () => {
    const jwkOf = async (namedCurve: string) =>
      (await webcrypto.subtle.exportKey(
        'jwk',
        (
          await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve }, true, ['sign'])
        ).privateKey,
      )) as Record<string, string>;
    const key = await jwkOf('P-256');
    const another = await jwkOf('P-256');
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['d too short', { ...key, d: 'AAAA' }, 'body.privateJwk.d', 'must be 32 bytes (P-256) in unpadded base64url'],
      ['d huge', { ...key, d: 'A'.repeat(100_000) }, 'body.privateJwk.d', 'must be 32 bytes (P-256) in unpadded base64url'],
      ['d not a string', { ...key, d: 12345 }, 'body.privateJwk.d', 'must be 32 bytes (P-256) in unpadded base64url'],
      ['d of another key', { ...key, d: another.d }, 'body.privateJwk.d', 'is the private key of another public key than x and y'],
      ['d zero', { ...key, d: 'A'.repeat(43) }, 'body.privateJwk.d', 'is not a private key on P-256 (zero or not below the group order)'],
      ['d missing', { ...key, d: undefined }, 'body.privateJwk.d', 'is missing: the private key is required'],
      ['x not base64url', { ...key, x: `${'!'.repeat(42)}A` }, 'body.privateJwk.x', 'must be 32 bytes (P-256) in unpadded base64url'],
      ['x padded', { ...key, x: `${key.x}=` }, 'body.privateJwk.x', 'must be 32 bytes (P-256) in unpadded base64url'],
      [
        'y in standard base64',
        { ...key, y: `${(key.y as string).slice(0, 42)}+` },
        'body.privateJwk.y',
        'must be 32 bytes (P-256) in unpadded base64url',
      ],
      ['wrong curve', { ...key, crv: 'P-384' }, 'body.privateJwk.x', 'must be 48 bytes (P-384) in unpadded base64url'],
      ['unknown curve', { ...key, crv: 'secp256k1' }, 'body.privateJwk.crv', 'must be P-256, P-384 or P-521'],
      ['x, y not on the curve', { ...key, y: key.x }, 'body.privateJwk', 'x and y are not a point on P-256'],
    ];
    const before = await svc.db.selectFrom('key_chains').select('id').where('tenant_id', '=', 'acme').execute();
    for (const [name, privateJwk, field, message] of cases) {
      const reply = await svc.raw('POST', '/api/key-chain/import', { token: acme, body: { usageType: 'access', privateJwk } });
      expect(reply.status, `${name}: ${reply.text}`).toBe(400);
      expect(reply.body.errors, name).toEqual([{ field, message }]);
    }
    expect(await svc.db.selectFrom('key_chains').select('id').where('tenant_id', '=', 'acme').execute()).toEqual(before);
    // Members beyond the key itself are not kept: the key is stored in its standard form.
    const accepted = await svc.call('POST', '/api/key-chain/import', {
      token: acme,
      body: { id: 'imported-extra', usageType: 'access', privateJwk: { ...key, key_ops: ['sign'], ext: true, kid: 'mine' } },
    });
    expect(accepted.status, accepted.text).toBe(201);
    expect(accepted.body.activeJwk).toEqual({ kty: 'EC', crv: 'P-256', x: key.x, y: key.y, kid: await calculateJwkThumbprint(key as JWK) });
  });

  it('answers 400 naming the field for certificates of unusual keys, overlong chains and empty PEM', async () => {
    const { issue } = await externalCa();
    const created = await create(acme, { id: 'odd-certs', usageType: 'access', type: 'standalone' });
    const ownKey = (await importJWK(created.activeJwk, 'ES256')) as CryptoKey;
    const spki = (type: 'ec' | 'x25519' | 'dsa', options: object) =>
      new Uint8Array(
        generateKeyPairSync(type as 'ec', options as { namedCurve: string }).publicKey.export({ type: 'spki', format: 'der' }),
      );
    const good = (await issue(ownKey, 'Own key')).toString('pem');
    const cases: [string, string, string][] = [
      [
        'brainpool leaf',
        (await issue(spki('ec', { namedCurve: 'brainpoolP256r1' }), 'Brainpool')).toString('pem'),
        'the first certificate does not certify this key',
      ],
      [
        'secp256k1 leaf',
        (await issue(spki('ec', { namedCurve: 'secp256k1' }), 'K1')).toString('pem'),
        'the first certificate does not certify this key',
      ],
      ['X25519 leaf', (await issue(spki('x25519', {}), 'X25519')).toString('pem'), 'the first certificate does not certify this key'],
      ['11 certificates', Array(11).fill(good).join('\n'), 'has 11 certificates; at most 10 are accepted'],
      ['empty', '', 'contains no PEM certificate'],
      [
        'huge',
        `-----BEGIN CERTIFICATE-----\n${'A'.repeat(70_000)}\n-----END CERTIFICATE-----`,
        'expected string to contain at most 65,536 character(s)',
      ],
    ];
    for (const [name, certificate, message] of cases) {
      const reply = await svc.raw('PATCH', '/api/key-chain/odd-certs', { token: acme, body: { certificate } });
      expect(reply.status, `${name}: ${reply.text}`).toBe(400);
      expect(reply.body.errors, name).toEqual([{ field: 'body.certificate', message }]);
    }
    const imported = await svc.raw('POST', '/api/key-chain/import', {
      token: acme,
      body: {
        usageType: 'access',
        privateJwk: await webcrypto.subtle.exportKey(
          'jwk',
          (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign'])).privateKey,
        ),
        certificateChain: '',
      },
    });
    expect(imported.status, imported.text).toBe(400);
    expect(problemOf(imported).errors).toEqual([{ field: 'body.certificateChain', message: 'contains no PEM certificate' }]);
    const unchanged = await svc.call('GET', '/api/key-chain/odd-certs', { token: acme });
    expect(unchanged.body.activeCertificate).toBe(created.activeCertificate);
  });

  it('holds the external-key rule in the database too', async () => {
    const row = await svc.db
      .selectFrom('key_chains')
      .selectAll()
      .where('tenant_id', '=', 'acme')
      .where('id', '=', 'default-access')
      .executeTakeFirstOrThrow();
    await expect(
      svc.db
        .insertInto('key_chains')
        .values({ ...row, id: 'hsm-without-id', is_default: 0, rotation_enabled: 0, kms_provider: 'hsm', external_key_id: null })
        .execute(),
    ).rejects.toThrow();
  });
});

describe('deletion and isolation', () => {
  it('deletes an unused key chain and refuses to delete a default one until another is made default', async () => {
    await create(acme, { id: 'spare', usageType: 'trustList', type: 'standalone' });
    const refused = await svc.call('DELETE', '/api/key-chain/default-trustList', { token: acme });
    expect(refused.status).toBe(409);
    expect(problemOf(refused).detail).toContain('default trustList key chain');
    const promoted = await svc.call('PATCH', '/api/key-chain/spare', { token: acme, body: { default: true } });
    expect(promoted.body.default).toBe(true);
    expect((await svc.call('GET', '/api/key-chain/default-trustList', { token: acme })).body.default).toBe(false);
    expect((await svc.call('DELETE', '/api/key-chain/default-trustList', { token: acme })).status).toBe(204);
    expect((await svc.call('GET', '/api/key-chain/default-trustList', { token: acme })).status).toBe(404);
  });

  it("hides another tenant's key chains", async () => {
    await create(acme, { id: 'acme-only', usageType: 'access', type: 'standalone', description: 'mine' });
    for (const [method, path] of [
      ['GET', '/api/key-chain/acme-only'],
      ['PATCH', '/api/key-chain/acme-only'],
      ['POST', '/api/key-chain/acme-only/rotate'],
      ['DELETE', '/api/key-chain/acme-only'],
      ['GET', '/api/key-chain/acme-only/certificate'],
      ['GET', '/api/key-chain/acme-only/public-key'],
    ]) {
      const reply = await svc.raw(method as string, path as string, {
        token: other,
        body: method === 'PATCH' ? { description: 'theirs' } : undefined,
      });
      expect(reply.status, `${method} ${path}`).toBe(404);
    }
    const list = (await svc.call('GET', '/api/key-chain', { token: other })).body;
    expect(list.map((k) => k.id)).not.toContain('acme-only');
    expect((await svc.call('GET', '/api/key-chain/acme-only', { token: acme })).body.description).toBe('mine');
  });
});
