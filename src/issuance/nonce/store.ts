// One-time values kept in the database so that every instance sees them: c_nonces (consumed by
// deleting the row, so a replayed nonce finds nothing) and DPoP proof ids (remembered until expiry).

import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import { tenantDb } from '../../platform/db/tenant-db.js';
import type { Executor, OnceInsert } from '../../platform/db/values.js';
import { type BatchLimits, deleteInBatches } from '../../platform/jobs/batches.js';
import { hashHandle } from '../../sessions/service.js';

export class NonceStore {
  constructor(
    private readonly db: Executor,
    private readonly clock: Clock,
  ) {}

  async issue(tenantId: string, purpose: string, lifetimeSeconds: number): Promise<string> {
    const value = randomBytes(24).toString('base64url');
    await this.remember(tenantId, purpose, value, lifetimeSeconds);
    return value;
  }

  /** Stores a value until it expires; false when it is already known (a replay). */
  async remember(tenantId: string, purpose: string, value: string, lifetimeSeconds: number): Promise<boolean> {
    const result = await this.remembering(tenantId, purpose, value, lifetimeSeconds).executeTakeFirst();
    return result.numInsertedOrUpdatedRows === 1n;
  }

  /**
   * The statement that remembers a value (adding no row when it is known), for a caller that sends it
   * along with its own query (insertAndRead): the one INSERT still decides a replay.
   */
  remembering(tenantId: string, purpose: string, value: string, lifetimeSeconds: number): OnceInsert {
    const expiresAt = new Date(this.clock.now().getTime() + lifetimeSeconds * 1000).toISOString();
    return tenantDb(this.db, tenantId)
      .insertInto('nonces', { hash: hashHandle(`${purpose}:${value}`), purpose, expires_at: expiresAt })
      .onConflict((conflict) => conflict.doNothing()) as OnceInsert;
  }

  /**
   * The statement that consumes a value (with RETURNING: a row exactly once for a value that was
   * issued and has not expired), for a caller that sends it along with its own write.
   */
  consuming(tenantId: string, purpose: string, value: string) {
    return tenantDb(this.db, tenantId)
      .deleteFrom('nonces')
      .where('hash', '=', hashHandle(`${purpose}:${value}`))
      .where('expires_at', '>', this.clock.now().toISOString())
      .returning('hash');
  }

  /** True exactly once for a value that was issued and has not expired. */
  async consume(tenantId: string, purpose: string, value: string): Promise<boolean> {
    const result = await tenantDb(this.db, tenantId)
      .deleteFrom('nonces')
      .where('hash', '=', hashHandle(`${purpose}:${value}`))
      .where('expires_at', '>', this.clock.now().toISOString())
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Deletes the expired nonces in batches (the scheduled job 'nonce-cleanup'); how many it deleted. */
  async purgeExpired(limits?: BatchLimits): Promise<number> {
    const now = this.clock.now().toISOString();
    return deleteInBatches(async (size) => {
      const result = await this.db
        .deleteFrom('nonces')
        .where('hash', 'in', this.db.selectFrom('nonces').select('hash').where(sql<boolean>`expires_at < ${now}`).limit(size))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    }, limits);
  }
}
