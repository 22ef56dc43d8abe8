import type { JWK } from 'jose';
import type { SigningAlgorithm } from '../platform/crypto/algorithms.js';
import type { Subject } from './certificates.js';

/** federation: the keys of the issuer's OpenID Federation entity configuration (its jwks), which signs it. */
export const USAGE_TYPES = ['attestation', 'access', 'statusList', 'trustList', 'encrypt', 'federation'] as const;
export type UsageType = (typeof USAGE_TYPES)[number];
/** What a key of each usage type does. */
export const USAGE_OF: Record<UsageType, 'sign' | 'encrypt'> = {
  attestation: 'sign',
  access: 'sign',
  statusList: 'sign',
  trustList: 'sign',
  encrypt: 'encrypt',
  federation: 'sign',
};

/** standalone: one self-signed certificate; internalChain: a root CA of ours signs the leaf; imported: key and chain from outside. */
export type ChainType = 'standalone' | 'internalChain' | 'imported';

export interface KeyChain {
  id: string;
  tenantId: string;
  description: string | null;
  usageType: UsageType;
  usage: 'sign' | 'encrypt';
  type: ChainType;
  default: boolean;
  algorithm: SigningAlgorithm;
  kmsProvider: string;
  externalKeyId: string | null;
  subject: Subject;
  /** Public keys only: private key material never leaves the service. */
  rootJwk: JWK | null;
  rootCertificate: string | null;
  activeJwk: JWK;
  /** PEM: the leaf, then any intermediates (not the root). */
  activeCertificate: string;
  previousJwk: JWK | null;
  previousCertificate: string | null;
  previousKeyExpiry: string | null;
  rotationEnabled: boolean;
  rotationIntervalDays: number;
  certValidityDays: number;
  lastRotatedAt: string | null;
  createdAt: string;
  updatedAt: string;
}
