// The normative requirements of HAIP 1.0 that bind an issuer or a verifier, one entry each, and how
// each is judged on a tenant's live configuration. A judge is a small function of the tenant's facts:
// what the code always does is met with the reason; what a setting, configuration or key chain
// decides names the one that fails, by id. HAIP profiles SD-JWT VC and mdoc in sections of their own;
// which of those requirements bind a configuration its format declares (CredentialFormat.haip), and
// the texts below are HAIP's, naming its formats.
import type { CredentialConfiguration } from '../credential-configs/service.js';
import { formatIdsWith, formatOf } from '../formats/index.js';
import { HAIP_PROFILE } from '../issuance/settings/profile.js';
import type { IssuerSettings } from '../issuance/settings/service.js';
import type { ChainFacts } from './rules.js';

export type Status = 'met' | 'not-met' | 'not-applicable';
export interface Judgement {
  status: Status;
  detail: string;
}

export interface KeyChainFacts extends ChainFacts {
  usageType: string;
  default: boolean;
  /** Whether the leaf wallets get is self-signed, read once per report (each configuration names a chain). */
  selfSigned: boolean;
}

/** What the report judges: the tenant's configuration as it is now. */
export interface TenantFacts {
  settings: IssuerSettings;
  credentialConfigs: CredentialConfiguration[];
  presentationConfigs: { id: string; accessKeyChainId: string | null }[];
  keyChains: KeyChainFacts[];
  /** Trust anchors of wallet providers: walletProviders of the settings and walletIssuance entities of the trust lists. */
  walletProviderAnchors: number;
}

export interface Requirement {
  id: string;
  section: string;
  role: 'issuer' | 'verifier';
  requirement: string;
  judge: (facts: TenantFacts) => Judgement;
}

const met = (detail: string): Judgement => ({ status: 'met', detail });
const notMet = (detail: string): Judgement => ({ status: 'not-met', detail });
const notApplicable = (detail: string): Judgement => ({ status: 'not-applicable', detail });
const quoted = (ids: string[]) => ids.map((id) => `'${id}'`).join(', ');

/** Met when no item fails; else not-met naming the failing ones. Not applicable without items. */
function each<T extends { id: string }>(items: T[], fails: (item: T) => boolean, what: string, none: string, failing: string): Judgement {
  if (!items.length) return notApplicable(none);
  const bad = items.filter(fails).map((item) => item.id);
  return bad.length ? notMet(`${what} ${quoted(bad)}: ${failing}`) : met(`every ${what} (${items.length})`);
}

const chainOf = (facts: TenantFacts, id: string | null, usageType: string) =>
  facts.keyChains.find((chain) => (id ? chain.id === id : chain.default && chain.usageType === usageType));

/** The chain that signs a credential configuration's credentials. */
const credentialSigner = (facts: TenantFacts, config: CredentialConfiguration) => chainOf(facts, config.keyChainId, 'attestation');

/** The chain that signs the status lists of a configuration's credentials. */
const statusListSigner = (facts: TenantFacts, config: CredentialConfiguration) =>
  config.statusListSigner === 'issuer' ? credentialSigner(facts, config) : chainOf(facts, null, 'statusList');

/** Not self-signed, as wallets get it; a chain that cannot be found (deleted meanwhile) fails too. */
const selfSigned = (chain: KeyChainFacts | undefined) => !chain || chain.selfSigned;

/** Chains in use that fail `fails`, each named once with what uses it. */
function chainsFailing(uses: { user: string; chain: KeyChainFacts | undefined }[], fails: (chain: KeyChainFacts | undefined) => boolean) {
  return uses.filter((use) => fails(use.chain)).map((use) => `${use.user} (key chain '${use.chain?.id ?? 'none'}')`);
}

/** The configurations a format-specific requirement binds: those whose format declares it. */
const boundBy = (requirement: string, facts: TenantFacts) =>
  facts.credentialConfigs.filter((c) => formatOf(c.config.format)?.haip?.requirements.includes(requirement));
/** The formats a requirement binds, for its details. */
const formatsBoundBy = (requirement: string) => formatIdsWith((format) => format.haip?.requirements.includes(requirement)).join(' or ');
/** The formats HAIP profiles, for details. */
const haipFormats = (separator: string) => formatIdsWith((format) => format.haip).join(separator);
const keyBound = (facts: TenantFacts) => facts.credentialConfigs.filter((c) => c.keyBinding);
const inProfile = (facts: TenantFacts) => facts.settings.profile === HAIP_PROFILE;
const ALWAYS = 'always, in code';

/** External authorization servers run their own PAR and token endpoints: what they require is not ours to judge. */
const externalServers = ({ settings }: TenantFacts) => {
  const enabled = settings.authorizationServers.filter((s) => s.enabled).map((s) => s.issuer);
  return enabled.length ? `; not judged: the external authorization server(s) ${enabled.join(', ')}` : '';
};

export const HAIP_REQUIREMENTS: Requirement[] = [
  {
    id: 'vci-authorization-code',
    section: '4',
    role: 'issuer',
    requirement: 'Supports the authorization code flow',
    judge: ({ settings }) =>
      settings.builtinAuthorizationServerEnabled || settings.chainedAuthorizationServer?.enabled
        ? met('the built-in (or chained) authorization server authorizes')
        : notMet('builtinAuthorizationServerEnabled is false and no chained authorization server is enabled'),
  },
  {
    id: 'vci-format',
    section: '4',
    role: 'issuer',
    requirement: 'Issues SD-JWT VC or ISO mdoc',
    judge: ({ credentialConfigs }) =>
      credentialConfigs.length
        ? met(`${credentialConfigs.length} configuration(s), all ${haipFormats(' or ')}`)
        : notApplicable('the tenant has no credential configuration'),
  },
  {
    id: 'vci-pkce-s256',
    section: '4',
    role: 'issuer',
    requirement: 'PKCE with S256 (FAPI 2.0)',
    judge: () => met(`${ALWAYS}: PAR requires code_challenge with code_challenge_method S256`),
  },
  {
    id: 'vci-par',
    section: '4',
    role: 'issuer',
    requirement: 'Pushed authorization requests for the authorization endpoint',
    judge: () => met(`${ALWAYS}: require_pushed_authorization_requests is true; the authorization endpoint takes only a request_uri`),
  },
  {
    id: 'vci-iss-parameter',
    section: '4',
    role: 'issuer',
    requirement: 'The iss parameter in the authorization response (RFC 9207)',
    judge: () => met(`${ALWAYS}: authorization_response_iss_parameter_supported is true`),
  },
  {
    id: 'vci-dpop',
    section: '4',
    role: 'issuer',
    requirement: 'Sender-constrained access tokens with DPoP (RFC 9449), DPoP-Nonce handled',
    judge: ({ settings }) =>
      settings.dpopRequired
        ? met('dpopRequired is true: access tokens are DPoP-bound')
        : notMet('dpopRequired is false: bearer access tokens are accepted'),
  },
  {
    id: 'vci-credential-offer',
    section: '4, 4.2',
    role: 'issuer',
    requirement: 'Issuer-initiated issuance uses the Credential Offer (OpenID4VCI 1.0 section 4.1), same-device and cross-device',
    judge: () => met(`${ALWAYS}: offers are credential_offer_uri links, shown as a link or a QR code`),
  },
  {
    id: 'vci-batch-indicated',
    section: '4',
    role: 'issuer',
    requirement: 'Batch issuance is indicated by including or omitting batch_credential_issuance',
    judge: ({ settings }) =>
      met(
        settings.batchSize > 1
          ? `batch_credential_issuance with batch_size ${settings.batchSize}`
          : 'batchSize 1: the parameter is omitted',
      ),
  },
  {
    id: 'vci-as-metadata',
    section: '4.1',
    role: 'issuer',
    requirement: 'Authorization server metadata (RFC 8414)',
    judge: () => met(`${ALWAYS}: /.well-known/oauth-authorization-server of the issuer`),
  },
  {
    id: 'vci-issuer-metadata',
    section: '4.1',
    role: 'issuer',
    requirement: 'Credential issuer metadata retrieval (OpenID4VCI 1.0 section 12.2.2)',
    judge: () => met(`${ALWAYS}: /.well-known/openid-credential-issuer of the issuer`),
  },
  {
    id: 'vci-scope-per-configuration',
    section: '4.1, 4.2, 4.3',
    role: 'issuer',
    requirement: 'The metadata has a scope for every credential configuration, mapping to one credential type',
    // Every configuration gets one when saved (its id unless set; unique in the tenant, by the
    // database), so this reads met; it still looks at each, as wallets will.
    judge: (facts) =>
      each(facts.credentialConfigs, (c) => !c.config.scope, 'credential configuration', 'no credential configuration', 'no config.scope'),
  },
  {
    id: 'vci-signed-metadata',
    section: '4.1',
    role: 'issuer',
    requirement: 'Signed issuer metadata with x5c: the signing certificate not self-signed, the trust anchor not included',
    // Signed with the tenant's default attestation chain (src/issuance/metadata/routes.ts), whose
    // x5c leaves out the anchor: only a self-signed leaf can break it.
    judge: (facts) => {
      const chain = chainOf(facts, null, 'attestation');
      if (!chain) return notMet('the tenant has no default attestation key chain to sign it: Accept: application/jwt fails');
      return selfSigned(chain)
        ? notMet(`the default attestation key chain '${chain.id}' is self-signed`)
        : met(`Accept: application/jwt answers it signed with the default attestation key chain '${chain.id}', CA-issued`);
    },
  },
  {
    id: 'vci-nonce-endpoint',
    section: '4.1',
    role: 'issuer',
    requirement: 'nonce_endpoint in the metadata when a configuration binds keys',
    judge: (facts) =>
      keyBound(facts).length ? met(`${ALWAYS}: nonce_endpoint is published`) : notApplicable('no configuration binds keys'),
  },
  {
    id: 'vci-par-client-authentication',
    section: '4.3, 4.4.1',
    role: 'issuer',
    requirement: 'Wallets authenticate at the PAR endpoint with wallet attestation, as at the token endpoint',
    judge: (facts) =>
      facts.settings.walletAttestationRequired
        ? met(`walletAttestationRequired is true: PAR refuses requests without a client attestation${externalServers(facts)}`)
        : notMet('walletAttestationRequired is false: PAR accepts public clients'),
  },
  {
    id: 'vci-require-client-authentication',
    section: '4.4.1',
    role: 'issuer',
    requirement: 'Issuers require client authentication at the PAR and token endpoints, for every grant',
    judge: (facts) =>
      facts.settings.walletAttestationRequired
        ? met(
            `walletAttestationRequired is true: the token endpoint refuses every grant without a client attestation${externalServers(facts)}`,
          )
        : notMet('walletAttestationRequired is false: token_endpoint_auth_methods_supported includes none'),
  },
  {
    id: 'vci-wallet-attestation-x5c',
    section: '4.4.1',
    role: 'issuer',
    requirement: 'Wallet attestations are validated by their x5c chain (trust anchor excluded) to a trusted wallet provider',
    judge: ({ walletProviderAnchors }) =>
      walletProviderAnchors > 0
        ? met(`${walletProviderAnchors} wallet provider trust anchor(s); x5c must chain to one of them`)
        : notMet(
            'no wallet provider is trusted (walletProviders of the issuer settings, walletIssuance entities of the trust lists): every attestation is refused',
          ),
  },
  {
    id: 'vci-key-attestation',
    section: '4.5.1',
    role: 'issuer',
    requirement: 'Key attestations (jwt proof with key_attestation, attestation proof) where keys are bound',
    judge: (facts) =>
      each(
        keyBound(facts),
        (c) => c.config.keyAttestationsRequired == null,
        'key-bound credential configuration',
        'no configuration binds keys',
        'config.keyAttestationsRequired is not set',
      ),
  },
  {
    id: 'vci-key-attestation-x5c',
    section: '4.5.1',
    role: 'issuer',
    requirement: 'Key attestations are validated by x5c: the anchor not included, the signing certificate not self-signed',
    judge: ({ walletProviderAnchors }) =>
      walletProviderAnchors > 0
        ? met(`${ALWAYS}: the x5c of a key attestation must chain to a wallet provider trust anchor`)
        : notMet('no wallet provider is trusted: every key attestation is refused'),
  },
  {
    id: 'sd-jwt-compact',
    section: '6.1',
    role: 'issuer',
    requirement: 'SD-JWT VC in compact serialization',
    judge: (facts) =>
      boundBy('sd-jwt-compact', facts).length
        ? met(`${ALWAYS}: compact serialization`)
        : notApplicable(`no ${formatsBoundBy('sd-jwt-compact')} configuration`),
  },
  {
    id: 'sd-jwt-exp-or-status',
    section: '6.1',
    role: 'issuer',
    requirement: 'An SD-JWT VC whose validity is limited carries exp, a status claim, or both',
    judge: (facts) =>
      each(
        boundBy('sd-jwt-exp-or-status', facts),
        (c) => !c.statusManagement && c.lifeTime === null,
        `${formatsBoundBy('sd-jwt-exp-or-status')} configuration`,
        `no ${formatsBoundBy('sd-jwt-exp-or-status')} configuration`,
        'neither lifeTime (exp) nor statusManagement',
      ),
  },
  {
    id: 'sd-jwt-cnf-jwk',
    section: '6.1',
    role: 'issuer',
    requirement: 'cnf carries the holder key as jwk when the configuration requires key binding',
    judge: (facts) => (keyBound(facts).length ? met(`${ALWAYS}: cnf.jwk of the proof key`) : notApplicable('no configuration binds keys')),
  },
  {
    id: 'sd-jwt-status-list',
    section: '6.1',
    role: 'issuer',
    requirement: 'A status claim contains status_list; each credential has its own unpredictable index',
    judge: (facts) =>
      facts.credentialConfigs.some((c) => c.statusManagement)
        ? met(`${ALWAYS}: status.status_list, indexes from a keyed pseudorandom permutation`)
        : notApplicable('no configuration has statusManagement'),
  },
  {
    id: 'status-list-x5c',
    section: '6.1',
    role: 'issuer',
    requirement: 'Status list tokens carry x5c: the signing certificate not self-signed, the trust anchor not included',
    judge: (facts) => {
      const uses = facts.credentialConfigs
        .filter((c) => c.statusManagement)
        .map((c) => ({ user: `credential configuration '${c.id}'`, chain: statusListSigner(facts, c) }));
      if (!uses.length) return notApplicable('no configuration has statusManagement');
      const bad = chainsFailing(uses, selfSigned);
      return bad.length ? notMet(`self-signed status list signer: ${bad.join(', ')}`) : met('every status list signer is CA-issued');
    },
  },
  {
    id: 'sd-jwt-x5c',
    section: '6.1.1',
    role: 'issuer',
    requirement: 'An SD-JWT VC carries its signing certificate in x5c, not self-signed, without the trust anchor',
    judge: (facts) => {
      const configs = boundBy('sd-jwt-x5c', facts);
      if (!configs.length) return notApplicable(`no ${formatsBoundBy('sd-jwt-x5c')} configuration`);
      const federated = configs.filter((c) => c.sdJwtTrustFormat !== 'x5c').map((c) => c.id);
      if (federated.length) return notMet(`credential configuration ${quoted(federated)}: sdJwtTrustFormat is not x5c`);
      const bad = chainsFailing(
        configs.map((c) => ({ user: `credential configuration '${c.id}'`, chain: credentialSigner(facts, c) })),
        selfSigned,
      );
      return bad.length
        ? notMet(`self-signed signer: ${bad.join(', ')}`)
        : met(`every ${formatsBoundBy('sd-jwt-x5c')} configuration is signed by a CA-issued chain`);
    },
  },
  {
    id: 'mdoc-revocation',
    section: '5.3.1',
    role: 'issuer',
    requirement: 'An mdoc with MSO revocation uses a mechanism of ISO/IEC 18013-5 (second edition)',
    judge: (facts) =>
      boundBy('mdoc-revocation', facts).some((c) => c.statusManagement)
        ? met(`${ALWAYS}: the MSO status entry references a Token Status List (status_list idx and uri)`)
        : notApplicable(`no ${formatsBoundBy('mdoc-revocation')} configuration has statusManagement`),
  },
  {
    id: 'issuer-es256',
    section: '7',
    role: 'issuer',
    requirement: 'ES256 accepted for wallet attestations (and PoP), key attestations and jwt proofs',
    judge: () => met(`${ALWAYS}: ES256, ES384 and ES512 are accepted`),
  },
  {
    id: 'issuer-sha256',
    section: '8',
    role: 'issuer',
    requirement: 'SHA-256 digests in SD-JWT VC and mdoc',
    judge: () => met(`${ALWAYS}: _sd_alg sha-256; mdoc valueDigests SHA-256`),
  },
  {
    id: 'vp-format',
    section: '5',
    role: 'verifier',
    requirement: 'Verifies SD-JWT VC or ISO mdoc',
    judge: () => met(`${ALWAYS}: ${haipFormats(' and ')}`),
  },
  {
    id: 'vp-response-type',
    section: '5',
    role: 'verifier',
    requirement: 'response_type vp_token',
    judge: () => met(`${ALWAYS}: every request object says vp_token`),
  },
  {
    id: 'vp-x509-hash',
    section: '5',
    role: 'verifier',
    requirement: 'Signed requests use the client identifier prefix x509_hash',
    judge: (facts) =>
      inProfile(facts)
        ? met('profile haip-1.0: requests asking for another prefix are refused')
        : notMet('x509_hash is the default, but a request may ask for x509_san_dns (set profile haip-1.0 to refuse it)'),
  },
  {
    id: 'vp-request-x5c',
    section: '5',
    role: 'verifier',
    requirement: 'The request signing certificate is not self-signed and the trust anchor is not in x5c',
    judge: (facts) => {
      if (!facts.presentationConfigs.length) return notApplicable('no presentation configuration');
      const uses = facts.presentationConfigs.map((c) => ({
        user: `presentation configuration '${c.id}'`,
        chain: chainOf(facts, c.accessKeyChainId, 'access'),
      }));
      const bad = chainsFailing(uses, selfSigned);
      return bad.length ? notMet(`self-signed request signer: ${bad.join(', ')}`) : met('every request signer is CA-issued');
    },
  },
  {
    id: 'vp-request-es256',
    section: '7',
    role: 'verifier',
    requirement: 'Requests are signed with ES256, which every wallet validates',
    judge: (facts) => {
      if (!facts.presentationConfigs.length) return notApplicable('no presentation configuration');
      const uses = facts.presentationConfigs.map((c) => ({
        user: `presentation configuration '${c.id}'`,
        chain: chainOf(facts, c.accessKeyChainId, 'access'),
      }));
      const bad = chainsFailing(uses, (chain) => chain?.algorithm !== 'ES256');
      return bad.length ? notMet(`not ES256: ${bad.join(', ')}`) : met('every request signer uses ES256');
    },
  },
  {
    id: 'vp-dcql',
    section: '5',
    role: 'verifier',
    requirement: 'DCQL query and response (OpenID4VP 1.0 section 6)',
    judge: () => met(`${ALWAYS}: every presentation configuration is a DCQL query, checked when saved`),
  },
  {
    id: 'vp-encryption-ecdh-es',
    section: '5',
    role: 'verifier',
    requirement: 'Response encryption with ECDH-ES on P-256 (OpenID4VP 1.0 section 8.3)',
    judge: () => met(`${ALWAYS}: an ECDH-ES P-256 key in client_metadata.jwks`),
  },
  {
    id: 'vp-enc-values',
    section: '5',
    role: 'verifier',
    requirement: 'A128GCM and A256GCM supported and listed in encrypted_response_enc_values_supported',
    judge: () => met(`${ALWAYS}: both listed and both decrypted`),
  },
  {
    id: 'vp-ephemeral-keys',
    section: '5',
    role: 'verifier',
    requirement: 'An ephemeral encryption key per authorization request',
    judge: () => met(`${ALWAYS}: a new key pair per session`),
  },
  {
    id: 'vp-trusted-authorities-aki',
    section: '5',
    role: 'verifier',
    requirement: 'DCQL trusted_authorities of type aki (OpenID4VP 1.0 section 6.1.1.1)',
    judge: () => met(`${ALWAYS}: aki values match the AuthorityKeyIdentifier of a certificate of the presented chain`),
  },
  {
    id: 'vp-signed-request-uri',
    section: '5.1',
    role: 'verifier',
    requirement: 'Signed requests (JAR) passed by request_uri',
    judge: () => met(`${ALWAYS}: openid4vp:// links carry client_id and request_uri only`),
  },
  {
    id: 'vp-direct-post-jwt',
    section: '5.1',
    role: 'verifier',
    requirement: 'Response mode direct_post.jwt',
    judge: (facts) => {
      const plain = facts.credentialConfigs.filter((c) =>
        (c.iaeActions ?? []).some((a) => a.type === 'openid4vp-presentation' && a.responseMode === 'iae_post'),
      );
      if (plain.length)
        return notMet(`credential configuration ${quoted(plain.map((c) => c.id))}: an interactive presentation step uses iae_post`);
      return inProfile(facts)
        ? met('profile haip-1.0: requests asking for direct_post are refused')
        : notMet('direct_post.jwt is the default, but a request may ask for direct_post (set profile haip-1.0 to refuse it)');
    },
  },
  {
    id: 'vp-same-device-redirect',
    section: '5.1',
    role: 'verifier',
    requirement: 'Same-device flow: redirect_uri in the answer to the wallet POST',
    judge: (facts) => {
      const without = facts.presentationConfigs.length ? '' : '; the tenant has no presentation configuration';
      return met(`${ALWAYS}: a configuration's or a request's redirectUri is returned to the wallet${without}`);
    },
  },
  {
    id: 'vp-session-binding',
    section: '5.1',
    role: 'verifier',
    requirement: 'Presentations are rejected when the redirect back does not arrive in the user session that started the request',
    judge: () =>
      met(
        `${ALWAYS}: the result of a session answered through a redirect is released only with its response_code (POST /api/verifier/result)`,
      ),
  },
  {
    id: 'vp-dc-api-jwt',
    section: '5.2',
    role: 'verifier',
    requirement: 'Over the Digital Credentials API: Appendix A of OpenID4VP, response mode dc_api.jwt, signed requests',
    judge: () => met(`${ALWAYS}: response_type dc-api makes signed requests (openid4vp-v1-signed) with dc_api.jwt`),
  },
  {
    id: 'vp-mdoc-format',
    section: '5.3.1',
    role: 'verifier',
    requirement: 'mdoc credential format identifier mso_mdoc, one DeviceResponse per credential query',
    judge: () => met(`${ALWAYS}: each vp_token entry is decoded as its own DeviceResponse`),
  },
  {
    id: 'vp-sd-jwt-format',
    section: '5.3.2',
    role: 'verifier',
    requirement: 'SD-JWT VC credential format identifier dc+sd-jwt',
    judge: () => met(`${ALWAYS}: dc+sd-jwt`),
  },
  {
    id: 'vp-kb-jwt',
    section: '6.1.1.1',
    role: 'verifier',
    requirement: 'A KB-JWT is present when the credential has holder binding',
    judge: () => met(`${ALWAYS}: a presentation without KB-JWT is refused`),
  },
  {
    id: 'vp-issuer-x5c',
    section: '6.1.1',
    role: 'verifier',
    requirement: 'X.509 (x5c) key resolution of the SD-JWT VC issuer',
    judge: () => met(`${ALWAYS}: x5c chains are validated against the tenant's trust lists`),
  },
  {
    id: 'verifier-es256',
    section: '7',
    role: 'verifier',
    requirement: 'ES256 accepted for KB-JWTs, mdoc deviceSignature and status list tokens',
    judge: () => met(`${ALWAYS}: ES256 (COSE -7) is accepted`),
  },
  {
    id: 'verifier-sha256',
    section: '8',
    role: 'verifier',
    requirement: 'SHA-256 digests validated in SD-JWT VC and mdoc',
    judge: () => met(ALWAYS),
  },
];
