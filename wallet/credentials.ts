// What a stored credential says: its type, its claims, who signed it (the subject of the certificate
// whose key verifies the issuer signature) and whether it is bound to this wallet's key. The same
// view feeds the DCQL matching of presentation requests.
// @peculiar/x509 (certificate extensions) needs it loaded first.
import 'reflect-metadata';
import { createHash, verify as nodeVerify, X509Certificate } from 'node:crypto';
import { DataItem, DateOnly, IssuerSigned } from '@owf/mdoc';
import { AuthorityKeyIdentifierExtension, X509Certificate as ParsedCertificate } from '@peculiar/x509';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import type { DcqlCredential } from 'dcql';
import { compactVerify, type JWK } from 'jose';
import { oneLine } from './callbacks.js';
import type { CredentialFormat, StoredCredential } from './store.js';

export interface CredentialView {
  format: CredentialFormat;
  /** vct of an SD-JWT VC, docType of an mdoc. */
  type: string;
  /** SD-JWT VC: every claim with all disclosures applied; mdoc: elements by namespace. */
  claims: Record<string, unknown>;
  /** Subject of the certificate that verified the issuer signature. */
  issuer: string;
  /** When the issuer signed it (SD-JWT VC iat, mdoc validityInfo.signed), as ISO 8601. */
  issuedAt?: string;
  /**
   * The authority key identifiers (base64url) of the issuer's certificate chain: what DCQL
   * trusted_authorities of type aki name, to say which issuers a verifier accepts.
   */
  authorityKeyIds: string[];
  /** The key the issuer bound the credential to. */
  holderJwk?: JWK;
}

export const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest();

export const sdJwtVc = () => new SDJwtVcInstance({ hasher: (data) => sha256(typeof data === 'string' ? data : new Uint8Array(data)) });

/** Claims of the SD-JWT VC data model rather than of the holder: not shown as personal data. */
const REGISTERED = new Set(['iss', 'iat', 'nbf', 'exp', 'cnf', 'vct', 'vct#integrity', 'status', '_sd_alg']);

export const personalClaims = (view: CredentialView) =>
  view.format === 'dc+sd-jwt' ? Object.fromEntries(Object.entries(view.claims).filter(([name]) => !REGISTERED.has(name))) : view.claims;

async function viewSdJwt(credential: string): Promise<CredentialView> {
  const decoded = await sdJwtVc().decode(credential);
  const claims = (await sdJwtVc().getClaims(credential)) as Record<string, unknown>;
  const header = decoded.jwt?.header as { x5c?: string[]; kid?: string } | undefined;
  const x5c = header?.x5c;
  if (!x5c?.[0]) {
    // svc's sdJwtTrustFormat "federation": the key is found by resolving the issuer's federation trust chain.
    if (header?.kid)
      throw new Error(
        'this SD-JWT VC names its issuer key by kid (OpenID Federation trust), not by an x5c certificate; this demo wallet cannot resolve federation trust chains and holds only credentials it can verify by x5c',
      );
    throw new Error('the SD-JWT VC carries no x5c certificate to verify its issuer signature with');
  }
  const leaf = new X509Certificate(Buffer.from(x5c[0], 'base64'));
  await compactVerify(credential.split('~')[0] as string, leaf.publicKey);
  const cnf = claims.cnf as { jwk?: JWK } | undefined;
  return {
    format: 'dc+sd-jwt',
    type: String(claims.vct),
    claims,
    issuer: oneLine(leaf.subject),
    ...(typeof claims.iat === 'number' && { issuedAt: new Date(claims.iat * 1000).toISOString() }),
    authorityKeyIds: authorityKeyIds(x5c.map((der) => Buffer.from(der, 'base64'))),
    ...(cnf?.jwk && { holderJwk: cnf.jwk }),
  };
}

/** The keyIdentifier of each certificate's AuthorityKeyIdentifier extension, base64url, as DCQL's aki values. */
function authorityKeyIds(chain: Uint8Array[]): string[] {
  return chain.flatMap((der) => {
    const keyId = new ParsedCertificate(new Uint8Array(der)).getExtension(AuthorityKeyIdentifierExtension)?.keyId;
    return keyId ? [Buffer.from(keyId, 'hex').toString('base64url')] : [];
  });
}

/** mdoc element values as JSON: dates as ISO strings, bytes as base64url. */
function toJson(value: unknown): unknown {
  if (value instanceof DataItem) return toJson(value.data);
  if (value instanceof DateOnly || value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64url');
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(toJson);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), toJson(v)]));
  return value;
}

const COSE_HASH: Record<string, string> = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512' };

function viewMdoc(credential: string): CredentialView {
  const issuerSigned = IssuerSigned.fromEncodedForOid4Vci(credential);
  const { issuerAuth } = issuerSigned;
  const certificate = new X509Certificate(Buffer.from(issuerAuth.certificate));
  const hash = COSE_HASH[issuerAuth.signatureAlgorithmName];
  const signed =
    hash && nodeVerify(hash, issuerAuth.toBeSigned, { key: certificate.publicKey, dsaEncoding: 'ieee-p1363' }, issuerAuth.signature);
  if (!signed) throw new Error(`the mdoc's issuer signature does not verify with ${oneLine(certificate.subject)}`);
  const namespaces = [...(issuerSigned.issuerNamespaces?.issuerNamespaces ?? new Map())] as [
    string,
    { elementIdentifier: string; elementValue: unknown }[],
  ][];
  const claims = Object.fromEntries(
    namespaces.map(([namespace, items]) => [
      namespace,
      Object.fromEntries(items.map((item) => [item.elementIdentifier, toJson(item.elementValue)])),
    ]),
  );
  const { deviceKey } = issuerAuth.mobileSecurityObject.deviceKeyInfo;
  const holderJwk = {
    kty: 'EC',
    crv: 'P-256',
    x: Buffer.from(deviceKey.x ?? []).toString('base64url'),
    y: Buffer.from(deviceKey.y ?? []).toString('base64url'),
  };
  return {
    format: 'mso_mdoc',
    type: issuerAuth.mobileSecurityObject.docType,
    claims,
    issuer: oneLine(certificate.subject),
    issuedAt: issuerAuth.mobileSecurityObject.validityInfo.signed.toISOString(),
    authorityKeyIds: authorityKeyIds(issuerAuth.certificateChain),
    holderJwk,
  };
}

export async function viewOf(stored: Pick<StoredCredential, 'format' | 'credential'>): Promise<CredentialView> {
  return stored.format === 'dc+sd-jwt' ? viewSdJwt(stored.credential) : viewMdoc(stored.credential);
}

export const boundTo = (view: CredentialView, key: JWK) => view.holderJwk?.x === key.x && view.holderJwk?.y === key.y;

/** The credential as the dcql library matches it against a query. */
export function dcqlCredential(view: CredentialView): DcqlCredential {
  // Matched by the dcql library against a query's trusted_authorities of type aki.
  const authority = view.authorityKeyIds.length ? { authority: { type: 'aki' as const, values: view.authorityKeyIds as [string] } } : {};
  return view.format === 'dc+sd-jwt'
    ? { credential_format: 'dc+sd-jwt', vct: view.type, claims: view.claims as never, cryptographic_holder_binding: true, ...authority }
    : {
        credential_format: 'mso_mdoc',
        doctype: view.type,
        namespaces: view.claims as never,
        cryptographic_holder_binding: true,
        ...authority,
      };
}
