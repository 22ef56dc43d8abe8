// What a presentation session carries, as schemas: how the request goes out and comes back in
// `public` (kept, in part, after anonymization), and its secrets and results in `private`
// (encrypted, dropped on anonymization). Read through `presentationPublic` and
// `presentationPrivate`, so no step casts session data.
import { z } from 'zod';
import type { SessionState } from '../sessions/model.js';

export const PresentationPublicSchema = z.object({
  requestId: z.string(),
  clientId: z.string(),
  clientIdPrefix: z.enum(['x509_hash', 'x509_san_dns', 'openid_federation']),
  /** dc_api: ISO 18013-7 Annex C, whose response comes back through the DC API encrypted by HPKE, not as a JWT. */
  responseMode: z.enum(['direct_post', 'direct_post.jwt', 'dc_api.jwt', 'dc_api']),
  requestUriMethod: z.enum(['get', 'post']).default('get'),
  requestUrl: z.string().optional(),
  responseUri: z.string(),
  walletNonce: z.string().optional(),
  useDcApi: z.boolean().default(false),
  dcApiProtocol: z.string().optional(),
  /** Over the DC API: the origin of the integrator's page. */
  browserOrigin: z.string().optional(),
  redirectUri: z.string().optional(),
  /**
   * Set on completion when the request has a redirectUri: the wallet's browser carries a response
   * code back (kept only as a session handle, hashed), and the result is released only with it.
   */
  responseCodeRequired: z.boolean().optional(),
  /** When the response code released the result (POST /api/verifier/result). */
  resultReleasedAt: z.string().optional(),
});

const WebhookSchema = z.object({
  url: z.string(),
  /** Its Standard Webhooks secret, answered once with the request (absent in sessions made before signing existed). */
  signingSecret: z.string().optional(),
  auth: z
    .discriminatedUnion('type', [
      z.object({ type: z.literal('none') }),
      z.object({ type: z.literal('header'), header: z.object({ name: z.string(), value: z.string() }) }),
    ])
    .optional(),
});

const VerifierInfoSchema = z.object({
  format: z.string(),
  data: z.union([z.string(), z.record(z.string(), z.unknown())]),
  credential_ids: z.array(z.string()).optional(),
});

export const PresentationPrivateSchema = z.object({
  nonce: z.string(),
  /** Absent in nothing this service makes, but a dc-api response carries none back. */
  state: z.string(),
  dcqlQuery: z.record(z.string(), z.unknown()),
  webhook: WebhookSchema.optional(),
  transactionData: z.array(z.record(z.string(), z.unknown())).optional(),
  /** The session's ephemeral response decryption key (a private JWK). */
  encryptionKey: z.record(z.string(), z.unknown()).optional(),
  verifierInfo: z.array(VerifierInfoSchema).optional(),
  /** The verified credentials, once completed. */
  credentials: z.array(z.record(z.string(), z.unknown())).optional(),
});

export type PresentationPublic = z.input<typeof PresentationPublicSchema>;
export type PresentationPublicData = z.output<typeof PresentationPublicSchema>;
export type PresentationPrivate = z.output<typeof PresentationPrivateSchema>;
export type PresentationWebhook = z.output<typeof WebhookSchema>;

export type Flow = 'redirect' | 'dc-api';

/** The typed metadata of a presentation session; a session of another kind, or a corrupt one, is a server error. */
export function presentationPublic(session: SessionState): PresentationPublicData {
  if (session.kind !== 'presentation') throw new Error(`session ${session.id} is not a presentation session`);
  return PresentationPublicSchema.parse(session.public);
}

/** The typed secrets of a presentation session; null once it was anonymized. */
export function presentationPrivate(session: SessionState): PresentationPrivate | null {
  if (session.kind !== 'presentation') throw new Error(`session ${session.id} is not a presentation session`);
  return session.private === null ? null : PresentationPrivateSchema.parse(session.private);
}

export const flowOf = (data: PresentationPublicData): Flow => (data.useDcApi ? 'dc-api' : 'redirect');
