// What an issuance session carries, as schemas: the offer and its progress in `public` (kept, in
// part, after anonymization), the claim sources and secrets in `private` (encrypted, dropped on
// anonymization). Read through `issuancePublic` and `issuancePrivate`, so no step casts session data.
import { z } from 'zod';
import type { SessionState } from '../sessions/model.js';
import { ClaimSourceSchema } from './claim-sources.js';

const PendingPresentationSchema = z.object({
  kind: z.literal('presentation'),
  presentationConfigId: z.string(),
  clientId: z.string(),
  nonce: z.string(),
  dcqlQuery: z.record(z.string(), z.unknown()),
  transactionData: z.array(z.record(z.string(), z.unknown())).optional(),
  /** The face's spelling: ia_post(.jwt) at the authorization challenge endpoint, iae_post(.jwt) at the interactive authorization endpoint. */
  responseMode: z.enum(['iae_post', 'iae_post.jwt', 'ia_post', 'ia_post.jwt']),
  encryptionKey: z.record(z.string(), z.unknown()).optional(),
});

const PendingWebSchema = z.object({
  kind: z.literal('web'),
  /** Set when the integrator's signed result arrived and more steps follow: the wallet continues with auth_session and code_verifier. */
  completed: z.boolean().default(false),
});

/**
 * The progress of interactive authorization, kept encrypted with the offer's session: the client
 * and authorization request it belongs to, the actions it runs (fixed when it starts, so that a
 * configuration changed meanwhile does not change a flow under way), the step under way and what
 * that step waits for.
 */
export const InteractiveStateSchema = z.object({
  /** The pushed authorization request the flow runs for (AuthorizationRequest.requestId). */
  requestId: z.string().optional(),
  /** The endpoint the flow started at: every request of the flow goes there (flows stored before there were two began at the IAE). */
  face: z.enum(['authorization-challenge', 'iae']).default('iae'),
  /** The name the wallet listed for each interaction type the flow needs: the answers use it. */
  interactionTypes: z.partialRecord(z.enum(['openid4vp-presentation', 'redirect-to-web']), z.string()).optional(),
  clientId: z.string(),
  codeChallenge: z.string(),
  attestationJkt: z.string().optional(),
  actions: z.array(z.record(z.string(), z.unknown())),
  step: z.number().int().min(0),
  pending: z.discriminatedUnion('kind', [PendingPresentationSchema, PendingWebSchema]).optional(),
});
export type InteractiveState = z.output<typeof InteractiveStateSchema>;
export type PendingPresentation = z.output<typeof PendingPresentationSchema>;

const NotificationSchema = z.object({
  notificationId: z.string(),
  event: z.string(),
  description: z.string().optional(),
  receivedAt: z.string(),
});

export const IssuancePublicSchema = z.object({
  flow: z.enum(['authorization_code', 'pre_authorized_code']),
  responseType: z.string(),
  credentialConfigurationIds: z.array(z.string()),
  /** Gone after anonymization: it holds the offer handle. */
  offerUrl: z.string().optional(),
  txCodeRequired: z.boolean().default(false),
  /** Chosen when the offer is made (the offer's, else its first configuration's); null: none. Absent in sessions of earlier versions. */
  webhookEndpointId: z.string().nullable().optional(),
  notifications: z.array(NotificationSchema).default([]),
  /**
   * Authorization code flow: the configurations the wallet asked for (a subset of the offer's), and
   * those of them it asked for by authorization_details, which it then names by credential_identifier.
   */
  authorized: z.array(z.string()).optional(),
  authorizedByDetails: z.array(z.string()).optional(),
  /** The scope values of `authorized` the wallet asked for by scope, space-separated: the token responses name them. */
  authorizedScope: z.string().optional(),
  /** Set when an authorization code was replayed: every token issued for this session is refused from then on. */
  tokensRevoked: z.boolean().optional(),
  /** A session opened by an access token of an external authorization server: that server. */
  externalIssuer: z.string().optional(),
  /** How many times the session's tokens were refreshed: the round of the latest refreshed access token. */
  refreshes: z.number().int().min(0).optional(),
});

/** The pushed authorization request the wallet made last (authorization code flow); encrypted with the personal data. */
export const AuthorizationRequestSchema = z.object({
  /** Names this push: an interactive authorization runs for one pushed request, and a new push ends it. Absent in requests pushed by earlier versions. */
  requestId: z.string().optional(),
  clientId: z.string(),
  redirectUri: z.string(),
  codeChallenge: z.string(),
  state: z.string().optional(),
  /** DPoP key thumbprint the token request must prove (RFC 9449 section 10). */
  dpopJkt: z.string().optional(),
  /** Thumbprint of the wallet instance key of the client attestation sent with the request; the token request must be attested by the same instance. */
  attestationJkt: z.string().optional(),
  credentialConfigurationIds: z.array(z.string()),
  byDetails: z.array(z.string()),
  /** The scope values that named configurations, space-separated (the others were ignored); absent when none did. */
  scope: z.string().optional(),
});
export type AuthorizationRequest = z.output<typeof AuthorizationRequestSchema>;

/**
 * What the user's authorization produced, beyond the offer: an interactive authorization step (a
 * presentation, a web step) or an upstream OpenID Provider. `claims` are credential claims laid over
 * the fields' defaults (the offer's inline claims and an attribute source still win); `steps` records
 * each source's outcome, and the whole record goes to the attribute provider or webhook that supplies
 * the claims.
 */
export const AuthorizationResultSchema = z.object({
  claims: z.record(z.string(), z.unknown()).default({}),
  steps: z.array(z.object({ type: z.string(), data: z.record(z.string(), z.unknown()) })).default([]),
});
export type AuthorizationResult = z.output<typeof AuthorizationResultSchema>;

export const IssuancePrivateSchema = z.object({
  offer: z.record(z.string(), z.unknown()),
  credentialPayload: z.object({ credentialClaims: z.record(z.string(), ClaimSourceSchema).default({}) }),
  txCodeHash: z.string().optional(),
  authorizationRequest: AuthorizationRequestSchema.optional(),
  /** The DPoP key the refresh tokens of this session are bound to, if the wallet used DPoP at the token endpoint. */
  refreshJkt: z.string().optional(),
  authorizationResult: AuthorizationResultSchema.optional(),
  /** Interactive authorization under way: its steps and what the current one waits for. */
  interactiveAuthorization: InteractiveStateSchema.optional(),
  /** The sub and client_id of the external authorization server's token that opened the session: a token with the same jti must name both. */
  externalSubject: z.string().optional(),
  externalClientId: z.string().optional(),
});

export type IssuancePublic = z.input<typeof IssuancePublicSchema>;
export type IssuancePrivate = z.output<typeof IssuancePrivateSchema>;
export type IssuanceNotification = z.output<typeof NotificationSchema>;

export type IssuancePublicData = z.output<typeof IssuancePublicSchema>;

/** The configurations a wallet may receive: those it was authorized for, else (pre-authorized) the whole offer. */
export const grantedConfigurationIds = (data: IssuancePublicData) => data.authorized ?? data.credentialConfigurationIds;

/** The typed metadata of an issuance session; a session of another kind, or a corrupt one, is a server error. */
export function issuancePublic(session: SessionState): IssuancePublicData {
  if (session.kind !== 'issuance') throw new Error(`session ${session.id} is not an issuance session`);
  return IssuancePublicSchema.parse(session.public);
}

/** The typed personal data of an issuance session; null once it was anonymized. */
export function issuancePrivate(session: SessionState): IssuancePrivate | null {
  if (session.kind !== 'issuance') throw new Error(`session ${session.id} is not an issuance session`);
  return session.private === null ? null : IssuancePrivateSchema.parse(session.private);
}
