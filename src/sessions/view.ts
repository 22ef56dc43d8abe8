// The Session of the management API, made from a SessionState through allow-lists: a field reaches
// a caller only if it is named here with its type, so secrets a flow keeps in its data (pre-
// authorized codes, transaction codes, authorization codes, nonces, webhook credentials) never do.
import { z } from 'zod';
import { SESSION_KINDS, SESSION_STATUSES, type SessionState } from './model.js';

const JsonObject = z.record(z.string(), z.unknown());

/** Metadata fields, taken from the session's public data when present with the right type. */
const PUBLIC_FIELDS = {
  dcApiProtocol: z.string().describe('oid4vp or iso-18013-7; absent means the standard OID4VP flow'),
  browserOrigin: z.string().describe('origin recorded at offer time for the ISO 18013-7 Annex C flow'),
  credentialConfigurationIds: z.array(z.string()).describe('credential configurations offered (issuance)'),
  presentationConfigId: z.string().describe('presentation configuration requested (presentation)'),
  offerUrl: z.string().describe('the credential offer URL for the wallet; treat it as a one-time capability'),
  request_uri: z.string(),
  requestId: z.string(),
  requestUrl: z.string().describe('URL of the presentation authorization request'),
  requestObject: z.string().describe('signed authorization request'),
  clientId: z.string().describe('client id used in the OID4VP request'),
  responseUri: z.string(),
  redirectUri: z.string().nullable(),
  responseCodeRequired: z
    .boolean()
    .describe(
      'presentation answered through a redirect (OpenID4VP 1.0 section 13.3): its credentials are never in this view; POST /api/verifier/result releases them once, with the response_code the redirect carried',
    ),
  resultReleasedAt: z.string().describe('when POST /api/verifier/result released the result of a responseCodeRequired session'),
  webhookEndpointId: z.string().describe('endpoint notified about issuance status'),
  externalIssuer: z.string(),
  refresh_token_expires_at: z.string(),
};

/** Personal data, taken from the decrypted private data; absent once the session is anonymized. */
const PRIVATE_FIELDS = {
  offer: JsonObject.nullable().describe('credential offer or presentation request; encrypted at rest; pre-authorized codes are left out'),
  credentialPayload: JsonObject.describe('offer request details; encrypted at rest'),
  credentials: z.array(JsonObject).describe('verified credentials; encrypted at rest'),
  auth_queries: JsonObject.describe('encrypted at rest'),
  transaction_data: z.array(JsonObject),
  externalSubject: z.string().describe('subject from an external authorization server token'),
};

/** Keys dropped wherever they occur inside an exposed object. */
const NESTED_SECRETS = new Set(['pre-authorized_code']);

const optional = <T extends Record<string, z.ZodType>>(fields: T) =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])) as { [K in keyof T]: z.ZodOptional<T[K]> };

export const TenantSummarySchema = z
  .object({ id: z.string(), name: z.string(), description: z.string().nullable(), status: z.string() })
  .meta({ id: 'TenantSummary', description: 'the tenant, without its clients and configuration' });
export type TenantSummary = z.infer<typeof TenantSummarySchema>;

export const SessionSchema = z
  .object({
    id: z.string(),
    type: z.enum(SESSION_KINDS).describe('issuance or presentation'),
    status: z.enum(SESSION_STATUSES).describe('an open session (active, fetched) past expiresAt reads as expired'),
    createdAt: z.string(),
    updatedAt: z.string(),
    expiresAt: z.string().describe('until then the wallet can complete the flow'),
    useDcApi: z.boolean().describe('whether the digital-credentials browser API is used'),
    tenantId: z.string(),
    tenant: TenantSummarySchema,
    notifications: z.array(JsonObject).describe('notifications received for the session (OID4VCI notification endpoint)'),
    txCodeFailedAttempts: z.number().describe('failed transaction-code attempts (pre-authorized flow)'),
    consumed: z.boolean().describe('the offer was used: token exchanged (OID4VCI) or response validated (OID4VP)'),
    consumedAt: z.string().nullable(),
    errorReason: z.string().optional().describe('why the session failed'),
    anonymized: z.boolean().describe('true once retention removed the personal data (cleanupMode anonymize)'),
    ...optional(PUBLIC_FIELDS),
    ...optional(PRIVATE_FIELDS),
  })
  .meta({ id: 'Session' });
export type SessionView = z.infer<typeof SessionSchema>;

export const SessionPageSchema = z
  .object({
    items: z.array(SessionSchema),
    total: z.number().describe('sessions matching the filters'),
    page: z.number(),
    pageSize: z.number(),
    totalPages: z.number().describe('ceil(total / pageSize); 0 when nothing matches'),
  })
  .meta({ id: 'SessionPage' });

export const SessionLogEntrySchema = z
  .object({
    level: z.enum(['info', 'warn', 'error']),
    message: z.string(),
    details: JsonObject.nullable().describe('structured context of the entry; never personal data or secrets'),
    createdAt: z.string(),
  })
  .meta({ id: 'SessionLogEntry' });

export const SessionStatusEventSchema = z
  .object({
    sessionId: z.string(),
    tenantId: z.string(),
    status: z.enum(SESSION_STATUSES),
    previousStatus: z.enum(SESSION_STATUSES).nullable().describe('null in the first event of a stream and for a new session'),
    consumed: z.boolean(),
    errorReason: z.string().nullable(),
    updatedAt: z.string(),
  })
  .meta({ id: 'SessionStatusEvent' });

function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (NESTED_SECRETS.has(k) ? [] : [[k, withoutSecrets(v)]])));
  }
  return value;
}

/** The allowed fields of `source` that have the documented type; anything else is left out. */
function pick(source: Record<string, unknown> | null, fields: Record<string, z.ZodType>) {
  const picked: Record<string, unknown> = {};
  if (!source) return picked;
  for (const [key, schema] of Object.entries(fields)) {
    if (!(key in source)) continue;
    const parsed = schema.safeParse(source[key]);
    if (parsed.success) picked[key] = withoutSecrets(parsed.data);
  }
  return picked;
}

const objectsIn = (value: unknown) => (Array.isArray(value) ? value.filter((v) => v && typeof v === 'object' && !Array.isArray(v)) : []);

/**
 * The session as the management API shows it. The credentials of a presentation answered through a
 * redirect are withheld (OpenID4VP 1.0 section 13.3: only the holder of the response code the
 * redirect carried may have them), unless `released` says the caller presented that code.
 */
export function toSessionView(state: SessionState, tenant: TenantSummary, { released = false } = {}): SessionView {
  const { credentials, ...personal } = pick(state.private, PRIVATE_FIELDS);
  const withheld = state.public.responseCodeRequired === true && !released;
  return {
    id: state.id,
    type: state.kind,
    status: state.status,
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
    expiresAt: state.expiresAt,
    useDcApi: state.public.useDcApi === true,
    tenantId: state.tenantId,
    tenant,
    notifications: objectsIn(state.public.notifications) as Record<string, unknown>[],
    txCodeFailedAttempts: state.txCodeFailedAttempts,
    consumed: state.consumed,
    consumedAt: state.consumedAt,
    ...(state.errorReason !== null && { errorReason: state.errorReason }),
    anonymized: state.anonymized,
    ...pick(state.public, PUBLIC_FIELDS),
    ...personal,
    ...(!withheld && credentials !== undefined && { credentials: credentials as SessionView['credentials'] }),
  };
}
