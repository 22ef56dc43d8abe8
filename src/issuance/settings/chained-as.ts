// The chained authorization server's part of the issuer settings: the upstream OpenID Provider the
// service logs users in with (as its OAuth client), and which of the provider's claims become which
// credential claims. The client secret is write-only: sealed (AES-256-GCM, the tenant as associated
// data) before it is stored or audited, and never answered; GET shows only whether one is set.
import { z } from 'zod';
import type { Sealer } from '../../platform/crypto/sealed.js';
import { badRequest } from '../../platform/http/problem.js';
import { webUrl } from '../../platform/http/web-urls.js';
import { isPrototypeMemberName, PROTOTYPE_MEMBER_RULE } from '../../platform/json.js';

/** RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ); one character class, so linear. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

const ClaimPath = z
  .array(
    z
      .string()
      .min(1)
      .max(200)
      .refine((name) => !isPrototypeMemberName(name), PROTOTYPE_MEMBER_RULE),
  )
  .min(1)
  .max(10);

const ClaimMappingSchema = z.strictObject({
  upstreamClaim: ClaimPath.describe(
    'path of the claim in the upstream claims (the ID token, with userinfo filling what it lacks), e.g. ["given_name"] or ["address", "country"]',
  ),
  credentialClaim: ClaimPath.describe('path of the credential claim it becomes, e.g. ["given_name"] or ["address", "country"]'),
});

/** Sealed secrets are longer than what was sealed: room for a 512-character secret. */
const SEALED_MAX = 1024;

export const ChainedAuthorizationServerSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe('listed in authorization_servers of the issuer metadata and usable by offers'),
    issuer: webUrl().describe('issuer identifier of the upstream OpenID Provider; its configuration is found by OpenID Connect Discovery'),
    clientId: z.string().min(1).max(200).describe('the client_id the upstream provider registered for this service'),
    clientSecret: z
      .string()
      .min(1)
      .max(SEALED_MAX)
      .optional()
      .meta({ writeOnly: true })
      .describe(
        'write-only: the client secret at the upstream provider (client_secret_basic); stored encrypted, never answered. Leave it out to keep the stored one (as long as issuer and clientId stay the same). A configuration file export carries it sealed, which only this tenant of this deployment can import; an imported issuer.json may give it as {"env": "NAME"} or {"file": "path"} instead',
      ),
    clientSecretSet: z
      .boolean()
      .optional()
      .meta({ readOnly: true })
      .describe('read-only: whether a client secret is stored; ignored in a PUT'),
    scopes: z
      .array(z.string().max(200).regex(SCOPE_TOKEN, 'must be an OAuth scope token (no spaces or quotes)'))
      .min(1)
      .max(20)
      .default(['openid'])
      .refine((scopes) => scopes.includes('openid'), 'must include openid: the login is an OpenID Connect authentication')
      .describe('scopes asked of the upstream provider'),
    userinfo: z
      .boolean()
      .default(true)
      .describe('also fetch the userinfo endpoint (when the provider has one) for claims the ID token does not carry'),
    claimMapping: z
      .array(ClaimMappingSchema)
      .max(100)
      .default([])
      .describe(
        'upstream claims copied into the credential claims (laid over the defaults of the credential fields; claims of the offer still win); a claim the provider did not give is left out. The mapping serves every configuration offered through the chained server: each credential takes the mapped claims its fields declare, and its mandatory claims are checked when the credential is issued rather than when the offer is made',
      ),
  })
  .meta({ id: 'ChainedAuthorizationServer' });

export type ChainedAuthorizationServerSettings = z.output<typeof ChainedAuthorizationServerSchema>;

/** What sealed.ts writes: version, IV, ciphertext and tag, base64url, joined by dots. */
const SEALED_SHAPE = /^v1\.[\w-]+\.[\w-]*\.[\w-]+$/;

/** The sealed secret is bound to the tenant: copied into another tenant's settings, it does not open. */
const sealContext = (tenantId: string) => `chained-as-client-secret:${tenantId}`;

/**
 * The settings as they are stored: the given secret sealed, or the stored one kept when none is given
 * (for the same provider and client only, so a secret never follows a client id to another provider).
 * A given value that already opens under this tenant is a stored one coming back (an exported
 * configuration file imported again) and is kept as it is; one sealed for another tenant or another
 * deployment cannot be opened here, and is refused rather than taken for the secret itself.
 */
export function sealClientSecret(
  sealer: Sealer,
  tenantId: string,
  given: ChainedAuthorizationServerSettings | null,
  before: ChainedAuthorizationServerSettings | null,
): ChainedAuthorizationServerSettings | null {
  if (!given) return null;
  const { clientSecretSet: _ignored, clientSecret, ...settings } = given;
  if (clientSecret !== undefined) {
    if (opensAs(sealer, tenantId, clientSecret)) return { ...settings, clientSecret };
    if (SEALED_SHAPE.test(clientSecret)) {
      throw badRequest('chainedAuthorizationServer.clientSecret: sealed for another tenant or deployment', [
        {
          field: 'body.chainedAuthorizationServer.clientSecret',
          message: 'is sealed for another tenant or deployment: give the secret itself',
        },
      ]);
    }
    return { ...settings, clientSecret: sealer.seal(clientSecret, sealContext(tenantId)) };
  }
  const kept = before?.issuer === given.issuer && before.clientId === given.clientId ? before.clientSecret : undefined;
  if (kept === undefined) {
    throw badRequest('chainedAuthorizationServer.clientSecret: required (no secret is stored for this issuer and clientId)', [
      { field: 'body.chainedAuthorizationServer.clientSecret', message: 'required: no secret is stored for this issuer and clientId' },
    ]);
  }
  return { ...settings, clientSecret: kept };
}

function opensAs(sealer: Sealer, tenantId: string, value: string): boolean {
  try {
    sealer.open(value, sealContext(tenantId));
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a given client secret (in the clear, or sealed for this tenant as an export carries it) is
 * the stored one. Sealing is randomized, so the same secret sealed twice differs: compared in the clear.
 */
export function sameClientSecret(sealer: Sealer, tenantId: string, given: string, stored: string): boolean {
  if (given === stored) return true;
  const opened = (value: string) => {
    try {
      return sealer.open(value, sealContext(tenantId));
    } catch {
      return undefined;
    }
  };
  const storedClear = opened(stored);
  return storedClear !== undefined && (opened(given) ?? given) === storedClear;
}

/** The stored secret in the clear, at the moment it is sent to the provider. */
export function openClientSecret(sealer: Sealer, tenantId: string, settings: ChainedAuthorizationServerSettings): string {
  if (settings.clientSecret === undefined) throw new Error('the chained authorization server has no client secret');
  return sealer.open(settings.clientSecret, sealContext(tenantId));
}

/** What the management API shows and the audit log records: whether a secret is set, never the secret. */
export function withoutClientSecret(settings: ChainedAuthorizationServerSettings | null): ChainedAuthorizationServerSettings | null {
  if (!settings) return null;
  const { clientSecret, ...shown } = settings;
  return { ...shown, clientSecretSet: clientSecret !== undefined };
}
