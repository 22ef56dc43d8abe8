// Whose key verifies an SD-JWT VC's issuer signature, and why the verifier trusts it: an X.509 chain
// (x5c) to a certificate of the tenant's LoTE trust lists, or an OpenID Federation trust chain from
// the credential's iss to a trust anchor (the key named by kid in the resolved issuer metadata). The
// tenant's federation mode decides which apply: lote-only, federation-only, or hybrid (federation
// first, LoTE when the issuer does not resolve).
import type { KeyObject } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { certificateKey, chainsToTrusted } from '../../platform/crypto/certificate-chains.js';
import { ecPublicKey, ecThumbprint } from '../../platform/crypto/ec-jws.js';
import { isJsonObject } from '../../platform/json.js';
import { FederationRefused } from '../../trust/federation/entity-statement.js';
import type { PresentationContext } from '../presentation-context.js';
import { PresentationRejected } from '../presentation-rejected.js';

export interface TrustedIssuerKey {
  key: KeyObject;
  /** The authority the credential was trusted through, as DCQL trusted_authorities name it (federation only). */
  authority?: { type: 'openid_federation'; values: [string] };
}

const reject = (reason: string) => new PresentationRejected(reason);

function issuerJwtParts(presentation: string) {
  const [issuerJwt] = presentation.split('~');
  try {
    return { header: decodeProtectedHeader(issuerJwt as string), payload: decodeJwt(issuerJwt as string) };
  } catch {
    throw reject('the presentation is not an SD-JWT');
  }
}

function loteKey(x5c: unknown, context: PresentationContext): KeyObject {
  if (!Array.isArray(x5c) || x5c.length === 0) throw reject('issuer signature: the credential carries no x5c chain');
  if (!chainsToTrusted(x5c as string[], context.trustedCertificates, context.now))
    throw reject('untrusted issuer: the x5c chain leads to no trusted certificate');
  return certificateKey(x5c[0] as string);
}

async function federationKey(
  header: ReturnType<typeof decodeProtectedHeader>,
  iss: unknown,
  anchorIds: string[],
  context: PresentationContext,
): Promise<TrustedIssuerKey> {
  const federation = context.federation;
  if (!federation) throw reject('untrusted issuer: OpenID Federation: the tenant takes part in no federation');
  try {
    if (typeof iss !== 'string') throw new FederationRefused('credential', 'iss is missing');
    if (typeof header.kid !== 'string') throw new FederationRefused('credential', 'the header names no kid');
    const { jwk, trust } = await federation.issuerKey(iss, header.kid, anchorIds);
    const key = typeof header.alg === 'string' ? ecPublicKey(jwk as Record<string, unknown>, header.alg) : undefined;
    if (!key) throw new FederationRefused('credential key', `key ${header.kid} does not fit alg ${String(header.alg)}`);
    return { key, authority: { type: 'openid_federation', values: [trust.anchor] } };
  } catch (err) {
    if (err instanceof FederationRefused) throw reject(`untrusted issuer: OpenID Federation: ${err.message}`);
    throw err;
  }
}

/** The key that must verify the credential's issuer signature, from the trust that admits its issuer. */
export async function trustedIssuerKey(presentation: string, context: PresentationContext): Promise<TrustedIssuerKey> {
  const { header, payload } = issuerJwtParts(presentation);
  const federation = context.federation;
  const mode = federation?.mode ?? 'lote-only';
  const anchorIds = context.federationAnchors ?? federation?.trustAnchors.map((anchor) => anchor.entityId) ?? [];
  if (context.federationAnchors && !federation)
    throw reject(
      'untrusted issuer: the query trusts OpenID Federation anchors, and the tenant has no federation settings (federation in PUT /api/issuer/config)',
    );
  if (mode === 'lote-only') {
    if (context.federationAnchors)
      throw reject('untrusted issuer: the query trusts OpenID Federation anchors, and the tenant federation mode is lote-only');
    return { key: loteKey(header.x5c, context) };
  }
  if (mode === 'federation-only') return federationKey(header, payload.iss, anchorIds, context);
  // hybrid: federation first; LoTE decides when the issuer does not resolve (or no anchor applies).
  if (anchorIds.length === 0) return { key: loteKey(header.x5c, context) };
  try {
    return await federationKey(header, payload.iss, anchorIds, context);
  } catch (federationRefusal) {
    if (!(federationRefusal instanceof PresentationRejected)) throw federationRefusal;
    try {
      return { key: loteKey(header.x5c, context) };
    } catch (loteRefusal) {
      const reason = loteRefusal instanceof Error ? loteRefusal.message : String(loteRefusal);
      throw reject(`${federationRefusal.message}; LoTE: ${reason}`);
    }
  }
}

/**
 * For a credential accepted through an OpenID Federation chain: whether a status list signer's
 * certificate holds a key of the issuer's resolved openid_credential_issuer metadata (the chain, cached,
 * is the one the credential was accepted through). Undefined for credentials trusted otherwise.
 */
export function federationStatusSigner(
  credential: { issuer: string; authority?: TrustedIssuerKey['authority'] },
  context: Pick<PresentationContext, 'federation'>,
): ((certificate: string) => Promise<boolean>) | undefined {
  const { authority } = credential;
  const federation = context.federation;
  if (!authority || !federation) return undefined;
  return async (certificate) => {
    let keys: unknown[] = [];
    try {
      const issuerMetadata = (await federation.resolve(credential.issuer, authority.values)).metadata.openid_credential_issuer;
      const jwks = isJsonObject(issuerMetadata) ? issuerMetadata.jwks : undefined;
      keys = isJsonObject(jwks) && Array.isArray(jwks.keys) ? jwks.keys : [];
    } catch (err) {
      if (err instanceof FederationRefused) return false;
      throw err;
    }
    const signer = ecThumbprint(certificateKey(certificate).export({ format: 'jwk' }) as Record<string, unknown>);
    return keys.some((key) => isJsonObject(key) && key.kty === 'EC' && ecThumbprint(key) === signer);
  };
}
