import { z } from 'zod';
import { withExample } from '../platform/http/examples.js';
import { OAuthError, Problem } from '../platform/http/problem.js';
import type { App } from '../platform/http/types.js';
import type { ClientCredentials, TokenService } from './service.js';

const TokenBody = z
  .object({
    grant_type: z.string().optional().describe('default client_credentials; nothing else is supported'),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
    scope: z.string().optional().describe('ignored: roles come from the client'),
  })
  .meta({ description: 'JSON or application/x-www-form-urlencoded' });
const TokenResponse = z.object({ access_token: z.string(), token_type: z.literal('Bearer'), expires_in: z.number() });
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
export function tokenRoutes(app: App, mode: { tokens: TokenService } | { external: { issuer: string; tokenEndpoint: string } }) {
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
  const { tokens } = mode;
  app.post(
    '/api/oauth2/token',
    {
      config: { access: { public: true }, errorFormat: 'oauth' },
      schema: {
        tags: ['auth'],
        summary: 'Get an access token (OAuth 2.0 client credentials)',
        description:
          'Credentials by HTTP Basic or as client_id and client_secret in a JSON or form body. Errors use the OAuth 2.0 shape `{error, error_description}` (RFC 6749 section 5.2). Failed attempts are limited per caller address (429 with Retry-After).',
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
      return tokens.issue(credentialsOf(request.body, request.headers.authorization), request.ip);
    },
  );
}
