// The only way to reach tenant-owned tables: every query built here is bound to one tenant, so a
// store cannot forget the tenant filter, and a row of another tenant looks exactly like a missing one.
import {
  type DeleteQueryBuilder,
  type DeleteResult,
  type Insertable,
  type InsertQueryBuilder,
  type InsertResult,
  type Kysely,
  type SelectQueryBuilder,
  sql,
  type UpdateQueryBuilder,
  type UpdateResult,
} from 'kysely';
import type { Database, TenantTable } from './schema.js';

type Select<T extends TenantTable> = SelectQueryBuilder<Database, T, {}>;
type Update<T extends TenantTable> = UpdateQueryBuilder<Database, T, T, UpdateResult>;
type Delete<T extends TenantTable> = DeleteQueryBuilder<Database, T, DeleteResult>;
type Insert<T extends TenantTable> = InsertQueryBuilder<Database, T, InsertResult>;

export interface TenantDb {
  readonly tenantId: string;
  selectFrom<T extends TenantTable>(table: T): Select<T>;
  updateTable<T extends TenantTable>(table: T): Update<T>;
  deleteFrom<T extends TenantTable>(table: T): Delete<T>;
  insertInto<T extends TenantTable>(table: T, row: Omit<Insertable<Database[T]>, 'tenant_id'>): Insert<T>;
}

export function tenantDb(db: Kysely<Database>, tenantId: string): TenantDb {
  // Kysely cannot type a filter over a generic table, so the filter is written once here, untyped.
  // biome-ignore lint/suspicious/noExplicitAny: see above
  type Any = any;
  const owned = (table: string) => sql<boolean>`${sql.ref(`${table}.tenant_id`)} = ${tenantId}`;
  return {
    tenantId,
    selectFrom: (table) => (db.selectFrom(table) as Any).where(owned(table)),
    updateTable: (table) => (db.updateTable(table) as Any).where(owned(table)),
    deleteFrom: (table) => (db.deleteFrom(table) as Any).where(owned(table)),
    insertInto: (table, row) => (db.insertInto(table) as Any).values({ ...row, tenant_id: tenantId }),
  };
}
