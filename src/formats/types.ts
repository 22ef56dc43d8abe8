// What a credential format brings to the service: each format is a folder under src/formats/ that
// exports one CredentialFormat, and the registry (index.ts) is the only place that lists them.
import type { DcqlCredentialPresentation } from 'dcql';
import type { JWK } from 'jose';
import type { Signer } from '../key-chains/signing.js';
import type { FieldError } from '../platform/http/problem.js';
import type { StatusListSignerQuestion } from '../trust/framework.js';
import type { PresentationContext } from './presentation-context.js';
import type { SchemaClaim, SchemaNode } from './schema-claims.js';

/**
 * What a format reads of a credential configuration's field definitions. Configurations are defined
 * above the formats (src/credential-configs/), whose FieldDefinition has these members and more.
 */
export interface FormatField {
  path: (string | number | null)[];
  type: string;
  disclosable?: boolean;
  namespace?: string;
  children?: FormatField[] | null;
}

/** What a format reads of a credential configuration. */
export interface ConfiguredCredential {
  id: string;
  config: { format: string; docType?: string; vcIssuer?: 'x5c' | 'did:web' };
  fields: FormatField[];
  /** Validity of issued credentials in seconds; null: no expiry. */
  lifeTime?: number | null;
  sdJwtTrustFormat?: 'x5c' | 'federation' | null;
}

/** What a format checks of a configuration as the request gives it (docType and vct name its type). */
export interface ConfigurationTypeFields {
  /** A string, the type metadata itself, or null. */
  vct?: unknown;
  config: { docType?: string };
  statusManagement?: boolean;
}

/** One credential to issue: the claims (already checked against the configuration) for one holder key. */
export interface IssueRequest {
  config: ConfiguredCredential;
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
  /** The credential's issuance time (iat, the MSO's signed and validFrom). */
  issuedAt: Date;
}

/** How a format names the type of its credentials (a vct, a document type) in each document that carries it. */
export interface CredentialTypeNames {
  /** A configuration's type: the vct given (configured, else the configuration's own URL), or what the configuration names. */
  of(config: ConfiguredCredential, vct: () => string): string | undefined;
  /** Where a configuration names it, for messages. */
  configField: string;
  /** The member naming it in the credential issuer metadata and in a resolved schema metadata credential. */
  member: string;
  /** The member's value in the credential issuer metadata when it is not the type itself (jwt_vc_json's credential_definition). */
  metadataValue?(type: string): unknown;
  /** The member of a TS11 SchemaMeta entry's meta naming it. */
  schemaMetaMember: string;
  /** The values of a SchemaMeta entry's meta that may name it, in the order they are tried. */
  schemaMetaCandidates(meta: Record<string, unknown>): unknown[];
  /** The meta of a DCQL credential query asking for this type (OpenID4VP 1.0 appendix B). */
  dcqlMeta(type: string): Record<string, unknown>;
}

/** A format's part of a credential configuration's entry in the credential issuer metadata (OpenID4VCI 1.0 appendix A). */
export interface IssuerMetadataPart {
  /** credential_signing_alg_values_supported's value for the signing key's JOSE algorithm. */
  signingAlgorithm(jwsAlgorithm: string): string | number | undefined;
  /** cryptographic_binding_methods_supported. */
  bindingMethods: string[];
}

/**
 * Where a configuration's fields put their claims in the credential, and which claim names the format
 * keeps for itself. Every member is optional: a format without them has flat claims, all free.
 */
export interface ClaimsLayout {
  /** The claims are keyed by namespace first: every top-level field names its namespace and its children inherit it. */
  namespaced?: boolean;
  /** Where in the credential the fields' claims are (jwt_vc_json: credentialSubject): the start of their claim paths in metadata and DCQL. */
  pathPrefix?: string[];
  /** Why a top-level claim name is the format's own, not a field's to declare; undefined when a field may declare it. */
  reservedTopLevel?(name: string): string | undefined;
  /** Why a claim name is the format's own at any depth of a field's path; undefined when a field may declare it. */
  reservedAnywhere?(name: string): string | undefined;
}

/** How a version-4 configuration file of this format maps to version-5 fields (src/config-files/). */
export interface Version4Mapping {
  /**
   * 'disclosable': version 4's disclosureFrame decides fields[].disclosable (what it omits was not
   * disclosable). { dropped }: every claim is selectively disclosable by nature, so a disclosureFrame
   * is dropped, and `dropped` says why in the conversion's changes.
   */
  disclosureFrame: 'disclosable' | { dropped: string };
}

/**
 * Where HAIP 1.0 (OpenID4VC High Assurance Interoperability Profile) profiles the format: the ids of
 * its requirements, as src/conformance names them, that bind this format's credential configurations.
 */
export interface HaipProfile {
  requirements: readonly string[];
}

/** A verified credential as DCQL satisfaction reads it (its claims JSON by origin). */
export interface VerifiedForDcql {
  format: string;
  vct?: string;
  docType?: string;
  /** W3C VC: the credential's type values. */
  types?: string[];
  /** SD-JWT: the disclosed claims; mdoc: claims by namespace; W3C VC: the credential. */
  claims: Record<string, unknown>;
}

/** A format; `Verified` is what its verifier returns of each credential a presentation proves. */
export interface CredentialFormat<Verified = unknown> {
  /** The format identifier of OpenID4VCI and OpenID4VP (`format` in configurations and DCQL). */
  id: string;
  type: CredentialTypeNames;
  issuerMetadata: IssuerMetadataPart;
  /** Where fields put their claims; absent: flat claims, every name free. */
  claimsLayout?: ClaimsLayout;
  /** Absent: the format did not exist in version 4, so no version-4 configuration file names it. */
  version4?: Version4Mapping;
  /**
   * Whether the issuer hosts type metadata for a configuration whose type is a document rather than a
   * URI (SD-JWT VC type metadata at the configuration's types URL).
   */
  typeMetadata?: boolean;
  /**
   * Whether its presentations can be embedded in another protocol's step (interactive authorization):
   * holder binding by audience and nonce alone, with no handover of the carrying protocol (an mdoc's
   * session transcript would need one).
   */
  embeddable?: boolean;
  /** Absent: HAIP 1.0 does not profile the format. */
  haip?: HaipProfile;
  /** The id of the DCQL credential query built for this format from schema metadata. */
  dcqlQueryId: string;
  /** The claims a JSON Schema of this format's claims names; throws a reason when the schema is unusable. */
  claimsOfSchema(schema: SchemaNode): SchemaClaim[];
  /** The rules a configuration of this format obeys beyond its schema's shape; errors name fields as the request does. */
  configurationProblems(doc: ConfigurationTypeFields): FieldError[];
  /** The credential as the dcql library reads a presentation of it (without the trusted authority it matched). */
  dcqlPresentation(verified: VerifiedForDcql): DcqlCredentialPresentation;
  /** The verifier's vp_formats_supported entry for this format, in a request object's client_metadata. */
  vpFormatSupported: Record<string, unknown>;
  /** The credential, signed by `signer`. */
  issue(request: IssueRequest, signer: Signer): Promise<string>;
  /** The credentials one presentation proves; rejects with PresentationRejected. */
  verify(presentation: string, context: PresentationContext): Promise<Verified[]>;
  /**
   * The credential as a trust framework reads it when judging its status list signer (its issuer, and
   * the OpenID Federation anchor it was accepted through). Absent: the signer is judged by its
   * certificate chain alone.
   */
  statusListSubject?(verified: Verified): StatusListSignerQuestion['credential'];
}
