// A wallet's calls as the endpoints take them: of the authorization server (PAR, token endpoint) the
// form body, the URL a DPoP proof must name, the DPoP proof and the client attestation headers; of a
// resource endpoint (credential, deferred credential, notification) its access token besides.
import { invalidClient } from './errors.js';

/** The headers of attestation-based client authentication (draft-ietf-oauth-attestation-based-client-auth), as fastify names them (lower case). */
const ATTESTATION_HEADER = 'oauth-client-attestation';
const POP_HEADER = 'oauth-client-attestation-pop';

export interface AttestationHeaders {
  attestation?: string;
  pop?: string;
}

/** The attestation headers of a request; each at most once (the draft allows precisely one of each). */
export function attestationHeaders(headers: Record<string, string | string[] | undefined>): AttestationHeaders {
  const one = (name: string) => {
    const value = headers[name];
    if (Array.isArray(value)) throw invalidClient(`send ${name} once`);
    return value;
  };
  const attestation = one(ATTESTATION_HEADER);
  const pop = one(POP_HEADER);
  return { ...(attestation !== undefined && { attestation }), ...(pop !== undefined && { pop }) };
}

export interface ClientRequest {
  tenantId: string;
  body: Record<string, unknown>;
  dpop?: string;
  /** The URL the wallet called, for the DPoP htu check. */
  url: string;
  /** The client attestation headers, when the wallet sent them. */
  attestation: AttestationHeaders;
  /** The caller's address (behind a proxy, from X-Forwarded-For when TRUST_PROXY says so). */
  address: string;
}

/** A request to a wallet resource endpoint, as the routes hand it over. */
export interface ResourceRequest {
  tenantId: string;
  authorization?: string;
  dpop?: string;
  url: string;
  body: Record<string, unknown>;
}
