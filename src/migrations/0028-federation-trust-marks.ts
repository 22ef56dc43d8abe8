import type { Kysely } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * OpenID Federation trust marks a tenant issues (OpenID Federation 1.0 section 7): the trust mark
 * types it defines (one row per type identifier, its logo_uri, ref and lifetime as JSON), and the
 * marks it granted, each kept as signed so that its status endpoint recognises it (by the JWT's
 * SHA-256) and answers revoked once revoked_at is set.
 */
export const federationTrustMarks: VersionedMigration = {
  async up(db: Kysely<unknown>, t) {
    await db.schema
      .createTable('federation_trust_mark_types')
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('trust_mark_type', 'text', (c) => c.notNull())
      .addColumn('document', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('federation_trust_mark_types_pk', ['tenant_id', 'id'])
      .addUniqueConstraint('federation_trust_mark_types_type_unique', ['tenant_id', 'trust_mark_type'])
      .execute();
    await db.schema
      .createTable('federation_trust_marks')
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('trust_mark_type', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('jwt', 'text', (c) => c.notNull())
      .addColumn('jwt_sha256', 'text', (c) => c.notNull())
      .addColumn('expires_at', t.timestamp)
      .addColumn('revoked_at', t.timestamp)
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('federation_trust_marks_pk', ['tenant_id', 'id'])
      .addUniqueConstraint('federation_trust_marks_jwt_unique', ['tenant_id', 'jwt_sha256'])
      .execute();
    await db.schema
      .createIndex('federation_trust_marks_subject')
      .on('federation_trust_marks')
      .columns(['tenant_id', 'trust_mark_type', 'subject'])
      .execute();
  },
};
