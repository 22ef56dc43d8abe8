// The upstream OpenID Provider, as the chained authorization server's relying party sees it: its
// configuration (OpenID Connect Discovery 1.0), the code exchange at its token endpoint
// (client_secret_basic, PKCE), the ID token validation of OpenID Connect Core 1.0 section 3.1.3.7
// (signature by a key of its JWKS, iss, aud, azp, exp, iat, nonce) and its userinfo endpoint. Every
// call goes through the outbound client (address policy, time limit, size limit). Configurations and
// key sets are kept for a few minutes, a failure to read them 10 s; a token signed with a key not yet
// seen fetches the key set again.
// The same reading of metadata and keys serves external authorization servers (RFC 8414 metadata,
// RFC 9068 access tokens: access/external-access-tokens.ts).
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTPayload, type JWTVerifyOptions, jwtVerify } from 'jose';
import { z } from 'zod';
import { jsonObjectOf, type OutboundClient, readAnswer } from '../platform/outbound/client.js';
import { TtlCache } from '../platform/ttl-cache.js';

const CACHE_MS = 5 * 60_000;
/**
 * A token with a kid the cached key set lacks fetches the set again at most this often: the kid is
 * whatever the sender wrote, and tokens of an external authorization server come from anyone.
 */
const REFETCH_INTERVAL_MS = 30_000; // as jose's remote key sets pause between fetches
/**
 * A server that failed to answer is asked again after this long, not by every request naming it:
 * an external server's tokens come from anyone, and each would otherwise cost an outbound call.
 */
const FAILURE_CACHE_MS = 10_000;
const TIMEOUT_MS = 5_000;
const MAX_BYTES = 256 * 1024;
/** An ID token is used right after it was issued; one older than this is not a fresh login. */
const ID_TOKEN_MAX_AGE = '10m';
const CLOCK_TOLERANCE_SECONDS = 60;
/** Asymmetric algorithms only: HS* would make the client secret a signing key, none no signature at all. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** A JWK Set (RFC 7517 section 5): its keys, each with its key type; jose reads the rest. */
const KeySetSchema: z.ZodType<JSONWebKeySet> = z.object({ keys: z.array(z.looseObject({ kty: z.string() })) });

/** Something about the upstream provider failed: `reason` is for the session log, `unavailable` when it did not answer usefully. */
export class UpstreamFailure extends Error {
  constructor(
    readonly reason: string,
    readonly unavailable = false,
  ) {
    super(reason);
  }
}

const ProviderConfigurationSchema = z.looseObject({
  issuer: z.string(),
  authorization_endpoint: z.url(),
  token_endpoint: z.url(),
  jwks_uri: z.url(),
  userinfo_endpoint: z.url().optional(),
  authorization_response_iss_parameter_supported: z.boolean().optional(),
});
export type ProviderConfiguration = z.infer<typeof ProviderConfigurationSchema>;

/** What a resource server needs of an authorization server's metadata (RFC 8414 section 2). */
const ServerMetadataSchema = z.looseObject({ issuer: z.string(), jwks_uri: z.url() });

const TokenResponseSchema = z.looseObject({
  id_token: z.string().min(1).max(20_000),
  access_token: z.string().min(1).max(20_000).optional(),
  token_type: z.string().optional(),
});

export interface UpstreamClient {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

export interface IdTokenExpectations {
  clientId: string;
  nonce: string;
}

/** The claims of the user: the ID token's, with userinfo filling what it lacks. */
export type UpstreamClaims = Record<string, unknown> & { sub: string };

export class UpstreamProviders {
  private readonly configurations = new TtlCache<ProviderConfiguration>(CACHE_MS, { failureTtlMs: FAILURE_CACHE_MS });
  private readonly keySets = new TtlCache<JSONWebKeySet>(CACHE_MS, { failureTtlMs: FAILURE_CACHE_MS });
  private readonly serverMetadata = new TtlCache<z.infer<typeof ServerMetadataSchema>>(CACHE_MS, { failureTtlMs: FAILURE_CACHE_MS });
  /** The key set fetched again for an unknown kid, which later unknown kids within the interval are checked against. */
  private readonly refetchedKeySets = new TtlCache<JSONWebKeySet>(REFETCH_INTERVAL_MS);

  constructor(private readonly outbound: OutboundClient) {}

  /** The provider's configuration, whose issuer must be exactly the one configured (Discovery section 4.3). */
  configuration(issuer: string): Promise<ProviderConfiguration> {
    return this.configurations.get(issuer, async () => {
      const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
      const parsed = ProviderConfigurationSchema.safeParse(await this.getJson(url, 'discovery'));
      if (!parsed.success) throw new UpstreamFailure('the provider configuration lacks an endpoint or jwks_uri', true);
      if (parsed.data.issuer !== issuer)
        throw new UpstreamFailure(`the provider configuration names another issuer (${parsed.data.issuer})`, true);
      return parsed.data;
    });
  }

  /**
   * An authorization server's metadata: RFC 8414 (the well-known path inserted before the issuer's
   * path), else OpenID Connect Discovery; its issuer must be exactly the one configured (RFC 8414 section 3.3).
   */
  authorizationServer(issuer: string): Promise<z.infer<typeof ServerMetadataSchema>> {
    return this.serverMetadata.get(issuer, async () => {
      const url = new URL(issuer);
      const path = url.pathname.replace(/\/$/, '');
      const candidates = [
        `${url.origin}/.well-known/oauth-authorization-server${path}`,
        `${url.origin}${path}/.well-known/openid-configuration`,
      ];
      let failure: unknown;
      for (const candidate of candidates) {
        try {
          const parsed = ServerMetadataSchema.safeParse(await this.getJson(candidate, 'authorization server metadata'));
          if (!parsed.success) throw new UpstreamFailure('the authorization server metadata lacks issuer or jwks_uri', true);
          if (parsed.data.issuer !== issuer)
            throw new UpstreamFailure(`the authorization server metadata names another issuer (${parsed.data.issuer})`, true);
          return parsed.data;
        } catch (err) {
          failure = err;
        }
      }
      throw failure;
    });
  }

  /** Exchanges the code for tokens (RFC 6749 section 4.1.3 with PKCE), authenticating with client_secret_basic. */
  async exchangeCode(
    provider: ProviderConfiguration,
    client: UpstreamClient,
    grant: { code: string; redirectUri: string; codeVerifier: string },
  ): Promise<z.infer<typeof TokenResponseSchema>> {
    // RFC 6749 section 2.3.1: client id and secret are form-encoded before they are joined.
    const basic = Buffer.from(`${formEncode(client.clientId)}:${formEncode(client.clientSecret)}`).toString('base64');
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code: grant.code,
      redirect_uri: grant.redirectUri,
      code_verifier: grant.codeVerifier,
    }).toString();
    const reply = await this.call(provider.token_endpoint, 'token endpoint', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: `Basic ${basic}` },
      body,
    });
    const answer = jsonObjectOf(reply);
    if (!reply.ok) {
      const error = typeof answer?.error === 'string' ? answer.error.slice(0, 100) : `status ${reply.status}`;
      throw new UpstreamFailure(`the token endpoint refused the code: ${error}`);
    }
    const parsed = TokenResponseSchema.safeParse(answer);
    if (!parsed.success) throw new UpstreamFailure('the token response carries no id_token');
    return parsed.data;
  }

  /** OpenID Connect Core 1.0 section 3.1.3.7; the claims of a valid ID token. */
  async verifyIdToken(provider: ProviderConfiguration, idToken: string, expected: IdTokenExpectations): Promise<UpstreamClaims> {
    const payload = await this.verifySignature(provider, idToken, expected.clientId);
    // A token for several audiences must name this client as its authorized party (section 3.1.3.7, 4 and 5).
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== expected.clientId) {
      throw new UpstreamFailure('the ID token has several audiences and azp is not this client');
    }
    if (payload.azp !== undefined && payload.azp !== expected.clientId) throw new UpstreamFailure('the ID token azp is another client');
    if (payload.nonce !== expected.nonce) throw new UpstreamFailure('the ID token nonce is not the one of this login');
    if (typeof payload.sub !== 'string' || !payload.sub) throw new UpstreamFailure('the ID token has no sub');
    return payload as UpstreamClaims;
  }

  private async verifySignature(provider: ProviderConfiguration, idToken: string, clientId: string): Promise<JWTPayload> {
    const options = {
      issuer: provider.issuer,
      audience: clientId,
      algorithms: ASYMMETRIC_ALGORITHMS,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      maxTokenAge: ID_TOKEN_MAX_AGE,
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
    };
    try {
      return await this.verifyJwt(provider.jwks_uri, idToken, options);
    } catch (err) {
      if (err instanceof UpstreamFailure) throw err;
      throw new UpstreamFailure(`the ID token is not valid: ${jwtProblem(err)}`);
    }
  }

  /** A JWT signed by a key of the set at `jwksUri`; jose's errors are passed on. */
  async verifyJwt(jwksUri: string, jwt: string, options: JWTVerifyOptions): Promise<JWTPayload> {
    try {
      return (await jwtVerify(jwt, createLocalJWKSet(await this.keySet(jwksUri)), options)).payload;
    } catch (err) {
      // A key the cached set does not have: the provider may have rotated; ask once more, but not again within the interval.
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
      const refetched = await this.refetchedKeySets.get(jwksUri, () => {
        this.keySets.forget(jwksUri);
        return this.keySet(jwksUri);
      });
      return (await jwtVerify(jwt, createLocalJWKSet(refetched), options)).payload;
    }
  }

  private keySet(jwksUri: string): Promise<JSONWebKeySet> {
    return this.keySets.get(jwksUri, async () => {
      const answer = readAnswer(KeySetSchema, await this.getJson(jwksUri, 'jwks_uri'));
      if ('wrong' in answer) throw new UpstreamFailure(`jwks_uri answered no key set (${answer.wrong})`, true);
      return answer.value;
    });
  }

  /** The userinfo claims (JSON; section 5.3.2), which must be about the same subject as the ID token. */
  async userinfo(provider: ProviderConfiguration, accessToken: string, subject: string): Promise<Record<string, unknown>> {
    if (!provider.userinfo_endpoint) return {};
    const reply = await this.call(provider.userinfo_endpoint, 'userinfo endpoint', {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
    });
    const answer = jsonObjectOf(reply);
    if (!reply.ok || !answer) throw new UpstreamFailure(`the userinfo endpoint answered ${reply.status} without claims`);
    if (answer.sub !== subject) throw new UpstreamFailure('the userinfo sub is not the ID token sub');
    return answer;
  }

  private async getJson(url: string, what: string): Promise<Record<string, unknown> | undefined> {
    const reply = await this.call(url, what, { headers: { accept: 'application/json' } });
    if (!reply.ok) throw new UpstreamFailure(`${what} answered ${reply.status}`, true);
    return jsonObjectOf(reply);
  }

  private async call(url: string, what: string, init: Parameters<OutboundClient['request']>[1]) {
    try {
      return await this.outbound.request(url, { ...init, timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES });
    } catch (err) {
      throw new UpstreamFailure(`${what} could not be reached: ${err instanceof Error ? err.message : String(err)}`, true);
    }
  }
}

const formEncode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');

/** Why jose refused a JWT, in words fit for a log or an error description. */
export function jwtProblem(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'it has expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `${err.claim}: ${err.reason}`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'its signature does not verify';
  if (err instanceof errors.JWKSNoMatchingKey) return 'no key of the provider matches its kid';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'its algorithm is not allowed';
  if (err instanceof errors.JOSEError) return err.code;
  return 'it is malformed';
}
