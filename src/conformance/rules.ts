// What the haip-1.0 profile refuses when something is created or changed: each function looks at one
// kind of thing (issuer settings, a credential configuration, a presentation configuration, a
// presentation request) and answers the broken rules as field errors. Pure: the caller reads the
// key chains involved (in its own transaction) and passes them in.
import { formatOf } from '../formats/index.js';
import { leafIsSelfSigned as pemLeafIsSelfSigned } from '../key-chains/checks.js';
import { parsePemChain } from '../platform/crypto/x509.js';
import type { FieldError } from '../platform/http/problem.js';
import { RULES, ruleError } from './profile.js';

/** The part of a key chain the rules look at: what wallets see of it. */
export interface ChainFacts {
  id: string;
  algorithm: string;
  /** PEM, the leaf first. */
  activeCertificate: string;
}

/** The leaf a wallet gets in x5c is self-signed (a standalone chain, or an imported self-signed certificate). */
export function leafIsSelfSigned(chain: ChainFacts): boolean {
  return !parsePemChain(chain.activeCertificate).length || pemLeafIsSelfSigned(chain.activeCertificate);
}

const SELF_SIGNED = (chain: ChainFacts) =>
  `key chain '${chain.id}' has a self-signed certificate: use a key chain of type internalChain (a tenant root CA issues the leaf) or an imported CA-issued chain`;

export interface SettingsFacts {
  walletAttestationRequired: boolean;
  dpopRequired: boolean;
}

export function settingsViolations(settings: SettingsFacts): FieldError[] {
  const errors: FieldError[] = [];
  if (!settings.walletAttestationRequired)
    errors.push(ruleError(RULES.walletAttestation, 'body.walletAttestationRequired', 'must be true in profile haip-1.0'));
  if (!settings.dpopRequired) errors.push(ruleError(RULES.dpop, 'body.dpopRequired', 'must be true in profile haip-1.0'));
  return errors;
}

/** A credential configuration as the rules see it (its stored document). */
export interface CredentialConfigFacts {
  config: { format: string; keyAttestationsRequired?: object | null };
  keyBinding: boolean;
  statusManagement: boolean;
  lifeTime: number | null;
  sdJwtTrustFormat: string;
  iaeActions: { type: string; responseMode?: string }[] | null;
}

/**
 * `signer`: the chain that signs its credentials; `statusListSigner`: the one that signs its status
 * lists (undefined while it has none).
 */
export function credentialConfigViolations(
  doc: CredentialConfigFacts,
  chains: { signer?: ChainFacts; statusListSigner?: ChainFacts },
): FieldError[] {
  const errors: FieldError[] = [];
  const attested = doc.config.keyAttestationsRequired != null;
  if (doc.keyBinding && !attested)
    errors.push(
      ruleError(
        RULES.keyAttestation,
        'body.config.keyAttestationsRequired',
        'must be set, since the configuration binds keys (keyBinding)',
      ),
    );
  if (!doc.keyBinding && attested)
    errors.push(ruleError(RULES.keyBindingForAttestation, 'body.keyBinding', 'must be true while config.keyAttestationsRequired is set'));
  // Which format-specific rules bind the configuration its format declares.
  const bound = formatOf(doc.config.format)?.haip?.requirements ?? [];
  if (bound.includes(RULES.sdJwtValidity.id) && !doc.statusManagement && doc.lifeTime === null)
    errors.push(ruleError(RULES.sdJwtValidity, 'body.lifeTime', 'set lifeTime (exp) or statusManagement (a status list entry)'));
  if (bound.includes(RULES.sdJwtX5c.id) && doc.sdJwtTrustFormat !== 'x5c')
    errors.push(ruleError(RULES.sdJwtX5c, 'body.sdJwtTrustFormat', 'must be x5c: HAIP mandates X.509 key resolution'));
  if (chains.signer && leafIsSelfSigned(chains.signer))
    errors.push(ruleError(RULES.sdJwtX5c, 'body.keyChainId', SELF_SIGNED(chains.signer)));
  if (doc.statusManagement && chains.statusListSigner && leafIsSelfSigned(chains.statusListSigner))
    errors.push(ruleError(RULES.statusListX5c, 'body.statusListSigner', SELF_SIGNED(chains.statusListSigner)));
  (doc.iaeActions ?? []).forEach((action, i) => {
    if (action.type === 'openid4vp-presentation' && action.responseMode === 'iae_post')
      errors.push(ruleError(RULES.responseEncryption, `body.iaeActions.${i}.responseMode`, 'must be iae_post.jwt (encrypted)'));
  });
  return errors;
}

/** The access key chain that signs a configuration's requests (named, or the tenant's default). */
export function requestSignerViolations(signer: ChainFacts, field: string): FieldError[] {
  const errors: FieldError[] = [];
  if (leafIsSelfSigned(signer)) errors.push(ruleError(RULES.requestX5c, field, SELF_SIGNED(signer)));
  if (signer.algorithm !== 'ES256')
    errors.push(ruleError(RULES.requestEs256, field, `key chain '${signer.id}' signs with ${signer.algorithm}, not ES256`));
  return errors;
}

/** Whose certificates wallets see by default: each usage type with the rule a self-signed chain would break. */
const DEFAULT_SIGNERS = { attestation: RULES.sdJwtX5c, statusList: RULES.statusListX5c, access: RULES.requestX5c } as const;

/**
 * A key chain that is (or stays) a default of its usage type after a change: the configurations
 * without a chain of their own sign with it. A certificate given for a chain that is not a default
 * is judged where a configuration names the chain.
 */
export function defaultChainViolations(chain: ChainFacts & { usageType: string; default: boolean }, field: string): FieldError[] {
  const rule = DEFAULT_SIGNERS[chain.usageType as keyof typeof DEFAULT_SIGNERS];
  if (!rule || !chain.default || !leafIsSelfSigned(chain)) return [];
  return [ruleError(rule, field, `${SELF_SIGNED(chain)}; it would be the default ${chain.usageType} key chain`)];
}

/** The choices a presentation request may make (POST /api/verifier/offer). */
export function presentationRequestViolations(input: { responseMode?: string; clientIdPrefix?: string }): FieldError[] {
  const errors: FieldError[] = [];
  if (input.responseMode === 'direct_post')
    errors.push(ruleError(RULES.responseEncryption, 'body.responseMode', 'must be direct_post.jwt (the default) in profile haip-1.0'));
  if (input.clientIdPrefix && input.clientIdPrefix !== 'x509_hash')
    errors.push(ruleError(RULES.x509Hash, 'body.clientIdPrefix', 'must be x509_hash (the default) in profile haip-1.0'));
  return errors;
}
