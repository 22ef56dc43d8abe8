import type { Kysely } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * The subordinates a tenant vouches for as an OpenID Federation intermediate or trust anchor: one row
 * per subordinate entity, the statement's content (jwks, metadata_policy, constraints) as JSON. An
 * entity is registered once per tenant.
 */
export const federationSubordinates: VersionedMigration = {
  async up(db: Kysely<unknown>, t) {
    await db.schema
      .createTable('federation_subordinates')
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('entity_id', 'text', (c) => c.notNull())
      .addColumn('document', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('federation_subordinates_pk', ['tenant_id', 'id'])
      .addUniqueConstraint('federation_subordinates_entity_unique', ['tenant_id', 'entity_id'])
      .execute();
  },
};
