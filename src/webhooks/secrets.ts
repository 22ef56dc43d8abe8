// The signing secrets of webhook targets the tenant configures (a webhook endpoint, a presentation
// configuration's inline webhook), one row per owner, sealed and bound to it. A secret leaves the
// service twice only: in the answer that made it, and to sign requests. Rotating keeps the previous
// secret signing beside the new one for WEBHOOK_SECRET_ROTATION_GRACE_SECONDS, so that receivers can
// switch over without losing a request.
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import type { Executor } from '../platform/db/values.js';
import { newSigningSecret } from './signature.js';

/** Who a secret belongs to: `endpoint:<id>` or `presentation-configuration:<id>`. */
export const endpointOwner = (id: string) => `endpoint:${id}`;
export const configurationOwner = (id: string) => `presentation-configuration:${id}`;

export class WebhookSecrets {
  constructor(
    private readonly db: Executor,
    private readonly sealer: Sealer,
    /** WEBHOOK_SECRET_ROTATION_GRACE_SECONDS. */
    private readonly graceSeconds: number,
    /** Decides when a grace period is over (a test moves it forward instead of waiting). */
    private readonly clock: Clock,
  ) {}

  private context = (tenantId: string, owner: string) => `webhook-secret:${tenantId}:${owner}`;

  /** A fresh secret for `owner`, replacing any (an owner deleted and made again starts anew); inside the caller's transaction. */
  async issue(db: Executor, tenantId: string, owner: string): Promise<string> {
    const secret = newSigningSecret();
    const sealed = this.sealer.seal(secret, this.context(tenantId, owner));
    const fresh = { secret: sealed, previous_secret: null, previous_until: null, updated_at: this.clock.now().toISOString() };
    await tenantDb(db, tenantId)
      .insertInto('webhook_secrets', { owner, ...fresh })
      .onConflict((oc) => oc.columns(['tenant_id', 'owner']).doUpdateSet(fresh))
      .execute();
    return secret;
  }

  /**
   * A new secret; the current one keeps signing until the grace period ends (a previous one still in
   * its grace is dropped early). One statement moves current to previous, so two rotations racing
   * each keep what the other made as their previous, and the secret answered last is the one stored
   * last. An owner without a secret (made before signing existed) gets its first.
   */
  async rotate(db: Executor, tenantId: string, owner: string): Promise<string> {
    const secret = newSigningSecret();
    const now = this.clock.now().getTime();
    const rotated = await tenantDb(db, tenantId)
      .updateTable('webhook_secrets')
      .set((eb) => ({
        previous_secret: eb.ref('secret'),
        previous_until: new Date(now + this.graceSeconds * 1000).toISOString(),
        secret: this.sealer.seal(secret, this.context(tenantId, owner)),
        updated_at: new Date(now).toISOString(),
      }))
      .where('owner', '=', owner)
      .executeTakeFirst();
    return rotated.numUpdatedRows > 0n ? secret : this.issue(db, tenantId, owner);
  }

  /** The secrets that sign now: the current one, and the previous one while in its grace period. Empty: sent unsigned. */
  async signing(tenantId: string, owner: string, db: Executor = this.db): Promise<string[]> {
    const now = this.clock.now().getTime();
    const row = await tenantDb(db, tenantId).selectFrom('webhook_secrets').selectAll().where('owner', '=', owner).executeTakeFirst();
    if (!row) return [];
    const secrets = [this.sealer.open(row.secret, this.context(tenantId, owner))];
    if (row.previous_secret && row.previous_until && Date.parse(row.previous_until) > now)
      secrets.push(this.sealer.open(row.previous_secret, this.context(tenantId, owner)));
    return secrets;
  }

  async drop(db: Executor, tenantId: string, owner: string) {
    await tenantDb(db, tenantId).deleteFrom('webhook_secrets').where('owner', '=', owner).execute();
  }
}
