// What an issuance session carries, as schemas: the offer and its progress in `public` (kept, in
// part, after anonymization), the claim sources and secrets in `private` (encrypted, dropped on
// anonymization). Read through `issuancePublic` and `issuancePrivate`, so no step casts session data.
import { z } from 'zod';
import type { SessionState } from '../sessions/model.js';
import { ClaimSourceSchema } from './credential-offer/schemas.js';

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
});

export const IssuancePrivateSchema = z.object({
  offer: z.record(z.string(), z.unknown()),
  credentialPayload: z.object({ credentialClaims: z.record(z.string(), ClaimSourceSchema).default({}) }),
  txCodeHash: z.string().optional(),
});

export type IssuancePublic = z.input<typeof IssuancePublicSchema>;
export type IssuancePrivate = z.output<typeof IssuancePrivateSchema>;
export type IssuanceNotification = z.output<typeof NotificationSchema>;

export type IssuancePublicData = z.output<typeof IssuancePublicSchema>;

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
