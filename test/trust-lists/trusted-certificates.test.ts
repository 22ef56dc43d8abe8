// What a tenant trusts, as TrustedCertificates reads it from the trust lists made through the API:
// the certificates of its entities by purpose (credential issuers and status list signers for the
// verifier, wallet providers for the issuer, never one for the other), each once, only the tenant's
// own, and kept for five seconds unless a change of the tenant's lists clears them.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { TrustedCertificates } from '../../src/trust-lists/trusted.js';
import { startService, type TestService } from '../support/service.js';
import { testCertificate } from '../support/test-pki.js';

let svc: TestService;
let token: string;
let issuerPem: string;
let walletProviderPem: string;

const derOf = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, '');
const dersOf = (pems: string[]) => pems.map(derOf).sort();

async function keyChainCertificates(id: string) {
  const reply = await svc.raw('GET', `/api/key-chain/${id}`, { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body as { rootCertificate?: string; activeCertificate: string };
}

async function createList(tenantToken: string, id: string, entities: Record<string, unknown>[]) {
  const reply = await svc.raw('POST', '/api/trust-list', { token: tenantToken, body: { id, entities } });
  expect(reply.status, reply.text).toBe(201);
}

beforeAll(async () => {
  svc = await startService();
  token = (await svc.tenant('acme')).token;
  issuerPem = (await testCertificate('External Issuer', { ca: true })).pem;
  walletProviderPem = (await testCertificate('Wallet Provider', { ca: true })).pem;
  await createList(token, 'issuers', [
    { type: 'internal', keyChainId: 'default-attestation' },
    { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
    { type: 'external', name: 'External issuer', certificates: [issuerPem] },
    { type: 'external', name: 'Wallets', certificates: [walletProviderPem], serviceType: 'walletIssuance' },
  ]);
  // The same issuer in a second list.
  await createList(token, 'more-issuers', [{ type: 'external', name: 'External issuer again', certificates: [issuerPem] }]);
});
afterAll(() => svc.stop());
afterEach(() => vi.restoreAllMocks());

describe('TrustedCertificates', () => {
  it('gives the verifier the certificates of issuers and status list signers, each once; the issuer those of wallet providers', async () => {
    const trusted = new TrustedCertificates(svc.db, svc.running.services.keyChains);
    const attestation = await keyChainCertificates('default-attestation');
    const statusList = await keyChainCertificates('default-statusList');
    const forCredentials = await trusted.of('acme', 'credentials');
    expect(dersOf(forCredentials)).toEqual(
      [issuerPem, attestation.rootCertificate ?? attestation.activeCertificate, statusList.rootCertificate ?? statusList.activeCertificate]
        .map(derOf)
        .sort(),
    );
    // Asked for the other purpose next: not the first purpose's answer.
    expect(dersOf(await trusted.of('acme', 'walletAttestations'))).toEqual([derOf(walletProviderPem)]);
    // Each is a PEM certificate.
    for (const pem of forCredentials) expect(pem).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n?$/);
  });

  it("gives another tenant none of this tenant's certificates, and trusts only its own key chains", async () => {
    const trusted = new TrustedCertificates(svc.db, svc.running.services.keyChains);
    expect(await trusted.of('acme', 'credentials')).not.toEqual([]);
    const other = (await svc.tenant('other')).token;
    expect(await trusted.of('other', 'credentials')).toEqual([]);
    await createList(other, 'own', [{ type: 'internal', keyChainId: 'default-attestation' }]);
    trusted.forget('other');
    const own = await svc.raw('GET', '/api/key-chain/default-attestation', { token: other });
    const ours = await keyChainCertificates('default-attestation');
    const expected = derOf(own.body.rootCertificate ?? own.body.activeCertificate);
    expect(dersOf(await trusted.of('other', 'credentials'))).toEqual([expected]);
    expect(expected).not.toBe(derOf(ours.rootCertificate ?? ours.activeCertificate));
  });

  it('leaves out an internal entity whose key chain is gone (deleted meanwhile on another instance)', async () => {
    const keyChains = svc.running.services.keyChains;
    const withoutStatusList = {
      list: async (tenantId: string) => (await keyChains.list(tenantId)).filter((chain) => chain.id !== 'default-statusList'),
    } as typeof keyChains;
    const trusted = new TrustedCertificates(svc.db, withoutStatusList);
    const attestation = await keyChainCertificates('default-attestation');
    expect(dersOf(await trusted.of('acme', 'credentials'))).toEqual(
      [issuerPem, attestation.rootCertificate ?? attestation.activeCertificate].map(derOf).sort(),
    );
  });

  it("keeps a tenant's certificates for five seconds, unless its lists change here", async () => {
    const trusted = new TrustedCertificates(svc.db, svc.running.services.keyChains);
    const start = Date.now();
    const at = async (ms: number) => {
      vi.spyOn(Date, 'now').mockReturnValue(start + ms);
      try {
        return dersOf(await trusted.of('acme', 'walletAttestations'));
      } finally {
        vi.restoreAllMocks();
      }
    };
    expect(await at(0)).toEqual([derOf(walletProviderPem)]);
    // A list added elsewhere (through the API: the service's own instance is told, this one is not).
    const secondProvider = (await testCertificate('Second Wallet Provider', { ca: true })).pem;
    await createList(token, 'wallets', [
      { type: 'external', name: 'More wallets', certificates: [secondProvider], serviceType: 'walletIssuance' },
    ]);
    expect(await at(4_999)).toEqual([derOf(walletProviderPem)]);
    expect(trusted.cache.stats()).toMatchObject({ hits: 1, misses: 1 });
    expect(await at(5_000)).toEqual([derOf(walletProviderPem), derOf(secondProvider)].sort());
    // Forgetting another tenant keeps this one's; forgetting this one reads the lists at once.
    await svc.call('DELETE', '/api/trust-list/wallets', { token });
    trusted.forget('other');
    expect(await at(5_001)).toEqual([derOf(walletProviderPem), derOf(secondProvider)].sort());
    trusted.forget('acme');
    expect(await at(5_002)).toEqual([derOf(walletProviderPem)]);
  });
});
