// The signed authorization request (JAR, RFC 9101) of OpenID4VP 1.0, fetched by request_uri, or
// handed to the browser's Digital Credentials API (appendix A.3.2, protocol openid4vp-v1-signed).
import { createHash } from 'node:crypto';
import type { JWK } from 'jose';
import { allFormats } from '../../formats/index.js';
import type { Signer } from '../../key-chains/signing.js';
import { signJwtWith } from '../../key-chains/signing.js';

export type ClientIdPrefix = 'x509_hash' | 'x509_san_dns' | 'openid_federation';
export type ResponseMode = 'direct_post' | 'direct_post.jwt';
/** Appendix A.2: the response comes back through the DC API, encrypted (dc_api.jwt). */
export type DcApiResponseMode = 'dc_api.jwt';
/**
 * OpenID4VCI interactive authorization: the response comes back in the wallet's next request to that
 * endpoint (encrypted with .jwt): ia_post at the authorization challenge endpoint (the draft of June
 * 2026), iae_post at the interactive authorization endpoint (the drafts before).
 */
export type EmbeddedResponseMode = 'iae_post' | 'iae_post.jwt' | 'ia_post' | 'ia_post.jwt';

/** The client identifier the access certificate stands for (OpenID4VP 1.0 section 5.9). */
export function clientIdFor(prefix: 'x509_hash' | 'x509_san_dns', signer: Signer, publicUrl: string): string {
  if (prefix === 'x509_san_dns') return `x509_san_dns:${new URL(publicUrl).hostname}`;
  const leaf = Buffer.from(signer.x5c[0] as string, 'base64');
  return `x509_hash:${createHash('sha256').update(leaf).digest('base64url')}`;
}

export interface RequestObjectInput {
  clientId: string;
  responseMode: ResponseMode | DcApiResponseMode | EmbeddedResponseMode;
  /** Absent over the DC API (the response returns through the browser). */
  responseUri?: string;
  nonce: string;
  /** Absent over the DC API: appendix A.2 defines no `state`. */
  state?: string;
  dcqlQuery: Record<string, unknown>;
  /** The session's ephemeral key for direct_post.jwt and dc_api.jwt responses. */
  encryptionJwk?: JWK;
  transactionData?: Record<string, unknown>[];
  walletNonce?: string;
  /** Appendix A.2: REQUIRED in signed requests over the DC API. */
  expectedOrigins?: string[];
  /** OpenID4VCI interactive authorization (drafts after expected_origins): the endpoint the response must go to. */
  expectedUrl?: string;
  /** Attestations about the verifier (section 5.1), e.g. its registration certificate. */
  verifierInfo?: VerifierInfo[];
  lifetimeSeconds: number;
  /**
   * Prefix openid_federation (OpenID4VP 1.0 section 5.9.3): the verifier's trust chain, carried in the
   * trust_chain header (OpenID Federation 1.0 section 4.3); the key is named by kid (no x5c), and the
   * wallet takes the verifier's metadata from the chain, so none is sent in client_metadata.
   */
  trustChain?: string[];
}

/** One verifier_info entry (OpenID4VP 1.0 section 5.1); without credential_ids it concerns every credential requested. */
export interface VerifierInfo {
  format: string;
  data: string | Record<string, unknown>;
  credential_ids?: string[];
}

const VP_FORMATS = Object.fromEntries(allFormats().map((format) => [format.id, format.vpFormatSupported]));

/** transaction_data entries travel base64url-encoded; their hashes are taken over that encoding. */
export const encodeTransactionData = (entries: Record<string, unknown>[]) =>
  entries.map((e) => Buffer.from(JSON.stringify(e)).toString('base64url'));

export function signRequestObject(signer: Signer, input: RequestObjectInput, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000);
  const payload = {
    iss: input.clientId,
    aud: 'https://self-issued.me/v2',
    iat,
    exp: iat + input.lifetimeSeconds,
    client_id: input.clientId,
    response_type: 'vp_token',
    response_mode: input.responseMode,
    ...(input.responseUri && { response_uri: input.responseUri }),
    nonce: input.nonce,
    ...(input.state && { state: input.state }),
    dcql_query: input.dcqlQuery,
    ...(!input.trustChain && {
      client_metadata: {
        vp_formats_supported: VP_FORMATS,
        ...(input.encryptionJwk && {
          jwks: { keys: [{ ...input.encryptionJwk, use: 'enc', alg: 'ECDH-ES' }] },
          encrypted_response_enc_values_supported: ['A128GCM', 'A256GCM'],
        }),
      },
    }),
    ...(input.transactionData?.length && { transaction_data: encodeTransactionData(input.transactionData) }),
    ...(input.walletNonce && { wallet_nonce: input.walletNonce }),
    ...(input.expectedOrigins && { expected_origins: input.expectedOrigins }),
    ...(input.expectedUrl && { expected_url: input.expectedUrl }),
    ...(input.verifierInfo?.length && { verifier_info: input.verifierInfo }),
  };
  if (input.trustChain) return signJwtWith(signer, { typ: 'oauth-authz-req+jwt', trust_chain: input.trustChain }, payload, { x5c: false });
  return signJwtWith(signer, { typ: 'oauth-authz-req+jwt' }, payload);
}
