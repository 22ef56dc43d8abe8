// A wallet's call of the authorization server (PAR, token endpoint) as the endpoints take it: the
// form body, the URL a DPoP proof must name, the DPoP proof and the client attestation headers.
import type { AttestationHeaders } from './authorization/wallet-attestation.js';

export interface ClientRequest {
  tenantId: string;
  body: Record<string, unknown>;
  dpop?: string;
  /** The URL the wallet called, for the DPoP htu check. */
  url: string;
  /** The client attestation headers, when the wallet sent them. */
  attestation: AttestationHeaders;
}
