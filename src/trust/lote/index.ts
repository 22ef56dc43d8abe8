// The LoTE trust framework (ETSI TS 119 602 lists of trusted entities): a key is trusted when its
// X.509 chain leads to a certificate of the tenant's trust lists, for the purpose asked (issuers and
// status list signers, or wallet providers). The lists themselves are the trust-lists feature's.
import { certificateKey, chainsToTrusted } from '../../platform/crypto/certificate-chains.js';
import { type TrustFramework, TrustRefused } from '../framework.js';

export const loteFramework: TrustFramework = {
  id: 'lote',
  label: 'LoTE',
  async issuerKey(trust, { header, now }) {
    const x5c = header.x5c;
    if (!Array.isArray(x5c) || x5c.length === 0) throw new TrustRefused('issuer signature: the credential carries no x5c chain');
    if (!chainsToTrusted(x5c, trust.trustedCertificates, now))
      throw new TrustRefused('untrusted issuer: the x5c chain leads to no trusted certificate');
    return { framework: 'lote', value: certificateKey(x5c[0] as string) };
  },
  async statusListSigner(trust, { x5c, now }) {
    return chainsToTrusted(x5c, trust.trustedCertificates, now) ? { framework: 'lote', value: true } : undefined;
  },
  async issuerChainAnchors(trust) {
    return { framework: 'lote', value: trust.trustedCertificates };
  },
  async walletProviders(sources, tenantId) {
    return { framework: 'lote', value: await sources.listedCertificates(tenantId, 'walletAttestations') };
  },
};
