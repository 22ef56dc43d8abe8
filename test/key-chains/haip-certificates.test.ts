// HAIP 1.0 on the certificates wallets and verifiers see: the certificate in x5c is never self-signed
// and the trust anchor is never in x5c (sections 4.1, 5, 6.1, 6.1.1). A new tenant's default key
// chains are CA-issued; a tenant made before moves its self-signed chains under a root CA with one
// call. Everything is read back through the server with @peculiar/x509, jose and openssl.
import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { decodeProtectedHeader, importX509, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

x509.cryptoProvider.set(crypto); // the global Web Crypto (node:crypto webcrypto)

const DEFAULT_CHAINS = ['default-attestation', 'default-access', 'default-statusList', 'default-trustList', 'default-encrypt'];

let svc: TestService;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'haip-certificates-'));
  svc = await startService({ CERTIFICATE_COUNTRY: 'DE' });
});
afterAll(async () => {
  await svc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let fileCount = 0;
function tempFile(content: string): string {
  const path = join(dir, `${fileCount++}.pem`);
  writeFileSync(path, content);
  return path;
}

/** openssl's own verdict on `leaf` with `anchor` as the only trusted certificate (no partial chains). */
function opensslVerify(leaf: string, anchor: string) {
  const run = spawnSync('openssl', ['verify', '-x509_strict', '-CAfile', tempFile(anchor), tempFile(leaf)], { encoding: 'utf8' });
  return `${run.stdout}${run.stderr}`;
}

const pemOf = (der: string) => `-----BEGIN CERTIFICATE-----\n${der.match(/.{1,64}/g)?.join('\n')}\n-----END CERTIFICATE-----`;
const derOf = (pem: string) => Buffer.from(new x509.X509Certificate(pem).rawData).toString('base64');
const x509HashOf = (der: string) => `x509_hash:${createHash('sha256').update(Buffer.from(der, 'base64')).digest('base64url')}`;

interface Chain {
  id: string;
  type: string;
  activeJwk: { kid: string };
  activeCertificate: string;
  rootCertificate: string | null;
}

async function keyChain(token: string, id: string): Promise<Chain> {
  const reply = await svc.raw('GET', `/api/key-chain/${id}`, { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

async function createChain(token: string, body: Record<string, unknown>): Promise<Chain> {
  const reply = await svc.raw('POST', '/api/key-chain', { token, body });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

/**
 * What HAIP 1.0 asks of an x5c, checked against the chain that signed: the leaf alone (the chains
 * here have no intermediates), not self-signed, issued and signed by the chain's root, which is not
 * in x5c; openssl builds the path from the leaf to the root.
 */
async function expectCaIssued(x5c: unknown, chain: Chain) {
  expect(Array.isArray(x5c)).toBe(true);
  const ders = x5c as string[];
  expect(ders).toHaveLength(1);
  expect(chain.rootCertificate).toContain('BEGIN CERTIFICATE');
  const leaf = new x509.X509Certificate(Buffer.from(ders[0] as string, 'base64'));
  const root = new x509.X509Certificate(chain.rootCertificate as string);
  expect(await leaf.isSelfSigned()).toBe(false);
  expect(leaf.issuer).not.toBe(leaf.subject);
  expect(leaf.issuer).toBe(root.subject);
  expect(await leaf.verify({ publicKey: root.publicKey, signatureOnly: true })).toBe(true);
  expect(ders).not.toContain(derOf(chain.rootCertificate as string));
  expect(opensslVerify(pemOf(ders[0] as string), chain.rootCertificate as string)).toContain(': OK');
  return leaf;
}

/** A status list of the tenant (signed with `keyChainId`, or the default), fetched as the public token and verified with jose. */
async function statusListToken(token: string, keyChainId?: string) {
  const created = await svc.raw('POST', '/api/status-lists', { token, body: keyChainId ? { keyChainId } : {} });
  expect(created.status, created.text).toBe(201);
  return fetchStatusListToken(created.body.uri);
}

async function fetchStatusListToken(uri: string) {
  const reply = await fetch(uri, { headers: { accept: 'application/statuslist+jwt' } });
  expect(reply.status).toBe(200);
  const jwt = await reply.text();
  const header = decodeProtectedHeader(jwt);
  const x5c = header.x5c as string[];
  await jwtVerify(jwt, await importX509(pemOf(x5c[0] as string), header.alg as string), { typ: 'statuslist+jwt' });
  return { uri, x5c };
}

/** A request object for the verifier configuration `requestId`, fetched by its request_uri and verified with jose against its x5c leaf. */
async function requestObject(token: string, requestId: string) {
  const offer = await svc.raw('POST', '/api/verifier/offer', {
    token,
    body: { response_type: 'uri', requestId, clientIdPrefix: 'x509_hash', responseMode: 'direct_post.jwt' },
  });
  expect(offer.status, offer.text).toBe(201);
  const reply = await fetch(offer.body.requestUri);
  expect(reply.status).toBe(200);
  const jwt = await reply.text();
  const header = decodeProtectedHeader(jwt);
  const x5c = header.x5c as string[];
  const { payload } = await jwtVerify(jwt, await importX509(pemOf(x5c[0] as string), header.alg as string), {
    typ: 'oauth-authz-req+jwt',
  });
  return { x5c, clientId: payload.client_id as string };
}

describe("a new tenant's default key chains", () => {
  let token: string;
  beforeAll(async () => {
    token = (await svc.tenant('fresh')).token;
    const config = await svc.raw('POST', '/api/verifier/config', { token, body: { id: 'adult', dcql_query: PID_ADULT_QUERY } });
    expect(config.status, config.text).toBe(201);
  });

  it('are each issued by a root CA of their own, with no self-signed leaf', async () => {
    const roots = new Set<string>();
    for (const id of DEFAULT_CHAINS) {
      const chain = await keyChain(token, id);
      expect(chain.type, id).toBe('internalChain');
      await expectCaIssued([derOf(chain.activeCertificate)], chain);
      const root = new x509.X509Certificate(chain.rootCertificate as string);
      expect(await root.isSelfSigned()).toBe(true);
      expect(root.getExtension(x509.BasicConstraintsExtension)?.ca).toBe(true);
      roots.add(derOf(chain.rootCertificate as string));
    }
    // One root per chain: trusting the status list root does not mean trusting the access certificates.
    expect(roots.size).toBe(DEFAULT_CHAINS.length);
  });

  it('sign status list tokens with the leaf alone in x5c', async () => {
    const { x5c } = await statusListToken(token);
    const leaf = await expectCaIssued(x5c, await keyChain(token, 'default-statusList'));
    expect(derOf(leaf.toString('pem'))).toBe(derOf((await keyChain(token, 'default-statusList')).activeCertificate));
  });

  it('sign request objects with the leaf alone in x5c, and x509_hash is the hash of that leaf', async () => {
    const { x5c, clientId } = await requestObject(token, 'adult');
    await expectCaIssued(x5c, await keyChain(token, 'default-access'));
    expect(clientId).toBe(x509HashOf(x5c[0] as string));
  });

  it('sign SD-JWT VCs with the leaf alone in x5c', async () => {
    const created = await svc.raw('POST', '/api/issuer/credentials', { token, body: PID });
    expect(created.status, created.text).toBe(201);
    const { credential } = await issueCredential(svc, token, 'pid', { given_name: 'Erika', family_name: 'Mustermann' });
    const jwt = credential.split('~')[0] as string;
    const header = decodeProtectedHeader(jwt);
    await jwtVerify(jwt, await importX509(pemOf((header.x5c as string[])[0] as string), header.alg as string));
    await expectCaIssued(header.x5c, await keyChain(token, 'default-attestation'));
  });

  it('sign trust lists with the leaf alone in x5c', async () => {
    const list = await svc.raw('POST', '/api/trust-list', { token, body: { id: 'anchors', entities: [] } });
    expect(list.status, list.text).toBe(201);
    await expectCaIssued(decodeProtectedHeader(list.body.jwt).x5c, await keyChain(token, 'default-trustList'));
  });
});

describe('a stored chain that carries its trust anchor', () => {
  it('still signs without the anchor in x5c', async () => {
    const { token } = await svc.tenant('anchored');
    const chain = await keyChain(token, 'default-statusList');
    // A chain stored with its root behind the leaf (as rows written before the root was kept apart could be).
    await svc.db
      .updateTable('key_chains')
      .set({ active_certificate: `${chain.activeCertificate}\n${chain.rootCertificate}` })
      .where('tenant_id', '=', 'anchored')
      .where('id', '=', 'default-statusList')
      .execute();
    const { x5c } = await statusListToken(token);
    await expectCaIssued(x5c, chain);
  });
});

/**
 * A tenant as one made before the defaults were CA-issued: self-signed status list and access chains
 * as its defaults, an imported self-signed one, a status list and a verifier configuration; with
 * what a wallet saw before the move (self-signed certificates in x5c).
 */
async function legacyTenant(tenantId: string) {
  const { token } = await svc.tenant(tenantId);
  const before: Record<string, Chain> = {};
  for (const [id, usageType] of [
    ['old-status', 'statusList'],
    ['old-access', 'access'],
  ] as const) {
    before[id] = await createChain(token, { id, usageType, type: 'standalone', default: true });
  }
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const imported = await svc.raw('POST', '/api/key-chain/import', {
    token,
    body: { id: 'imported-self', usageType: 'access', privateJwk: privateKey.export({ format: 'jwk' }) },
  });
  expect(imported.status, imported.text).toBe(201);
  const config = await svc.raw('POST', '/api/verifier/config', { token, body: { id: 'adult', dcql_query: PID_ADULT_QUERY } });
  expect(config.status, config.text).toBe(201);
  const status = await statusListToken(token);
  expect(await new x509.X509Certificate(Buffer.from(status.x5c[0] as string, 'base64')).isSelfSigned()).toBe(true);
  const request = await requestObject(token, 'adult');
  expect(await new x509.X509Certificate(Buffer.from(request.x5c[0] as string, 'base64')).isSelfSigned()).toBe(true);
  return { token, before, statusUri: status.uri, clientIdBefore: request.clientId };
}

const moveToCa = (token: string) => svc.raw('POST', '/api/key-chain/move-to-ca', { token });

describe('POST /api/key-chain/move-to-ca', () => {
  it('is refused without a key chain role, and moves nothing', async () => {
    const { token } = await legacyTenant('legacy-refused');
    const offerOnly = await svc.client(token, 'legacy-offers', ['issuance:offer']);
    expect((await moveToCa(offerOnly)).status).toBe(403);
    expect((await keyChain(token, 'old-status')).type).toBe('standalone');
    expect((await keyChain(token, 'old-access')).type).toBe('standalone');
  });

  it("moves every self-signed chain of the tenant under a root CA of its own, keeping its key; skips imported ones, saying why; other tenants' untouched", async () => {
    const { token, before } = await legacyTenant('legacy-moved');
    const bystander = (await svc.tenant('bystander')).token;
    await createChain(bystander, { id: 'own-access', usageType: 'access', type: 'standalone' });

    const reply = await moveToCa(token);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.moved.map((c: Chain) => c.id).sort()).toEqual(['old-access', 'old-status']);
    expect(reply.body.skipped).toEqual([{ id: 'imported-self', reason: expect.stringMatching(/^imported: .*PATCH/) }]);
    for (const moved of reply.body.moved as Chain[]) {
      const stored = await keyChain(token, moved.id);
      expect(stored).toEqual(moved);
      expect(stored.type).toBe('internalChain');
      expect(stored.activeJwk.kid).toBe(before[moved.id]?.activeJwk.kid);
      const leaf = await expectCaIssued([derOf(stored.activeCertificate)], stored);
      const old = new x509.X509Certificate(before[moved.id]?.activeCertificate as string);
      // The same key, certified anew.
      expect(Buffer.from(leaf.publicKey.rawData).equals(Buffer.from(old.publicKey.rawData))).toBe(true);
      expect(derOf(stored.activeCertificate)).not.toBe(derOf(old.toString('pem')));
    }
    expect((await keyChain(token, 'imported-self')).type).toBe('imported');
    expect((await keyChain(bystander, 'own-access')).type).toBe('standalone');

    const audit = (await svc.raw('GET', '/api/admin/audit-logs?limit=50', { token })).body;
    const entries = audit.filter((e: any) => e.actionType === 'key_chain.moved_to_ca');
    expect(entries.map((e: any) => e.after.id).sort()).toEqual(['old-access', 'old-status']);
    expect(entries[0]).toMatchObject({ before: { type: 'standalone' }, after: { type: 'internalChain' } });
  });

  it('leaves wallets a CA-issued certificate in x5c: the status list is signed again, request objects follow', async () => {
    const { token, statusUri, clientIdBefore } = await legacyTenant('legacy-wallets');
    expect((await moveToCa(token)).status).toBe(200);
    const status = await fetchStatusListToken(statusUri);
    await expectCaIssued(status.x5c, await keyChain(token, 'old-status'));
    const request = await requestObject(token, 'adult');
    await expectCaIssued(request.x5c, await keyChain(token, 'old-access'));
    expect(request.clientId).toBe(x509HashOf(request.x5c[0] as string));
    expect(request.clientId).not.toBe(clientIdBefore);
  });

  it('rotates a moved chain to a new leaf under its new root; the moved key stays published as the previous one', async () => {
    const { token, before } = await legacyTenant('legacy-rotated');
    expect((await moveToCa(token)).status).toBe(200);
    const moved = await keyChain(token, 'old-status');
    const rotated = await svc.raw('POST', '/api/key-chain/old-status/rotate', { token });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.rootCertificate).toBe(moved.rootCertificate);
    expect(rotated.body.previousJwk.kid).toBe(before['old-status']?.activeJwk.kid);
    expect(rotated.body.activeJwk.kid).not.toBe(before['old-status']?.activeJwk.kid);
    await expectCaIssued([derOf(rotated.body.activeCertificate)], rotated.body);
  });

  it('skips a self-signed chain whose common name leaves no room for its root CA, naming why', async () => {
    const { token } = await svc.tenant('legacy-long-name');
    const commonName = 'c'.repeat(64);
    await createChain(token, { id: 'long-name', usageType: 'access', type: 'standalone', subject: { commonName } });
    const reply = await moveToCa(token);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.moved).toEqual([]);
    expect(reply.body.skipped).toEqual([{ id: 'long-name', reason: expect.stringMatching(/common name is too long.*61 characters/) }]);
    expect((await keyChain(token, 'long-name')).type).toBe('standalone');
  });

  it('moves nothing more when called again', async () => {
    const { token } = await legacyTenant('legacy-again');
    expect((await moveToCa(token)).body.moved).toHaveLength(2);
    const again = await moveToCa(token);
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual({ moved: [], skipped: [{ id: 'imported-self', reason: expect.any(String) }] });
  });
});
