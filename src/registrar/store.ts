import type { TenantDb } from '../platform/db/tenant-db.js';

export function findConfig(db: TenantDb) {
  return db.selectFrom('registrar_configs').selectAll().executeTakeFirst();
}

export async function saveConfig(db: TenantDb, document: string, now: string, exists: boolean) {
  if (exists) await db.updateTable('registrar_configs').set({ document, updated_at: now }).execute();
  else await db.insertInto('registrar_configs', { document, created_at: now, updated_at: now }).execute();
}

export async function deleteConfig(db: TenantDb): Promise<boolean> {
  const result = await db.deleteFrom('registrar_configs').executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
