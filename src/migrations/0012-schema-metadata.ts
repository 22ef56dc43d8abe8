import type { Kysely } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * What each tenant published to its registrar's schema metadata catalog. The catalog is the record;
 * this only remembers which of its ids and versions are the tenant's, for GET /api/schema-metadata/mine
 * (the registrar's records name a signing certificate, which changes with every key rotation).
 */
export const schemaMetadata: VersionedMigration = {
  async up(db: Kysely<unknown>, t) {
    await db.schema
      .createTable('schema_metadata_publications')
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('schema_id', 'text', (c) => c.notNull())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('attestation_id', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('schema_metadata_publications_pk', ['tenant_id', 'schema_id', 'version'])
      .execute();
  },
};
