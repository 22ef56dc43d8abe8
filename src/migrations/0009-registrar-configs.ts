import type { Kysely } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * A tenant's link to an external registrar: one document per tenant, its password and client secret
 * sealed inside it (the spec keeps them in plaintext; they are credentials, so they are encrypted).
 */
export const registrarConfigs: VersionedMigration = {
  async up(db: Kysely<unknown>, t) {
    await db.schema
      .createTable('registrar_configs')
      .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
      .addColumn('document', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();
  },
};
