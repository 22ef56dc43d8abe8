// What every format verifier checks a presentation against: the request it answers.
import type { JWK } from 'jose';
import type { DidKeyResolver } from '../dids/web.js';
import type { FederationTrust } from '../trust/federation/trust.js';

export interface PresentationContext {
  /** The request's client_id: the KB-JWT audience unless `audiences` says otherwise. */
  clientId: string;
  /**
   * The KB-JWT audiences accepted when the client_id is not the audience: over the DC API
   * `origin:<origin>` (OpenID4VP 1.0 A.4); at interactive authorization those of its endpoint.
   */
  audiences?: string[];
  nonce: string;
  trustedCertificates: string[];
  /** The tenant's OpenID Federation trust; absent when it takes part in no federation. */
  federation?: FederationTrust;
  /** The trust anchors the credential query names (trusted_authorities of type openid_federation); absent when it names none. */
  federationAnchors?: string[];
  /** The request's transaction_data, base64url-encoded as sent. */
  transactionData: string[];
  now: Date;
  /** The request's response_uri: part of the mdoc session transcript. */
  responseUri: string;
  /** The verifier's public encryption key, when the response was encrypted (direct_post.jwt, dc_api.jwt). */
  encryptionJwk?: JWK;
  /** Resolves did:web issuers' keys (through the outbound client); absent: a did:web issuer is refused. */
  dids?: DidKeyResolver;
  /** Over the DC API: the browser's origin, which replaces client_id and response_uri in the mdoc handover. */
  origin?: string;
}
