// Interactive authorization (OpenID4VCI 1.1 draft; see faces.ts for the drafts each endpoint
// speaks): the wallet's requests and the progress kept with the offer's session. Form values arrive
// as strings (a repeated parameter as an array, which fails here). The progress of a flow is kept
// with the offer's session (session.ts: InteractiveStateSchema).
import { z } from 'zod';

/** The typ the integrator's signed web result carries. */
export const WEB_RESULT_TYPE = 'iae-web-result+jwt';

/** How long the wallet has to answer one interaction (the user consents in the wallet). */
export const AUTH_SESSION_LIFETIME_SECONDS = 300;
/** How long the user has to complete the integrator's page. */
export const WEB_SESSION_LIFETIME_SECONDS = 600;
/** The longest life a web result may claim (exp - iat). */
export const WEB_RESULT_MAX_LIFETIME_SECONDS = 600;

const MAX = 2048;

/** The first request: interaction_types_supported besides a PAR request's parameters, or besides the request_uri of one pushed before. */
export const InitialRequestSchema = z.object({
  interaction_types_supported: z.string().min(1).max(1000),
  request_uri: z.string().min(1).max(MAX).optional(),
  client_id: z.string().min(1).max(200).optional(),
});

/** A follow-up request: auth_session and what the last interaction asked for. */
export const FollowUpRequestSchema = z.object({
  auth_session: z.string().min(1).max(200),
  client_id: z.string().min(1).max(200).optional(),
  openid4vp_response: z.string().min(1).max(1_000_000).optional(),
  code_verifier: z.string().min(43).max(128).optional(),
});

/** The integrator's page ends a web step by posting its signed result here. */
export const WebResultBodySchema = z.object({ result: z.string().min(1).max(64_000) });

/** What a web result JWS claims; claims and error are the integrator's outcome of the step. */
export const WebResultClaimsSchema = z.object({
  aud: z.string(),
  web_session: z.string().min(1).max(200),
  iat: z.number(),
  exp: z.number(),
  claims: z.record(z.string(), z.unknown()).optional(),
  error: z.string().min(1).max(100).optional(),
  error_description: z.string().max(500).optional(),
});
