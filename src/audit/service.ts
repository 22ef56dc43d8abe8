// The audit trail of the management API: who changed what, with secrets and personal data redacted.

import type { RequestContext } from '../platform/auth/principal.js';
import type { Clock } from '../platform/clock.js';
import type { Executor } from '../platform/db/values.js';
import { insertEntry, listEntries } from './store.js';

/** Field names whose values never reach the audit log. */
const REDACTED = new Set(['secret', 'secretHash', 'temporaryPassword', 'password', 'clientSecret', 'email']);
const REDACTION = '[redacted]';
/** Jobs act as `system:<job>`; client ids cannot contain a colon, so the two never mix. */
const SYSTEM_PREFIX = 'system:';

type Snapshot = Record<string, unknown> | null;

export interface AuditEvent {
  tenantId: string | null;
  /** `<resource>.<created|updated|deleted|...>`, for example `tenant.created`. */
  actionType: string;
  before?: Snapshot;
  after?: Snapshot;
}

export interface AuditLogEntry {
  id: string;
  tenantId: string | null;
  actionType: string;
  actorType: 'client' | 'system';
  actorId: string;
  actorDisplay: string | null;
  /** The service administrator acting in the entry's tenant with an exchanged token; null otherwise. */
  actingAdminId: string | null;
  changedFields: string[];
  before: Snapshot;
  after: Snapshot;
  requestId: string | null;
  timestamp: string;
}

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, REDACTED.has(k) && v !== null && v !== undefined ? REDACTION : redact(v)]),
    );
  }
  return value;
}

function changedFields(before: Snapshot, after: Snapshot): string[] {
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  return [...keys].filter((k) => JSON.stringify(before?.[k]) !== JSON.stringify(after?.[k])).sort();
}

export class AuditService {
  constructor(
    private readonly db: Executor,
    private readonly clock: Clock,
  ) {}

  /** Writes one entry; pass the transaction of the change so both land or neither does. */
  async record(ctx: RequestContext, event: AuditEvent, db: Executor = this.db): Promise<void> {
    const before = (redact(event.before ?? null) as Snapshot) ?? null;
    const after = (redact(event.after ?? null) as Snapshot) ?? null;
    const { actingAdmin } = ctx.principal;
    await insertEntry(db, {
      id: crypto.randomUUID(),
      tenant_id: event.tenantId,
      action_type: event.actionType,
      actor_type: ctx.principal.clientId.startsWith(SYSTEM_PREFIX) ? 'system' : 'client',
      actor_id: ctx.principal.clientId,
      actor_display: actingAdmin ? `admin ${actingAdmin} in tenant ${event.tenantId}` : ctx.principal.clientId,
      acting_admin_id: actingAdmin ?? null,
      changed_fields: JSON.stringify(changedFields(event.before ?? null, event.after ?? null)),
      before: before ? JSON.stringify(before) : null,
      after: after ? JSON.stringify(after) : null,
      request_id: ctx.requestId,
      timestamp: this.clock.now().toISOString(),
    });
  }

  async list(ctx: RequestContext, limit: number): Promise<AuditLogEntry[]> {
    const rows = await listEntries(this.db, ctx.principal.tenantId, limit);
    return rows.map((r) => ({
      id: r.id,
      tenantId: r.tenant_id,
      actionType: r.action_type,
      actorType: r.actor_type as AuditLogEntry['actorType'],
      actorId: r.actor_id,
      actorDisplay: r.actor_display,
      actingAdminId: r.acting_admin_id,
      changedFields: JSON.parse(r.changed_fields) as string[],
      before: r.before ? (JSON.parse(r.before) as Snapshot) : null,
      after: r.after ? (JSON.parse(r.after) as Snapshot) : null,
      requestId: r.request_id,
      timestamp: r.timestamp,
    }));
  }
}
