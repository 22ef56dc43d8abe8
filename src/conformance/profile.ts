// The HAIP 1.0 rules the haip-1.0 profile (an issuer setting, see issuance/settings/profile.ts)
// enforces when something is created or changed. A refusal names the rule and its section, so an
// operator can read what failed in the profile itself (OpenID4VC HAIP 1.0, final).
import type { FieldError } from '../platform/http/problem.js';

/** A rule the profile enforces: its id, the HAIP 1.0 section that states it, and what it asks. */
export interface ProfileRule {
  id: string;
  section: string;
  rule: string;
}

const rule = (id: string, section: string, text: string): ProfileRule => ({ id, section, rule: text });

export const RULES = {
  walletAttestation: rule('wallet-attestation', '4.4.1', 'issuers require wallet (client) attestation at PAR and the token endpoint'),
  dpop: rule('dpop', '4', 'access tokens are sender-constrained with DPoP'),
  keyAttestation: rule('key-attestation', '4.5.1', 'a configuration that binds keys requires a key attestation'),
  keyBindingForAttestation: rule('key-binding', '4.5.1', 'key attestations attest keys that the credential is bound to'),
  sdJwtValidity: rule('sd-jwt-exp-or-status', '6.1', 'every SD-JWT VC carries a status list entry or an exp claim'),
  sdJwtX5c: rule('sd-jwt-x5c', '6.1.1', 'an SD-JWT VC carries its signing certificate in x5c, not self-signed'),
  statusListX5c: rule('status-list-x5c', '6.1', 'a status list token is signed with a certificate in x5c that is not self-signed'),
  requestX5c: rule('request-x5c', '5', 'a signed presentation request is signed with a certificate that is not self-signed'),
  requestEs256: rule('request-es256', '7', 'presentation requests are signed with ES256, which every wallet validates'),
  x509Hash: rule('x509-hash', '5', 'signed presentation requests use the client identifier prefix x509_hash'),
  responseEncryption: rule('direct-post-jwt', '5.1', 'presentation responses are encrypted (response mode direct_post.jwt)'),
} as const;

/** The field error of a broken rule: the message starts with the section and the rule's id. */
export const ruleError = (broken: ProfileRule, field: string, detail: string): FieldError => ({
  field,
  message: `HAIP 1.0 section ${broken.section} (${broken.id}: ${broken.rule}): ${detail}`,
});
