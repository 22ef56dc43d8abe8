// The tenant's view of its webhook deliveries: a caller sees those of the session kinds its roles
// manage (issuance:manage issuance events, presentation:manage presentation events), and can send
// one again.

import type { Role } from '../platform/auth/roles.js';
import type { Clock } from '../platform/clock.js';
import type { Executor } from '../platform/db/values.js';
import { notFound } from '../platform/http/problem.js';
import type { WebhookDelivery } from './schemas.js';
import { countDeliveries, type DeliveryFilter, type DeliveryRow, type DeliveryState, listDeliveries, retryDelivery } from './store.js';

export const DELIVERY_ROLES: Role[] = ['issuance:manage', 'presentation:manage'];

/** The session kinds whose deliveries `roles` may see. */
export const kindsFor = (roles: readonly Role[]) => [
  ...(roles.includes('issuance:manage') ? ['issuance'] : []),
  ...(roles.includes('presentation:manage') ? ['presentation'] : []),
];

const toDelivery = (row: DeliveryRow): WebhookDelivery => ({
  id: row.id,
  sessionId: row.session_id,
  type: row.type as WebhookDelivery['type'],
  endpoint: row.endpoint,
  state: row.state as DeliveryState,
  attempts: row.attempts,
  lastStatus: row.last_status,
  lastError: row.last_error,
  nextAttemptAt: row.state === 'pending' ? row.next_attempt_at : null,
  deliveredAt: row.delivered_at,
  createdAt: row.created_at,
});

export class WebhookDeliveries {
  constructor(
    private readonly db: Executor,
    /** Wakes this instance's worker, so that a retried delivery goes out at once. */
    private readonly wake: () => void,
    private readonly clock: Clock,
  ) {}

  async list(tenantId: string, filter: DeliveryFilter, page: number, pageSize: number) {
    const [rows, total] = await Promise.all([
      listDeliveries(this.db, tenantId, filter, (page - 1) * pageSize, pageSize),
      countDeliveries(this.db, tenantId, filter),
    ]);
    return { items: rows.map(toDelivery), total, page, pageSize, totalPages: Math.ceil(total / pageSize) };
  }

  /** Pending again and due now; a 404 for another tenant's delivery, or one the caller's roles do not cover. */
  async retry(tenantId: string, id: string, kinds: readonly string[]) {
    if (!(await retryDelivery(this.db, tenantId, id, kinds, this.clock.now().toISOString()))) throw notFound('webhook delivery', id);
    this.wake();
  }
}
