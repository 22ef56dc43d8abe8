// External mode (OIDC set): management tokens come from an OpenID Provider (typically Keycloak), not
// from /api/oauth2/token. At start-up the provider's discovery document is read, its admin client
// (OIDC_CLIENT_ID) must obtain a token with a refresh token, as the spec requires, and, with an admin
// adapter, makes what the provider lacks (Keycloak: the service's realm roles); any failure stops the
// start with the reason. Tokens are then verified against the provider's JWKS.
import {
  createRemoteJWKSet,
  customFetch,
  errors,
  type FlattenedJWSInput,
  type JWTHeaderParameters,
  type JWTPayload,
  jwtVerify,
} from 'jose';
import type { Config } from '../config.js';
import type { Principal } from '../platform/auth/principal.js';
import { ROLES, type Role } from '../platform/auth/roles.js';
import { InvalidTokenError, TOKEN_AUDIENCE, type TokenVerifier, type VerifiedToken } from '../platform/auth/tokens.js';
import type { Clock } from '../platform/clock.js';
import { Problem } from '../platform/http/problem.js';
import { StartUpError } from '../platform/lifecycle/start-up-errors.js';
import { jsonObjectOf, type OutboundClient, readAnswer } from '../platform/outbound/client.js';
import { AdminPermissionMissing, type ProviderAdmin } from './admin.js';
import { AdminToken, type TokenAnswer, TokenAnswerSchema } from './admin-token.js';
import { keycloakAdmin } from './keycloak.js';

const CLOCK_SKEW_SECONDS = 30;
/** An unknown kid fetches the JWKS again, but not more often than this (a flood of forged kids cannot hammer the provider). */
const JWKS_COOLDOWN_MS = 5_000;
/** Keys are fetched again after this long even when every kid is known (a removed key stops working). */
const JWKS_MAX_AGE_MS = 10 * 60_000;

export interface ProviderMetadata {
  issuer: string;
  authorizationEndpoint?: string;
  /** Where the service calls the token endpoint (at OIDC_INTERNAL_ISSUER_URL when set). */
  tokenEndpoint: string;
  /** The token endpoint as the provider names it, for browsers. */
  publicTokenEndpoint: string;
  jwksUri: string;
}

export interface IdentityProvider {
  metadata: ProviderMetadata;
  verifier: TokenVerifier;
  /** Clients and users at the provider; undefined for a provider this service has no admin adapter for. */
  admin?: ProviderAdmin;
}

type ExternalConfig = Pick<Config, 'OIDC_INTERNAL_ISSUER_URL' | 'OIDC_SUB' | 'OIDC_UI_CLIENT_ID'> & {
  OIDC: string;
  OIDC_CLIENT_ID: string;
  OIDC_CLIENT_SECRET: string;
  OIDC_ALGORITHM: string;
};

export async function connectIdentityProvider(config: ExternalConfig, outbound: OutboundClient, clock: Clock): Promise<IdentityProvider> {
  const metadata = await discover(config, outbound);
  const first = await checkAdminClient(config, metadata, outbound);
  const token = new AdminToken(
    outbound,
    metadata.tokenEndpoint,
    { clientId: config.OIDC_CLIENT_ID, secret: config.OIDC_CLIENT_SECRET },
    first,
    clock,
  );
  const admin = keycloakAdmin({ reachableIssuer: reachableIssuer(config), tenantClaim: config.OIDC_SUB, outbound, token, clock });
  await admin?.prepare().catch((err: unknown) => {
    throw preparationFailure(config, err);
  });
  return { metadata, verifier: externalVerifier(config, metadata, outbound, clock), admin };
}

/** One line naming the admin client: what it may not do and what to give it, or what the provider answered. */
function preparationFailure(config: ExternalConfig, err: unknown): unknown {
  const client = `OIDC_CLIENT_ID: the admin client '${config.OIDC_CLIENT_ID}'`;
  if (err instanceof AdminPermissionMissing) return new StartUpError('identityProvider', `${client} ${err.message}`);
  if (err instanceof Problem) {
    return new StartUpError('identityProvider', `${client} could not make the service's roles at the identity provider: ${err.detail}`);
  }
  return err;
}

/**
 * The discovery document, read where the service reaches the provider (OIDC_INTERNAL_ISSUER_URL
 * when set); its endpoints are rewritten to that address too, while tokens keep naming the public issuer.
 */
async function discover(config: ExternalConfig, outbound: OutboundClient): Promise<ProviderMetadata> {
  const publicIssuer = config.OIDC.replace(/\/+$/, '');
  const reachable = reachableIssuer(config);
  const url = `${reachable}/.well-known/openid-configuration`;
  const document = await getJson(outbound, url).catch((err: Error) => {
    throw new StartUpError('identityProvider', `OIDC: the provider's discovery document ${url} could not be read: ${err.message}`);
  });
  if (document.issuer !== publicIssuer && document.issuer !== config.OIDC) {
    throw new StartUpError('identityProvider', `OIDC: the provider names itself '${String(document.issuer)}', not '${config.OIDC}'`);
  }
  const internal = (endpoint: unknown) =>
    typeof endpoint === 'string' && endpoint.startsWith(publicIssuer) ? `${reachable}${endpoint.slice(publicIssuer.length)}` : endpoint;
  const tokenEndpoint = internal(document.token_endpoint);
  const jwksUri = internal(document.jwks_uri);
  if (typeof tokenEndpoint !== 'string' || typeof jwksUri !== 'string') {
    throw new StartUpError('identityProvider', `OIDC: the discovery document ${url} names no token_endpoint or jwks_uri`);
  }
  const authorizationEndpoint = typeof document.authorization_endpoint === 'string' ? document.authorization_endpoint : undefined;
  return {
    issuer: String(document.issuer),
    authorizationEndpoint,
    tokenEndpoint,
    publicTokenEndpoint: String(document.token_endpoint),
    jwksUri,
  };
}

const reachableIssuer = (config: ExternalConfig) => (config.OIDC_INTERNAL_ISSUER_URL ?? config.OIDC).replace(/\/+$/, '');

/**
 * The admin client must get a token, and a refresh token with it, by the client credentials grant;
 * that first token is what the admin API is called with until it needs renewing.
 */
async function checkAdminClient(config: ExternalConfig, metadata: ProviderMetadata, outbound: OutboundClient): Promise<TokenAnswer> {
  const reply = await outbound
    .request(metadata.tokenEndpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(config.OIDC_CLIENT_ID)}:${encodeURIComponent(config.OIDC_CLIENT_SECRET)}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
    })
    .catch((err: Error) => {
      throw new StartUpError('identityProvider', `OIDC: the provider's token endpoint could not be reached: ${err.message}`);
    });
  const body = jsonObjectOf(reply);
  const answer = readAnswer(TokenAnswerSchema, body);
  if (!reply.ok || 'wrong' in answer) {
    const reason =
      typeof body?.error === 'string'
        ? `${body.error}${body.error_description ? `: ${body.error_description}` : ''}`
        : reply.ok && 'wrong' in answer
          ? answer.wrong
          : `HTTP ${reply.status}`;
    throw new StartUpError('identityProvider', `OIDC_CLIENT_ID: the admin client '${config.OIDC_CLIENT_ID}' got no token (${reason})`);
  }
  if (answer.value.refresh_token === undefined) {
    throw new StartUpError(
      'identityProvider',
      `OIDC_CLIENT_ID: the admin client '${config.OIDC_CLIENT_ID}' gets no refresh token with client credentials; enable it at the provider (Keycloak: "Use refresh tokens for client credentials grant")`,
    );
  }
  return answer.value;
}

function externalVerifier(config: ExternalConfig, metadata: ProviderMetadata, outbound: OutboundClient, clock: Clock): TokenVerifier {
  const jwks = providerKeys(metadata.jwksUri, outbound, clock);
  return {
    async verify(token): Promise<VerifiedToken> {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, jwks, {
          algorithms: [config.OIDC_ALGORITHM],
          issuer: metadata.issuer,
          audience: TOKEN_AUDIENCE,
          clockTolerance: CLOCK_SKEW_SECONDS,
          requiredClaims: ['exp'],
        }));
      } catch (err) {
        throw new InvalidTokenError(describe(err));
      }
      const principal = principalOf(payload, config.OIDC_SUB);
      const issuedAt = typeof payload.iat === 'number' ? payload.iat : undefined;
      const subject = typeof payload.sub === 'string' && payload.sub ? payload.sub : undefined;
      return {
        clientId: principal.clientId,
        tokenGeneration: '',
        expiresAt: (payload.exp as number) * 1000,
        issuedAt,
        ...(subject && { subject }),
        principal,
      };
    },
  };
}

/**
 * The provider's keys, fetched again when a kid is unknown (at most once per JWKS_COOLDOWN_MS) and
 * after JWKS_MAX_AGE_MS. Both waits are measured on the service's clock, not jose's (which reads
 * the system time): jose's own cooldown and max age are switched off, and its reload() is called here.
 */
function providerKeys(jwksUri: string, outbound: OutboundClient, clock: Clock) {
  let fetchedAt = Number.NEGATIVE_INFINITY;
  const jwks = createRemoteJWKSet(new URL(jwksUri), {
    cooldownDuration: Number.POSITIVE_INFINITY,
    cacheMaxAge: Number.POSITIVE_INFINITY,
    // Through the service's one outbound client, like every other call it makes.
    [customFetch]: async (url: string) => {
      const reply = await outbound.request(url, { headers: { accept: 'application/json' } });
      // As jose's own timestamp: only a fetch that answered starts the waits.
      if (reply.status === 200) fetchedAt = clock.now().getTime();
      return new Response(new Uint8Array(reply.body), { status: reply.status, headers: { 'content-type': 'application/json' } });
    },
  });
  const sinceFetched = () => clock.now().getTime() - fetchedAt;
  return async (header: JWTHeaderParameters, token: FlattenedJWSInput) => {
    if (sinceFetched() >= JWKS_MAX_AGE_MS) await jwks.reload();
    try {
      return await jwks(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey) || sinceFetched() < JWKS_COOLDOWN_MS) throw err;
      await jwks.reload();
      return jwks(header, token);
    }
  };
}

/**
 * Who the token speaks for: the client (client_id, azp, else sub), the tenant (the OIDC_SUB claim;
 * absent: a client of the service itself), and the roles of this service found in the token: a
 * `roles` claim, Keycloak's realm roles (realm_access.roles) and its client roles for svc-service
 * (resource_access["svc-service"].roles). Names that are not roles of this service are ignored.
 */
export function principalOf(payload: JWTPayload, tenantClaim: string): Principal {
  const clientId = [payload.client_id, payload.azp, payload.sub].find((v): v is string => typeof v === 'string' && v.length > 0);
  if (!clientId) throw new InvalidTokenError('the access token names no client (client_id, azp or sub)');
  const tenant = payload[tenantClaim];
  if (tenant !== undefined && (typeof tenant !== 'string' || !tenant)) {
    throw new InvalidTokenError(`the access token's ${tenantClaim} claim is not a tenant id`);
  }
  const realm = (payload.realm_access as { roles?: unknown } | undefined)?.roles;
  const client = (payload.resource_access as Record<string, { roles?: unknown }> | undefined)?.[TOKEN_AUDIENCE]?.roles;
  const named = [payload.roles, realm, client].flatMap((list) => (Array.isArray(list) ? list : []));
  const roles = ROLES.filter((role) => named.includes(role)) as Role[];
  return { clientId, tenantId: tenant ?? null, roles };
}

function describe(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the access token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `the access token's ${err.claim} claim is not accepted`;
  if (err instanceof errors.JOSEAlgNotAllowed)
    return 'the access token is signed with an algorithm this service does not accept (OIDC_ALGORITHM)';
  if (err instanceof errors.JWKSNoMatchingKey) return "the access token's key is not among the provider's keys";
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the access token signature is invalid';
  if (err instanceof errors.JWKSTimeout || !(err instanceof errors.JOSEError)) return "the identity provider's keys could not be fetched";
  return 'the access token is malformed or not issued by the identity provider';
}

async function getJson(outbound: OutboundClient, url: string): Promise<Record<string, unknown>> {
  const reply = await outbound.request(url, { headers: { accept: 'application/json' } });
  if (!reply.ok) throw new Error(`HTTP ${reply.status}`);
  const body = jsonObjectOf(reply);
  if (!body) throw new Error('not a JSON object');
  return body;
}
