// The seam for features that other branches of HAIP 1.0 conformance (issue 39) bring: each
// requirement that depends on one reads it here. On this version they are absent, and the report
// says not-met with the reason; when a feature lands, the one line that names it becomes true (and
// the check may then look at the tenant's live state, see requirements.ts). Scopes and signed issuer
// metadata have landed: their requirements judge the live state directly.
export interface ConformanceFeatures {
  /** DCQL trusted_authorities of type aki (OpenID4VP 1.0 section 6.1.1.1) in the verifier. */
  akiTrustedAuthorities: boolean;
  /** Same-device responses released only with the response_code of the redirect (OpenID4VP 1.0 section 13.3). */
  responseCode: boolean;
}

export const FEATURES: ConformanceFeatures = {
  akiTrustedAuthorities: false,
  responseCode: false,
};
