// W3C Verifiable Credentials (`jwt_vc_json`): VCDM 2.0 credentials secured with JOSE, the holder a
// did:jwk or did:key, the issuer the credential issuer URL (x5c) or the tenant's did:web. Not yet:
// status (Bitstring Status List), ldp_vc / Data Integrity, VCDM 1.1's vc claim on issuance.
import type { DcqlW3cVcCredential } from 'dcql';
import type { FieldError } from '../../platform/http/problem.js';
import { sdJwtClaims } from '../sd-jwt-vc/schema-claims.js';
import type { CredentialFormat } from '../types.js';
import { issueVcJwt, VC_TYPE, type VcIssuerIdentifier } from './issue.js';
import { verifyVpJwt } from './verify.js';

/** The members of credentialSubject the service sets itself. */
const RESERVED_TOP_LEVEL = new Set(['id']);

export const w3cVc = {
  id: 'jwt_vc_json' as const,
  type: {
    // The type after VerifiableCredential: the configured vct, else the configuration's own URL.
    of: (_config, vct) => vct(),
    configField: 'vct',
    member: 'credential_definition',
    metadataValue: (type) => ({ type: [VC_TYPE, type] }),
    schemaMetaMember: 'type_values',
    schemaMetaCandidates: (meta) => [
      Array.isArray(meta.type_values) && Array.isArray(meta.type_values[0]) ? meta.type_values[0].at(-1) : undefined,
    ],
    dcqlMeta: (type) => ({ type_values: [[type]] }),
  },
  // did:key and did:jwk: credentialSubject.id names the proof's key; jwk: the same key, as a wallet that only knows JWKs sends it.
  issuerMetadata: { signingAlgorithm: (algorithm) => algorithm, bindingMethods: ['did:jwk', 'did:key', 'jwk'] },
  claimsLayout: {
    // Fields are the members of credentialSubject.
    pathPrefix: ['credentialSubject'],
    reservedTopLevel: (name) =>
      RESERVED_TOP_LEVEL.has(name) ? `'${name}' is set by the service: credentialSubject.id is the holder's DID` : undefined,
  },
  embeddable: false,
  dcqlQueryId: 'jwt_vc_json',
  claimsOfSchema: sdJwtClaims,
  configurationProblems(doc) {
    const errors: FieldError[] = [];
    if (doc.config.docType !== undefined)
      errors.push({ field: 'body.config.docType', message: 'is for mso_mdoc only; a W3C VC has vct as its type' });
    if (doc.vct !== null && doc.vct !== undefined && typeof doc.vct !== 'string')
      errors.push({ field: 'body.vct', message: 'must be a type URI for jwt_vc_json (type metadata documents are SD-JWT VC only)' });
    if (doc.statusManagement)
      errors.push({ field: 'body.statusManagement', message: 'is not supported for jwt_vc_json yet (no Bitstring Status List)' });
    return errors;
  },
  dcqlPresentation: (verified) => ({
    credential_format: 'jwt_vc_json',
    type: verified.types ?? [],
    claims: verified.claims as DcqlW3cVcCredential['claims'],
    cryptographic_holder_binding: true,
  }),
  vpFormatSupported: { alg_values: ['ES256', 'ES384', 'ES512'] },
  async issue({ config, claims, holderJwk, issuer, vct, issuedAt }, signer) {
    const issuerIdentifier: VcIssuerIdentifier = config.config.vcIssuer ?? 'x5c';
    return issueVcJwt({ issuer, issuerIdentifier, type: vct, claims, holderJwk, lifetimeSeconds: config.lifeTime, issuedAt }, signer);
  },
  verify: verifyVpJwt,
} satisfies CredentialFormat;
