// What a credential format brings to the service: each format is a folder under src/formats/ that
// exports one CredentialFormat, and the registry (index.ts) is the only place that lists them.
import type { JWK } from 'jose';
import type { CredentialConfiguration } from '../credential-configs/service.js';
import type { Signer } from '../key-chains/signing.js';
import type { VerifiedMdoc } from './mso-mdoc/verify.js';
import type { PresentationContext } from './presentation-context.js';
import type { VerifiedSdJwt } from './sd-jwt-vc/verify.js';

/** One credential to issue: the claims (already checked against the configuration) for one holder key. */
export interface IssueRequest {
  config: CredentialConfiguration;
  claims: Record<string, unknown>;
  /** Absent: the credential is bound to no key. */
  holderJwk?: JWK;
  /** The Token Status List entry of this credential, when the configuration manages status. */
  status?: { status_list: { idx: number; uri: string } };
  /** The credential issuer identifier. */
  issuer: string;
  /** The issuer's OpenID Federation entity identifier when its settings name one other than the credential issuer. */
  federationEntityId?: string;
  /** The credential type the issuer's type metadata describes (a configured vct, else its own URL). */
  vct: string;
}

/** A credential one presentation proves, as the format read and verified it. */
export type VerifiedPresentation = VerifiedSdJwt | VerifiedMdoc;

export interface CredentialFormat {
  /** The format identifier of OpenID4VCI and OpenID4VP (`format` in configurations and DCQL). */
  id: string;
  /** The credential, signed by `signer`. */
  issue(request: IssueRequest, signer: Signer): Promise<string>;
  /** The credentials one presentation proves; rejects with PresentationRejected. */
  verify(presentation: string, context: PresentationContext): Promise<VerifiedPresentation[]>;
}
