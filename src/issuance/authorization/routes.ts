// The authorization code flow's front half: the wallet pushes its authorization request, then sends
// the user agent to the authorization endpoint with the request_uri it got.
import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { noStore, ProtocolBody, requestUrl, TenantParams, WALLET_TAGS } from '../routes-support.js';
import type { AuthorizationEndpoint } from './authorize.js';
import type { PushedAuthorizationEndpoint } from './par.js';

export function authorizationRoutes(app: App, publicUrl: string, par: PushedAuthorizationEndpoint, authorization: AuthorizationEndpoint) {
  app.post(
    '/issuers/:tenantId/par',
    {
      schema: {
        tags: WALLET_TAGS,
        summary: 'Pushed authorization request (RFC 9126), required before the authorization endpoint',
        description:
          'Form-encoded. client_id (a public client: any id, remembered and checked at the authorization and token endpoints), response_type=code, redirect_uri (https; http only to localhost, 127.0.0.1 or [::1]; or a private-use scheme of a native wallet, per RFC 8252; no fragment), code_challenge with code_challenge_method=S256 (required), optional state, issuer_state from an authorization_code credential offer of this issuer, and authorization_details (JSON array of {type: openid_credential, credential_configuration_id}, each in the offer) and/or scope (the `scope` of offered credential configurations; other values are ignored). An optional DPoP proof (or dpop_jkt) binds the coming token request to that key. Answers 201 {request_uri, expires_in}: the request_uri works once, for 60 seconds. A new request for the same offer replaces the one before. Errors use the OAuth shape {error, error_description}.',
        params: TenantParams,
        body: ProtocolBody,
      },
    },
    async (request, reply) => {
      const dpop = request.headers.dpop;
      const response = await par.push({
        tenantId: request.params.tenantId,
        body: request.body ?? {},
        url: requestUrl(publicUrl, request),
        ...(typeof dpop === 'string' && { dpop }),
      });
      return noStore(reply).code(201).send(response);
    },
  );

  app.get(
    '/issuers/:tenantId/authorize',
    {
      schema: {
        tags: WALLET_TAGS,
        summary: 'Authorization endpoint: client_id and request_uri from PAR; redirects with the authorization code',
        description:
          'Only pushed requests are accepted: client_id and request_uri (single use) are the whole query. The user was identified when the offer was made (issuer_state binds it), so the answer is at once a 302 to the pushed redirect_uri with code, state and iss (RFC 9207). An unknown, expired or used request_uri (invalid_request_uri) or another client_id (invalid_request) is a 400 here, since the redirect_uri is not trusted yet; later errors are redirected with error, error_description, state and iss.',
        params: TenantParams,
        querystring: z.record(z.string(), z.unknown()),
      },
    },
    async (request, reply) => {
      const location = await authorization.authorize({ tenantId: request.params.tenantId, query: request.query });
      return noStore(reply).redirect(location, 302);
    },
  );
}
