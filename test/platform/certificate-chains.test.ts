// chainsToTrusted decides whether an issuer's, a wallet provider's or a status list signer's x5c
// leads to a certificate the tenant trusts. Each case bends one link of an otherwise good chain
// (made here with @peculiar/x509): its validity, who signed it, whether its issuer is a CA.
import { X509Certificate } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { certificateKey, chainsToTrusted, MAX_CHAIN_LENGTH } from '../../src/platform/crypto/certificate-chains.js';
import { type TestCertificate, testCertificate } from '../support/test-pki.js';

const FROM = new Date('2026-01-01T00:00:00Z');
const UNTIL = new Date('2027-01-01T00:00:00Z');
const NOW = new Date('2026-06-01T00:00:00Z');
const validity = { notBefore: FROM, notAfter: UNTIL };

let root: TestCertificate;
let intermediate: TestCertificate;
let leaf: TestCertificate;

beforeAll(async () => {
  root = await testCertificate('Root CA', { ca: true, ...validity });
  intermediate = await testCertificate('Intermediate CA', { ca: true, issuer: root, ...validity });
  leaf = await testCertificate('Leaf', { issuer: intermediate, ...validity });
});

describe('chainsToTrusted', () => {
  it('accepts a chain up to a trusted root, with or without the root in x5c, and one whose intermediate is trusted', () => {
    expect(chainsToTrusted([leaf.der, intermediate.der, root.der], [root.pem], NOW)).toBe(true);
    expect(chainsToTrusted([leaf.der, intermediate.der], [root.pem], NOW)).toBe(true);
    expect(chainsToTrusted([leaf.der, intermediate.der], [intermediate.pem], NOW)).toBe(true);
    expect(chainsToTrusted([leaf.der], [intermediate.pem], NOW)).toBe(true);
  });

  it('accepts a leaf that is itself trusted (pinned), though it is no CA', () => {
    expect(chainsToTrusted([leaf.der], [leaf.pem], NOW)).toBe(true);
  });

  it('refuses a chain that leads to no trusted certificate, and an empty one', async () => {
    const stranger = await testCertificate('Stranger CA', { ca: true, ...validity });
    expect(chainsToTrusted([leaf.der, intermediate.der, root.der], [stranger.pem], NOW)).toBe(false);
    expect(chainsToTrusted([leaf.der, intermediate.der, root.der], [], NOW)).toBe(false);
    // Among other trusted certificates, the one that matters is found.
    expect(chainsToTrusted([leaf.der, intermediate.der], [stranger.pem, root.pem], NOW)).toBe(true);
    // The leaf alone does not reach the root: its issuer is missing.
    expect(chainsToTrusted([leaf.der], [root.pem], NOW)).toBe(false);
    expect(chainsToTrusted([], [root.pem], NOW)).toBe(false);
  });

  it('refuses a chain with a link that its next link did not issue, even when a later link is trusted', async () => {
    const stranger = await testCertificate('Stranger CA', { ca: true, issuer: root, ...validity });
    expect(chainsToTrusted([leaf.der, stranger.der, root.der], [root.pem], NOW)).toBe(false);
    // Named as issued by the intermediate, signed by another key.
    const forged = await testCertificate('Forged Leaf', { issuer: intermediate, signingKey: stranger.keys.privateKey, ...validity });
    expect(chainsToTrusted([forged.der, intermediate.der], [root.pem], NOW)).toBe(false);
    expect(chainsToTrusted([forged.der], [intermediate.pem], NOW)).toBe(false);
  });

  it('refuses a certificate issued by a key that is not a CA', async () => {
    const underLeaf = await testCertificate('Issued by a leaf', { issuer: leaf, ...validity });
    expect(chainsToTrusted([underLeaf.der, leaf.der, intermediate.der], [root.pem], NOW)).toBe(false);
    expect(chainsToTrusted([underLeaf.der], [leaf.pem], NOW)).toBe(false);
  });

  it('accepts a link valid at the very first and last instant of its validity, and refuses it just outside', () => {
    const chain = [leaf.der, intermediate.der];
    expect(chainsToTrusted(chain, [root.pem], FROM)).toBe(true);
    expect(chainsToTrusted(chain, [root.pem], UNTIL)).toBe(true);
    expect(chainsToTrusted(chain, [root.pem], new Date(FROM.getTime() - 1))).toBe(false);
    expect(chainsToTrusted(chain, [root.pem], new Date(UNTIL.getTime() + 1))).toBe(false);
  });

  it('refuses an expired or not yet valid link, and a trusted CA that has expired', async () => {
    const expired = await testCertificate('Expired Leaf', { issuer: intermediate, notBefore: FROM, notAfter: new Date('2026-03-01') });
    expect(chainsToTrusted([expired.der, intermediate.der], [root.pem], NOW)).toBe(false);
    // Pinned, it is still refused.
    expect(chainsToTrusted([expired.der], [expired.pem], NOW)).toBe(false);
    const future = await testCertificate('Future Leaf', { issuer: intermediate, notBefore: new Date('2026-09-01'), notAfter: UNTIL });
    expect(chainsToTrusted([future.der, intermediate.der], [root.pem], NOW)).toBe(false);
    const expiredIntermediate = await testCertificate('Expired Intermediate', {
      ca: true,
      issuer: root,
      notBefore: FROM,
      notAfter: new Date('2026-03-01'),
    });
    const underExpired = await testCertificate('Leaf of the expired', { issuer: expiredIntermediate, ...validity });
    expect(chainsToTrusted([underExpired.der, expiredIntermediate.der], [root.pem], NOW)).toBe(false);
    // The expired intermediate as the trust anchor itself.
    expect(chainsToTrusted([underExpired.der], [expiredIntermediate.pem], NOW)).toBe(false);
  });

  it(`refuses a chain longer than ${MAX_CHAIN_LENGTH} certificates, and accepts one of exactly that length`, async () => {
    // Root, eight intermediates, leaf: ten certificates.
    const links: TestCertificate[] = [root];
    for (let i = 1; i <= MAX_CHAIN_LENGTH - 2; i++) {
      links.unshift(await testCertificate(`CA ${i}`, { ca: true, issuer: links[0], ...validity }));
    }
    links.unshift(await testCertificate('Deep Leaf', { issuer: links[0], ...validity }));
    const x5c = links.map((link) => link.der);
    expect(x5c).toHaveLength(MAX_CHAIN_LENGTH);
    expect(MAX_CHAIN_LENGTH).toBe(10);
    expect(chainsToTrusted(x5c, [root.pem], NOW)).toBe(true);
    expect(chainsToTrusted([...x5c, root.der], [root.pem], NOW)).toBe(false);
  });

  it('refuses what does not parse as a certificate, in x5c or among the trusted', () => {
    expect(chainsToTrusted(['bm90IGEgY2VydGlmaWNhdGU='], [root.pem], NOW)).toBe(false);
    expect(chainsToTrusted([leaf.der, intermediate.der], ['-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----'], NOW)).toBe(
      false,
    );
  });
});

// An accepted chain is remembered with the span its certificates are valid in: signatures are then
// not checked again (counted on X509Certificate.prototype.verify, which still runs), but nothing a
// full check refuses is accepted from the cache.
describe('chainsToTrusted remembering accepted chains', () => {
  const signatureChecks = () => vi.spyOn(X509Certificate.prototype, 'verify');
  afterEach(() => vi.restoreAllMocks());

  it('accepts a chain it accepted before without checking its signatures again (hit); a new chain is checked (miss)', async () => {
    const fresh = await testCertificate('Cached Leaf', { issuer: intermediate, ...validity });
    const checks = signatureChecks();
    expect(chainsToTrusted([fresh.der, intermediate.der], [root.pem], NOW)).toBe(true);
    const first = checks.mock.calls.length;
    expect(first).toBeGreaterThan(0);
    expect(chainsToTrusted([fresh.der, intermediate.der], [root.pem], new Date(NOW.getTime() + 60_000))).toBe(true);
    expect(checks.mock.calls.length).toBe(first);
    // The same leaf with the root appended is another chain: checked in full.
    expect(chainsToTrusted([fresh.der, intermediate.der, root.der], [root.pem], NOW)).toBe(true);
    expect(checks.mock.calls.length).toBeGreaterThan(first);
  });

  it('refuses a remembered chain once a certificate it rested on has expired: the leaf, or the trust anchor', async () => {
    const shortLeaf = await testCertificate('Short Leaf', { issuer: intermediate, notBefore: FROM, notAfter: new Date('2026-07-01') });
    expect(chainsToTrusted([shortLeaf.der, intermediate.der], [root.pem], NOW)).toBe(true);
    expect(chainsToTrusted([shortLeaf.der, intermediate.der], [root.pem], new Date('2026-07-01T00:00:01Z'))).toBe(false);
    // Before its validity began, too.
    expect(chainsToTrusted([shortLeaf.der, intermediate.der], [root.pem], new Date(FROM.getTime() - 1))).toBe(false);
    const shortRoot = await testCertificate('Short Root', { ca: true, notBefore: FROM, notAfter: new Date('2026-08-01') });
    const underShortRoot = await testCertificate('Leaf under the short root', { issuer: shortRoot, ...validity });
    expect(chainsToTrusted([underShortRoot.der], [shortRoot.pem], NOW)).toBe(true);
    expect(chainsToTrusted([underShortRoot.der], [shortRoot.pem], new Date('2026-08-01T00:00:01Z'))).toBe(false);
    // Still accepted inside the span.
    expect(chainsToTrusted([underShortRoot.der], [shortRoot.pem], new Date('2026-07-31T00:00:00Z'))).toBe(true);
  });

  it("does not accept a chain under other trust anchors (another tenant's) because it was accepted under its own", async () => {
    const stranger = await testCertificate('Other Tenant CA', { ca: true, ...validity });
    expect(chainsToTrusted([leaf.der, intermediate.der], [root.pem], NOW)).toBe(true);
    const checks = signatureChecks();
    expect(chainsToTrusted([leaf.der, intermediate.der], [stranger.pem], NOW)).toBe(false);
    expect(checks.mock.calls.length).toBeGreaterThan(0);
  });

  it('checks a refused chain in full each time and refuses it each time', async () => {
    const forger = await testCertificate('Forger CA', { ca: true, ...validity });
    const forged = await testCertificate('Forged Cached Leaf', { issuer: intermediate, signingKey: forger.keys.privateKey, ...validity });
    const checks = signatureChecks();
    expect(chainsToTrusted([forged.der, intermediate.der], [root.pem], NOW)).toBe(false);
    const first = checks.mock.calls.length;
    expect(first).toBeGreaterThan(0);
    expect(chainsToTrusted([forged.der, intermediate.der], [root.pem], NOW)).toBe(false);
    expect(checks.mock.calls.length).toBe(2 * first);
  });
});

describe('certificateKey', () => {
  // Fresh certificates: one parsed by an earlier test would come from the cache already.
  it("is the certificate's public key, parsed once", async () => {
    const fresh = await testCertificate('Fresh Leaf', { issuer: intermediate, ...validity });
    const key = certificateKey(fresh.der);
    expect(key.export({ format: 'jwk' })).toEqual(
      new X509Certificate(Buffer.from(fresh.der, 'base64')).publicKey.export({ format: 'jwk' }),
    );
    expect(certificateKey(fresh.der)).toBe(key);
    // Another certificate does not push it out.
    const other = await testCertificate('Other Fresh Leaf', { issuer: intermediate, ...validity });
    expect(certificateKey(other.der)).not.toBe(key);
    expect(certificateKey(fresh.der)).toBe(key);
    expect(() => certificateKey('bm90IGEgY2VydGlmaWNhdGU=')).toThrow();
  });

  it('keeps at most a bounded number of parsed certificates', async () => {
    const fresh = await testCertificate('Bounded Leaf', { issuer: intermediate, ...validity });
    const key = certificateKey(fresh.der);
    // Two thousand encodings of one certificate (base64 with trailing spaces): each is its own entry.
    for (let i = 1; i <= 2_000; i++) certificateKey(`${leaf.der}${' '.repeat(i)}`);
    // The cache was emptied on the way: the key is parsed anew.
    expect(certificateKey(fresh.der)).not.toBe(key);
    expect(certificateKey(fresh.der).export({ format: 'jwk' })).toEqual(key.export({ format: 'jwk' }));
  });
});
