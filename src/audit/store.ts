import type { Insertable } from 'kysely';
import type { AuditLogTable } from '../platform/db/schema.js';
import type { Executor } from '../platform/db/values.js';

export async function insertEntry(db: Executor, entry: Insertable<AuditLogTable>) {
  await db.insertInto('audit_log').values(entry).execute();
}

/** Newest first; a null tenant means every entry (for callers that manage the whole service). */
export function listEntries(db: Executor, tenantId: string | null, limit: number) {
  let query = db.selectFrom('audit_log').selectAll().orderBy('seq', 'desc').limit(limit);
  if (tenantId !== null) query = query.where('tenant_id', '=', tenantId);
  return query.execute();
}
