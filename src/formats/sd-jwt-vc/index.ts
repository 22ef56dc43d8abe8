// SD-JWT VC (`dc+sd-jwt`), IETF SD-JWT-based Verifiable Credentials.
import type { DcqlSdJwtVcCredential } from 'dcql';
import { lazy } from '../../platform/lazy.js';
import type { CredentialFormat } from '../types.js';
import { sdJwtClaims } from './schema-claims.js';
import { type VerifiedSdJwt, verifySdJwtPresentation } from './verify.js';

const issuing = lazy(() => import('./issue.js'));

/** Claims that the service itself puts into every SD-JWT VC, or that SD-JWT reserves. */
const RESERVED_TOP_LEVEL = new Set(['iss', 'iat', 'nbf', 'exp', 'cnf', 'vct', 'vct#integrity', 'status']);
const RESERVED_ANYWHERE = new Set(['_sd', '_sd_alg', '...']);

export const sdJwtVc = {
  id: 'dc+sd-jwt' as const,
  type: {
    of: (_config, vct) => vct(),
    configField: 'vct',
    member: 'vct',
    schemaMetaMember: 'vct',
    schemaMetaCandidates: (meta) => [meta.vct, Array.isArray(meta.vct_values) ? meta.vct_values[0] : undefined],
    dcqlMeta: (vct) => ({ vct_values: [vct] }),
  },
  issuerMetadata: { signingAlgorithm: (algorithm) => algorithm, bindingMethods: ['jwk'] },
  claimsLayout: {
    reservedTopLevel: (name) => (RESERVED_TOP_LEVEL.has(name) ? `'${name}' is set by the service in every SD-JWT VC` : undefined),
    reservedAnywhere: (name) => (RESERVED_ANYWHERE.has(name) ? `'${name}' is reserved by SD-JWT` : undefined),
  },
  // Version 4 issued only what its disclosureFrame named as selectively disclosable.
  version4: { disclosureFrame: 'disclosable' },
  // HAIP 1.0 section 6.1 (compact serialization; exp, a status, or both) and 6.1.1 (x5c).
  haip: { requirements: ['sd-jwt-compact', 'sd-jwt-exp-or-status', 'sd-jwt-x5c'] },
  typeMetadata: true,
  embeddable: true,
  dcqlQueryId: 'dc_sd_jwt',
  claimsOfSchema: sdJwtClaims,
  configurationProblems: (doc) =>
    doc.config.docType !== undefined ? [{ field: 'body.config.docType', message: 'is for mso_mdoc only; an SD-JWT VC has vct' }] : [],
  dcqlPresentation: (verified) => ({
    credential_format: 'dc+sd-jwt',
    vct: verified.vct as string,
    claims: verified.claims as DcqlSdJwtVcCredential['claims'],
    cryptographic_holder_binding: true,
  }),
  vpFormatSupported: { 'sd-jwt_alg_values': ['ES256', 'ES384', 'ES512'], 'kb-jwt_alg_values': ['ES256', 'ES384', 'ES512'] },
  async issue({ config, claims, holderJwk, status, issuer, federationEntityId, vct, issuedAt }, signer) {
    const { issueSdJwtVc } = await issuing();
    const trustFormat = config.sdJwtTrustFormat ?? 'x5c';
    const iss = trustFormat === 'federation' ? (federationEntityId ?? issuer) : issuer;
    const lifetimeSeconds = config.lifeTime;
    return issueSdJwtVc(
      { issuer: iss, vct, claims, fields: config.fields, holderJwk, lifetimeSeconds, trustFormat, status, issuedAt },
      signer,
    );
  },
  verify: async (presentation, context) => [await verifySdJwtPresentation(presentation, context)],
  statusListSubject: ({ issuer, authority }: VerifiedSdJwt) => ({ issuer, ...(authority && { authority }) }),
} satisfies CredentialFormat;
