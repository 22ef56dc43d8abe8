// The one signing service every feature uses: JWTs with their x5c chain, COSE_Sign1 for mdoc, raw
// signatures for libraries that build their own structures, JWE decryption, and published JWKS.
import type { X509Certificate } from 'node:crypto';
import type { JWK } from 'jose';
import type { SigningAlgorithm } from '../platform/crypto/algorithms.js';
import { coseCbor } from '../platform/crypto/cose-cbor.js';
import { isSelfSigned, parsePemChain, toX5c } from '../platform/crypto/x509.js';
import { USAGE_TYPES, type UsageType } from './model.js';
import type { KeyChainService } from './service.js';
import type { KeyChainRow } from './store.js';

export interface KeyRef {
  /** A key chain of the tenant; absent means the tenant's default for `usageType`. */
  keyChainId?: string | null;
  usageType: UsageType;
}

export interface Signer {
  keyChainId: string;
  algorithm: SigningAlgorithm;
  kid: string;
  /**
   * The active certificate chain, leaf first, DER in base64, never with its trust anchor (HAIP 1.0
   * sections 4.1, 5, 6.1, 6.1.1): what every x5c and x5chain svc sends carries.
   */
  x5c: string[];
  /** The leaf is self-signed (a standalone or self-signed imported chain), which HAIP 1.0 forbids in x5c. */
  selfSigned: boolean;
  sign(data: Uint8Array): Promise<Uint8Array>;
}

/** COSE algorithm identifiers (RFC 9053). */
const COSE_ALG: Record<SigningAlgorithm, number> = { ES256: -7, ES384: -35, ES512: -36 };
const COSE_HEADER = { alg: 1, x5chain: 33 } as const;
const COSE_SIGN1_TAG = 18;

const b64url = (value: string | Uint8Array) => Buffer.from(value).toString('base64url');

export class SigningService {
  /** Parsed x5c per certificate PEM: certificates are parsed once, not per signature. */
  private readonly x5cByPem = new Map<string, { x5c: string[]; selfSigned: boolean }>();

  constructor(private readonly keyChains: KeyChainService) {}

  private x5cOf(pem: string) {
    let entry = this.x5cByPem.get(pem);
    if (!entry) {
      entry = x5cWithoutAnchor(parsePemChain(pem));
      if (this.x5cByPem.size > 5_000) this.x5cByPem.clear();
      this.x5cByPem.set(pem, entry);
    }
    return entry;
  }

  signerFor(row: KeyChainRow): Signer {
    const provider = this.keyChains.provider(row.kms_provider);
    const key = this.keyChains.storedKey(row, 'active');
    if (!key) throw new Error(`key chain ${row.id} has no active key`);
    const algorithm = row.algorithm as SigningAlgorithm;
    return {
      keyChainId: row.id,
      algorithm,
      kid: provider.publicJwk(key).kid as string,
      ...this.x5cOf(row.active_certificate),
      sign: (data) => provider.sign(key, algorithm, data),
    };
  }

  async signer(tenantId: string, ref: KeyRef): Promise<Signer> {
    return this.signerFor(await this.keyChains.resolve(tenantId, ref));
  }

  /** A compact JWS; the header gets alg, and x5c (default) or kid. */
  async signJwt(
    tenantId: string,
    ref: KeyRef,
    header: Record<string, unknown>,
    payload: Record<string, unknown>,
    options: { x5c?: boolean } = {},
  ) {
    return signJwtWith(await this.signer(tenantId, ref), header, payload, options);
  }

  /** A tagged COSE_Sign1 with the algorithm protected and the certificate chain (x5chain) unprotected. */
  async signCoseSign1(tenantId: string, ref: KeyRef, payload: Uint8Array, externalAad?: Uint8Array) {
    return signCoseSign1With(await this.signer(tenantId, ref), payload, { externalAad });
  }

  async decryptJwe(tenantId: string, ref: KeyRef, jwe: string) {
    const row = await this.keyChains.resolve(tenantId, ref);
    const key = this.keyChains.storedKey(row, 'active');
    if (!key) throw new Error(`key chain ${row.id} has no active key`);
    return this.keyChains.provider(row.kms_provider).decryptJwe(key, jwe);
  }

  /** Every current and still-valid previous public key of the tenant, for verifiers that look keys up by kid. */
  async jwks(tenantId: string, usageTypes: readonly UsageType[] = USAGE_TYPES): Promise<{ keys: JWK[] }> {
    const keys: JWK[] = [];
    for (const chain of await this.keyChains.list(tenantId)) {
      if (!usageTypes.includes(chain.usageType)) continue;
      const use = chain.usage === 'sign' ? { use: 'sig', alg: chain.algorithm } : { use: 'enc', alg: 'ECDH-ES' };
      keys.push({ ...chain.activeJwk, ...use });
      if (chain.previousJwk) keys.push({ ...chain.previousJwk, ...use });
    }
    return { keys };
  }
}

/**
 * A chain as x5c, without a self-signed last certificate behind the leaf: that is the trust anchor,
 * which the verifier must hold already and HAIP 1.0 keeps out of x5c. The stored chains leave their
 * root apart already (an internal chain's root_certificate, checkChainForKey for chains from
 * outside); this holds for any chain written before those checks too. A lone self-signed leaf stays:
 * it is all the chain has, and `selfSigned` says so.
 */
export function x5cWithoutAnchor(chain: X509Certificate[]): { x5c: string[]; selfSigned: boolean } {
  const last = chain[chain.length - 1];
  const withoutAnchor = chain.length > 1 && last && isSelfSigned(last) ? chain.slice(0, -1) : chain;
  const leaf = withoutAnchor[0];
  return { x5c: toX5c(withoutAnchor), selfSigned: leaf !== undefined && isSelfSigned(leaf) };
}

/**
 * A tagged COSE_Sign1 (RFC 9052) by a signer at hand: the algorithm, then any further `protectedHeader`
 * parameters, protected; the certificate chain (x5chain) unprotected.
 */
export async function signCoseSign1With(
  signer: Signer,
  payload: Uint8Array,
  options: { protectedHeader?: [label: number, value: unknown][]; externalAad?: Uint8Array } = {},
) {
  const cbor = await coseCbor();
  const protectedHeader = cbor.encode(
    new Map<number, unknown>([[COSE_HEADER.alg, COSE_ALG[signer.algorithm]], ...(options.protectedHeader ?? [])]),
  );
  const chain = signer.x5c.map((c) => Buffer.from(c, 'base64'));
  const unprotected = new Map<number, unknown>([[COSE_HEADER.x5chain, chain.length === 1 ? chain[0] : chain]]);
  const toBeSigned = cbor.encode(['Signature1', protectedHeader, options.externalAad ?? new Uint8Array(), payload]);
  const signature = await signer.sign(toBeSigned);
  return cbor.tagged([protectedHeader, unprotected, payload, signature], COSE_SIGN1_TAG);
}

export async function signJwtWith(
  signer: Signer,
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  options: { x5c?: boolean } = {},
) {
  const fullHeader = { ...header, alg: signer.algorithm, ...(options.x5c === false ? { kid: signer.kid } : { x5c: signer.x5c }) };
  const input = `${b64url(JSON.stringify(fullHeader))}.${b64url(JSON.stringify(payload))}`;
  const signature = await signer.sign(Buffer.from(input));
  return `${input}.${b64url(signature)}`;
}
