// What every grant of the token endpoint is given: the issuer, the wallet's request, and its DPoP key.
import type { OnceInsert } from '../../platform/db/values.js';
import type { WalletAttestation } from '../authorization/wallet-attestation.js';
import type { ClientRequest } from '../client-request.js';
import type { Issuer } from '../issuers.js';
import type { TokenResponse } from './session-tokens.js';

export type TokenRequest = ClientRequest;

export interface GrantCall<G> {
  issuer: Issuer;
  request: TokenRequest;
  grant: G;
  /** The client attestation the request carried, verified; undefined when it sent none. */
  attested: WalletAttestation | undefined;
  /**
   * The statement that remembers the client attestation proof's jti, when the grant sends it with its
   * own statement (the authorization code grant does; it refuses the proof when it added nothing).
   * Undefined when the endpoint remembered it already, or there was no attestation.
   */
  attestationReplay?: OnceInsert;
  /** Verifies the request's DPoP proof, if any (required when the issuer says so); its key's thumbprint. */
  dpopKey(): Promise<string | undefined>;
  /**
   * dpopKey without remembering the proof's jti: its key and the statement that remembers it, for a
   * grant that sends it with its own read (then refusing the proof when that statement added nothing).
   */
  dpopProof(): { thumbprint: string; replay: OnceInsert } | undefined;
}

export interface TokenGrant<G> {
  redeem(call: GrantCall<G>): Promise<TokenResponse>;
}
