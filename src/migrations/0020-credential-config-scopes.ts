import { type Kysely, sql } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * An OAuth scope token (RFC 6749 section 3.3): printable ASCII without space, double quote or backslash.
 * Written out here rather than imported from the credential-configs feature: a migration stays as it
 * ran, whatever the live rule later becomes.
 */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

interface StoredConfig {
  tenant_id: string;
  id: string;
  document: string;
}

/**
 * Every credential configuration has a scope (HAIP 1.0 section 4.1 asks for one in the issuer metadata
 * of each), unique in its tenant, so that a scope value names exactly one configuration: the column
 * repeats the document's config.scope and a unique index decides between concurrent writers.
 *
 * Configurations saved before took no scope or any one. Each keeps a scope it had when that is a valid
 * scope token no earlier configuration of the tenant (by creation) holds; any other takes its id, the
 * default from now on, or, should an earlier one hold that as its scope, its id with the first free
 * suffix ~2, ~3, ... The document gets the same value, so both always agree.
 */
export const credentialConfigScopes: VersionedMigration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('credential_configs').addColumn('scope', 'text').execute();
    const rows = await sql<StoredConfig>`
      select tenant_id, id, document from credential_configs order by tenant_id, created_at, id`.execute(db);
    const taken = new Map<string, Set<string>>();
    for (const row of rows.rows) {
      const tenantScopes = taken.get(row.tenant_id) ?? new Set<string>();
      taken.set(row.tenant_id, tenantScopes);
      const document = JSON.parse(row.document) as { config: { scope?: unknown } };
      const scope = scopeFor(row.id, document.config.scope, tenantScopes);
      tenantScopes.add(scope);
      document.config.scope = scope;
      await sql`update credential_configs set scope = ${scope}, document = ${JSON.stringify(document)}
        where tenant_id = ${row.tenant_id} and id = ${row.id}`.execute(db);
    }
    await db.schema.createIndex('credential_configs_scope_uq').on('credential_configs').columns(['tenant_id', 'scope']).unique().execute();
  },
};

function scopeFor(id: string, stored: unknown, taken: Set<string>): string {
  if (typeof stored === 'string' && SCOPE_TOKEN.test(stored) && !taken.has(stored)) return stored;
  let scope = id;
  for (let n = 2; taken.has(scope); n++) scope = `${id}~${n}`;
  return scope;
}
