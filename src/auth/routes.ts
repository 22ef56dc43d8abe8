import { z } from 'zod';
import { withExample } from '../platform/http/examples.js';
import { OAuthError, Problem } from '../platform/http/problem.js';
import type { App } from '../platform/http/types.js';
import { ACCESS_TOKEN_TYPE, EXCHANGED_TOKEN_MAX_SECONDS, TOKEN_EXCHANGE_GRANT, type TokenExchange } from './exchange.js';
import type { ClientCredentials, TokenService } from './service.js';

const TokenBody = z
  .object({
    grant_type: z
      .string()
      .optional()
      .describe(`default client_credentials; or ${TOKEN_EXCHANGE_GRANT} (RFC 8693), for a service administrator to act in a tenant`),
    client_id: z.string().optional().describe('client_credentials only'),
    client_secret: z.string().optional().describe('client_credentials only'),
    scope: z
      .string()
      .optional()
      .describe(
        'client_credentials: ignored, roles come from the client. Token exchange: the space-separated roles wanted in the tenant (default: every role but tenants:manage)',
      ),
    subject_token: z.string().optional().describe("token exchange: the service administrator's own access token"),
    subject_token_type: z.string().optional().describe(`token exchange: ${ACCESS_TOKEN_TYPE}`),
    requested_token_type: z.string().optional().describe(`token exchange: ${ACCESS_TOKEN_TYPE}, the only type issued`),
    audience: z.string().optional().describe('token exchange: the id of the tenant to act in'),
    actor_token: z.string().optional().describe('token exchange: not supported'),
    actor_token_type: z.string().optional().describe('token exchange: not supported'),
  })
  .meta({ description: 'JSON or application/x-www-form-urlencoded' });
const TokenResponse = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number(),
  issued_token_type: z.literal(ACCESS_TOKEN_TYPE).optional().describe('token exchange only'),
  scope: z.string().optional().describe('token exchange only: the roles the token holds in the tenant'),
});
const OAuthErrorBody = z.object({ error: z.string(), error_description: z.string() });

function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const match = header && /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  // RFC 6749 section 2.3.1: both parts are form-urlencoded before they are joined.
  const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
  try {
    return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

function credentialsOf(given: z.infer<typeof TokenBody> | null | undefined, authorization: string | undefined): ClientCredentials {
  const body = given ?? {};
  const grantType = body.grant_type ?? 'client_credentials';
  const basic = basicCredentials(authorization);
  if (basic && (body.client_id !== undefined || body.client_secret !== undefined) && body.client_id !== basic.id) {
    throw new OAuthError(400, 'invalid_request', 'use one client authentication method, not two');
  }
  if (basic) return { grantType, clientId: basic.id, clientSecret: basic.secret, method: 'client_secret_basic' };
  if (authorization) throw new OAuthError(400, 'invalid_request', 'the Authorization header must use the Basic scheme');
  const missing = (['client_id', 'client_secret'] as const).filter((k) => !body[k]);
  if (missing.length) throw new OAuthError(400, 'invalid_request', `missing ${missing.join(' and ')} (or HTTP Basic credentials)`);
  return { grantType, clientId: body.client_id as string, clientSecret: body.client_secret as string, method: 'client_secret_post' };
}

/** The integrated token server, or (external mode) a pointer to where tokens come from. */
export function tokenRoutes(
  app: App,
  mode: { tokens: TokenService; exchange: TokenExchange } | { external: { issuer: string; tokenEndpoint: string } },
) {
  if ('external' in mode) {
    app.post(
      '/api/oauth2/token',
      {
        config: { access: { public: true } },
        schema: { tags: ['auth'], summary: 'Not served in external mode: tokens come from the identity provider' },
      },
      () => {
        throw new Problem(
          404,
          'Not Found',
          `this service does not issue tokens: get one from the identity provider ${mode.external.issuer} (token endpoint ${mode.external.tokenEndpoint})`,
        );
      },
    );
    return;
  }
  const { tokens, exchange } = mode;
  app.post(
    '/api/oauth2/token',
    {
      config: { access: { public: true }, errorFormat: 'oauth' },
      schema: {
        tags: ['auth'],
        summary: 'Get an access token (OAuth 2.0 client credentials, or RFC 8693 token exchange into a tenant)',
        description: [
          'Credentials by HTTP Basic or as client_id and client_secret in a JSON or form body. Errors use the OAuth 2.0 shape `{error, error_description}` (RFC 6749 section 5.2). Failed attempts are limited per caller address (429 with Retry-After).',
          `Token exchange (\`grant_type=${TOKEN_EXCHANGE_GRANT}\`): a service administrator (a client without a tenant, holding tenants:manage) presents its own access token as \`subject_token\` (\`subject_token_type=${ACCESS_TOKEN_TYPE}\`), the tenant id as \`audience\` and, optionally, the roles wanted as \`scope\`. The subject token alone authenticates; client credentials are not read. The token issued acts in that tenant with those roles, carries \`act: {sub: <administrator>}\`, lives at most ${EXCHANGED_TOKEN_MAX_SECONDS / 60} minutes and never past the subject token, and dies with the administrator's client, its secret, or the tenant. Every write made with it is audited as the administrator in the tenant, and so is the exchange (\`token.exchanged\`). Errors (RFC 8693 section 2.2.2): a subject token that is invalid or not an administrator's own: 400 invalid_request; an unknown or inactive tenant: 400 invalid_target; a role no tenant client can hold: 400 invalid_scope.`,
        ].join('\n\n'),
        body: withExample(TokenBody.nullish(), {
          grant_type: 'client_credentials',
          client_id: 'acme-offers',
          client_secret: 'offers-secret-change-me-0123456789',
        }),
        response: { 200: TokenResponse, 400: OAuthErrorBody, 401: OAuthErrorBody, 429: OAuthErrorBody },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const body = request.body ?? {};
      if (body.grant_type === TOKEN_EXCHANGE_GRANT) {
        return exchange.exchange({
          subjectToken: body.subject_token,
          subjectTokenType: body.subject_token_type,
          requestedTokenType: body.requested_token_type,
          audience: body.audience,
          scope: body.scope,
          actorToken: body.actor_token,
          requestId: request.id,
        });
      }
      return tokens.issue(credentialsOf(request.body, request.headers.authorization), request.ip);
    },
  );
}
