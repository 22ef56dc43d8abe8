import { randomBytes } from 'node:crypto';
import type { Insertable, Updateable } from 'kysely';
import type { ClientsTable } from '../platform/db/schema.js';
import type { Executor } from '../platform/db/values.js';

/**
 * Clients are the one table whose rows may belong to no tenant (the service's own managers), so it
 * takes an explicit scope instead of a TenantDb: a tenant id, or null for "every client".
 */
export type ClientScope = string | null;

function scoped(db: Executor, scope: ClientScope) {
  const query = db.selectFrom('clients').selectAll();
  return scope === null ? query : query.where('tenant_id', '=', scope);
}

export const findClient = (db: Executor, scope: ClientScope, id: string) => scoped(db, scope).where('id', '=', id).executeTakeFirst();

export const listClients = (db: Executor, scope: ClientScope) => scoped(db, scope).orderBy('created_at').orderBy('id').execute();

export const listClientsOfTenants = (db: Executor, tenantIds: string[]) =>
  tenantIds.length === 0
    ? Promise.resolve([])
    : db.selectFrom('clients').selectAll().where('tenant_id', 'in', tenantIds).orderBy('created_at').orderBy('id').execute();

/** Random, so a client re-created under an old id never matches the tokens of the one before. */
const newTokenGeneration = () => randomBytes(16).toString('base64url');

export type NewClientRow = Omit<Insertable<ClientsTable>, 'token_generation' | 'first_token_at' | 'tokens_valid_from'>;

/** `tokensValidFrom`: set for a client whose tokens come from the identity provider (its creation time). */
export async function insertClient<Row extends NewClientRow>(
  db: Executor,
  row: Row,
  tokensValidFrom: string | null = null,
): Promise<Row & { token_generation: string; first_token_at: null; tokens_valid_from: string | null }> {
  const inserted = { ...row, token_generation: newTokenGeneration(), first_token_at: null, tokens_valid_from: tokensValidFrom };
  await db.insertInto('clients').values(inserted).execute();
  return inserted;
}

/** Notes the client's first access token; later calls change nothing. */
export const recordFirstToken = (db: Executor, id: string, at: string) =>
  db.updateTable('clients').set({ first_token_at: at }).where('id', '=', id).where('first_token_at', 'is', null).execute();

/** A new secret, from whatever path, ends every token issued under the old one. */
export async function updateClient(
  db: Executor,
  scope: ClientScope,
  id: string,
  changes: Omit<Updateable<ClientsTable>, 'token_generation'>,
) {
  const set = changes.secret_hash === undefined ? changes : { ...changes, token_generation: newTokenGeneration() };
  let query = db.updateTable('clients').set(set).where('id', '=', id);
  if (scope !== null) query = query.where('tenant_id', '=', scope);
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteClient(db: Executor, scope: ClientScope, id: string) {
  let query = db.deleteFrom('clients').where('id', '=', id);
  if (scope !== null) query = query.where('tenant_id', '=', scope);
  const result = await query.executeTakeFirst();
  return result.numDeletedRows > 0n;
}
