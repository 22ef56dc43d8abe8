// ISO 18013-5 mdoc (`mso_mdoc`). Its issuing and verifying code loads on first use.
import type { DcqlMdocCredential } from 'dcql';
import type { FieldError } from '../../platform/http/problem.js';
import { lazy } from '../../platform/lazy.js';
import type { CredentialFormat } from '../types.js';
import { mdocClaims } from './schema-claims.js';

const issuing = lazy(() => import('./issue.js'));
const verifying = lazy(() => import('./verify.js'));

/** COSE algorithm identifiers that OpenID4VCI 1.0 uses for mso_mdoc signing algorithms. */
const COSE_ALGORITHMS: Record<string, number> = { ES256: -7, ES384: -35, ES512: -36 };

export const msoMdoc = {
  id: 'mso_mdoc' as const,
  type: {
    of: (config) => config.config.docType,
    configField: 'config.docType',
    member: 'doctype',
    schemaMetaMember: 'doctype_value',
    schemaMetaCandidates: (meta) => [meta.doctype_value, meta.doctype],
    dcqlMeta: (doctype) => ({ doctype_value: doctype }),
  },
  issuerMetadata: { signingAlgorithm: (algorithm) => COSE_ALGORITHMS[algorithm], bindingMethods: ['cose_key'] },
  // ISO 18013-5: data elements live in namespaces (org.iso.18013.5.1 for the mDL).
  claimsLayout: { namespaced: true },
  version4: { disclosureFrame: { dropped: 'every mdoc data element is selectively disclosable' } },
  // HAIP 1.0 section 5.3.1: revocation by a mechanism of ISO/IEC 18013-5.
  haip: { requirements: ['mdoc-revocation'] },
  dcqlQueryId: 'mso_mdoc',
  claimsOfSchema: mdocClaims,
  configurationProblems(doc) {
    const errors: FieldError[] = [];
    if (!doc.config.docType) errors.push({ field: 'body.config.docType', message: 'is required when config.format is mso_mdoc' });
    if (doc.vct !== null) errors.push({ field: 'body.vct', message: 'is for dc+sd-jwt only; an mdoc has config.docType' });
    return errors;
  },
  dcqlPresentation: (verified) => ({
    credential_format: 'mso_mdoc',
    doctype: verified.docType as string,
    namespaces: verified.claims as DcqlMdocCredential['namespaces'],
    cryptographic_holder_binding: true,
  }),
  vpFormatSupported: { issuerauth_alg_values: [-7, -35, -36], deviceauth_alg_values: [-7, -35, -36] },
  async issue({ config, claims, holderJwk, status, issuedAt }, signer) {
    const { issueMdoc } = await issuing();
    const docType = config.config.docType as string;
    return issueMdoc({ docType, fields: config.fields, claims, holderJwk, lifetimeSeconds: config.lifeTime, status, issuedAt }, signer);
  },
  // A DeviceResponse may hold several documents.
  verify: async (presentation, context) => (await verifying()).verifyMdocPresentation(presentation, context),
} satisfies CredentialFormat;
