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
