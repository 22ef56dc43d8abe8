export const SESSION_KINDS = ['issuance', 'presentation'] as const;
export type SessionKind = (typeof SESSION_KINDS)[number];
export const SESSION_STATUSES = ['active', 'fetched', 'completed', 'expired', 'failed'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** A session as the features that drive it see it: metadata in `public`, personal data in `private`. */
export interface SessionState {
  id: string;
  tenantId: string;
  kind: SessionKind;
  status: SessionStatus;
  clientId: string | null;
  consumed: boolean;
  consumedAt: string | null;
  txCodeFailedAttempts: number;
  errorReason: string | null;
  public: Record<string, unknown>;
  /** Decrypted personal data; null once the session was anonymized. */
  private: Record<string, unknown> | null;
  anonymized: boolean;
  createdAt: string;
  updatedAt: string;
  expiresAt: string;
  /** Where its webhook events go; null when it has none. */
  webhookTarget: string | null;
}

/** Published on every status change; the payload of the SSE `status` event. */
export interface SessionStatusEvent {
  sessionId: string;
  tenantId: string;
  status: SessionStatus;
  previousStatus: SessionStatus | null;
  consumed: boolean;
  errorReason: string | null;
  updatedAt: string;
}

export const sessionTopic = (sessionId: string) => `session:${sessionId}`;

/** Statuses a session never leaves: an event stream ends after sending one of them. */
export const TERMINAL_STATUSES: readonly SessionStatus[] = ['completed', 'failed', 'expired'];
/** Statuses in which a session whose expiresAt has passed is expired. */
export const OPEN_STATUSES: readonly SessionStatus[] = ['active', 'fetched'];

export function statusEvent(state: SessionState, previousStatus: SessionStatus | null): SessionStatusEvent {
  return {
    sessionId: state.id,
    tenantId: state.tenantId,
    status: state.status,
    previousStatus,
    consumed: state.consumed,
    errorReason: state.errorReason,
    updatedAt: state.updatedAt,
  };
}

/**
 * Keys of the public data that carry no personal data and so survive anonymization; everything
 * else in it goes (URLs with codes in them, redirect targets, wallet-written notifications).
 */
export const ANONYMIZED_PUBLIC_KEYS: readonly string[] = [
  'flow',
  'responseType',
  'txCodeRequired',
  'useDcApi',
  'dcApiProtocol',
  'credentialConfigurationIds',
  'presentationConfigId',
  'webhookEndpointId',
  'requestId',
  'clientId',
  'responseUri',
  'externalIssuer',
];

export type CleanupMode = 'full' | 'anonymize';
/** How long a tenant keeps its sessions, and what happens to them afterwards. */
export interface RetentionPolicy {
  ttlSeconds: number;
  cleanupMode: CleanupMode;
}
