// Making keys and certificates for a key chain: a standalone self-signed key, a root that signs a
// leaf, a new leaf under an existing root (rotation), or a new root for a key already held (a
// self-signed chain moved under a CA).

import type { JWK } from 'jose';
import type { Clock } from '../platform/clock.js';
import { ALGORITHM_PARAMS, type SigningAlgorithm } from '../platform/crypto/algorithms.js';
import { parsePemChain } from '../platform/crypto/x509.js';
import {
  createCrl,
  createLeafCertificate,
  createRootCertificate,
  createSelfSignedCertificate,
  type Links,
  rootSubject,
  type Subject,
} from './certificates.js';
import type { UsageType } from './model.js';
import type { KeyPlace } from './providers/key-names.js';
import { type KeyProvider, publicCryptoKey, type StoredKey } from './providers/key-provider.js';

export interface ChainIdentity {
  tenantId: string;
  keyChainId: string;
  usageType: UsageType;
  algorithm: SigningAlgorithm;
  subject: Subject;
  certValidityDays: number;
  /** Where the chain's private keys live. */
  kmsProvider: string;
  /** The leaf key to make in an external provider, by the tenant's name for it (externalKeyId or one derived from it); null for db. */
  keyPlace: KeyPlace | null;
}

/** The name of an internal chain's root key inside an external provider: beside its first leaf key. */
export const rootKeyRef = (externalKeyId: string) => `${externalKeyId}-root`;

/**
 * The name of a rotated key inside an external provider: the chain's externalKeyId and the moment of
 * the rotation (UTC, to the millisecond), so every rotation makes a key of its own, the names sort
 * by age, and they keep to the letters, digits and - that every provider accepts in a name.
 */
export const rotatedKeyRef = (externalKeyId: string, at: Date) =>
  `${externalKeyId}-${at.toISOString().replace(/[-:.]/g, '').toLowerCase()}`;

export interface MintedKey {
  sealedJwk: string;
  externalKeyId: string | null;
  publicJwk: JWK;
  certificatePem: string;
}

export const sealingContext = (tenantId: string, keyChainId: string) => `key-chain:${tenantId}:${keyChainId}`;

export class KeyMaterial {
  constructor(
    private readonly providerOf: (name: string) => KeyProvider,
    private readonly publicUrl: string,
    /** Certificates and CRLs are issued at its time. */
    private readonly clock: Clock,
  ) {}

  private links(identity: ChainIdentity): Links {
    const issuer = `${this.publicUrl}/issuers/${encodeURIComponent(identity.tenantId)}`;
    return { issuerUri: issuer, crlUri: `${issuer}/key-chains/${encodeURIComponent(identity.keyChainId)}/crl` };
  }

  private leafOptions(identity: ChainIdentity) {
    return {
      dnsName: new URL(this.publicUrl).hostname,
      uri: `${this.publicUrl}/issuers/${encodeURIComponent(identity.tenantId)}`,
      validityDays: identity.certValidityDays,
      documentSigner: identity.usageType === 'attestation',
      keyAgreement: identity.usageType === 'encrypt',
    };
  }

  private async newKey(identity: ChainIdentity, place = identity.keyPlace) {
    const provider = this.providerOf(identity.kmsProvider);
    const key = await provider.generate(identity.algorithm, sealingContext(identity.tenantId, identity.keyChainId), place);
    return this.withPair(identity, key);
  }

  private async withPair(identity: ChainIdentity, key: { sealedJwk: string; externalKeyId: string | null; publicJwk: JWK }) {
    const stored: StoredKey = { ...key, context: sealingContext(identity.tenantId, identity.keyChainId) };
    const pair = {
      publicKey: await publicCryptoKey(key.publicJwk, identity.algorithm),
      privateKey: await this.providerOf(identity.kmsProvider).signingCryptoKey(stored, identity.algorithm),
    };
    return { key, stored, pair };
  }

  /** A self-signed certificate for a new key, or for `existing` (an imported key without certificate). */
  async standalone(identity: ChainIdentity, existing?: { sealedJwk: string; publicJwk: JWK }): Promise<MintedKey> {
    const { key, pair } = existing ? await this.withPair(identity, { ...existing, externalKeyId: null }) : await this.newKey(identity);
    const hash = ALGORITHM_PARAMS[identity.algorithm].hash;
    const certificatePem = await createSelfSignedCertificate(
      pair,
      identity.subject,
      this.links(identity),
      this.leafOptions(identity),
      hash,
      this.clock.now(),
    );
    return { ...key, certificatePem };
  }

  /**
   * The key the provider holds at the identity's place with the certificate chain the provider
   * issued for it (csc: the QTSP's), PEM leaf first; svc makes no key and no certificate.
   */
  async certifiedByProvider(identity: ChainIdentity): Promise<MintedKey> {
    const provider = this.providerOf(identity.kmsProvider);
    const key = await provider.generate(identity.algorithm, sealingContext(identity.tenantId, identity.keyChainId), identity.keyPlace);
    if (!key.certificateChain) throw new Error(`key provider '${identity.kmsProvider}' gave no certificate chain for its key`);
    return { sealedJwk: key.sealedJwk, externalKeyId: key.externalKeyId, publicJwk: key.publicJwk, certificatePem: key.certificateChain };
  }

  async internalChain(identity: ChainIdentity): Promise<{ root: MintedKey; leaf: MintedKey }> {
    const root = await this.newRoot(identity);
    const leaf = await this.leafUnderRoot(identity, root.stored);
    return { root: root.minted, leaf };
  }

  /**
   * A new root CA for a key the chain already holds (a self-signed chain moved under a CA): the root
   * certificate, and a certificate for the same key signed by it. The key itself stays, so its kid
   * and everything it signed stay valid.
   */
  async rootForExistingKey(identity: ChainIdentity, publicJwk: JWK): Promise<{ root: MintedKey; certificatePem: string }> {
    const root = await this.newRoot(identity);
    return { root: root.minted, certificatePem: await this.certify(identity, publicJwk, root.stored) };
  }

  /** A root CA key (beside the chain's key in an external provider) with its self-signed CA certificate. */
  private async newRoot(identity: ChainIdentity) {
    const place = identity.keyPlace;
    const root = await this.newKey(identity, place && { ...place, name: rootKeyRef(place.name) });
    const hash = ALGORITHM_PARAMS[identity.algorithm].hash;
    const certificatePem = await createRootCertificate(
      root.pair,
      rootSubject(identity.subject),
      this.links(identity),
      hash,
      this.clock.now(),
    );
    return { minted: { ...root.key, certificatePem }, stored: { ...root.stored, certificatePem } };
  }

  /** A fresh leaf key and certificate signed by the chain's existing root. */
  async leafUnderRoot(identity: ChainIdentity, root: StoredKey & { certificatePem: string }): Promise<MintedKey> {
    const { key } = await this.newKey(identity);
    return { ...key, certificatePem: await this.certify(identity, key.publicJwk, root) };
  }

  /** A leaf certificate for `publicJwk`, signed by the chain's root. PEM. */
  private async certify(identity: ChainIdentity, publicJwk: JWK, root: StoredKey & { certificatePem: string }) {
    const [rootCertificate] = parsePemChain(root.certificatePem);
    if (!rootCertificate) throw new Error('the key chain has no root certificate');
    const signingKey = await this.providerOf(identity.kmsProvider).signingCryptoKey(root, identity.algorithm);
    return createLeafCertificate(
      await publicCryptoKey(publicJwk, identity.algorithm),
      { certificate: rootCertificate, signingKey },
      identity.subject,
      this.links(identity),
      this.leafOptions(identity),
      ALGORITHM_PARAMS[identity.algorithm].hash,
      this.clock.now(),
    );
  }

  /** The DER CRL of the chain's CA (the root of an internal chain, else the self-signed certificate itself). */
  async crl(identity: ChainIdentity, ca: StoredKey & { certificatePem: string }) {
    const [certificate] = parsePemChain(ca.certificatePem);
    if (!certificate) throw new Error('the key chain has no CA certificate');
    const signingKey = await this.providerOf(identity.kmsProvider).signingCryptoKey(ca, identity.algorithm);
    return createCrl({ certificate, signingKey }, ALGORITHM_PARAMS[identity.algorithm].hash, this.clock.now());
  }
}
