// The notification endpoint (OpenID4VCI 1.0 section 11): the wallet reports what became of a
// credential; the event is kept on the issued credential and in the session for the integrator.
import type { Executor } from '../../platform/db/values.js';
import type { SessionService } from '../../sessions/service.js';
import type { WalletAccessCheck } from '../access/wallet-access.js';
import type { ResourceRequest } from '../client-request.js';
import { notificationEventUpdate } from '../credential-request/store.js';
import { invalidNotificationId } from '../errors.js';
import { type IssuanceNotification, issuancePublic } from '../session.js';
import { parseNotificationRequest } from './schemas.js';

export class NotificationEndpoint {
  constructor(
    private readonly db: Executor,
    private readonly access: WalletAccessCheck,
    private readonly sessions: SessionService,
  ) {}

  async notify(request: ResourceRequest): Promise<void> {
    const { session } = await this.access.authenticate(request);
    const { notification_id: notificationId, event, event_description: description } = parseNotificationRequest(request.body);
    const notification: IssuanceNotification = {
      notificationId,
      event,
      ...(description !== undefined && { description }),
      receivedAt: this.sessions.clock.now().toISOString(),
    };
    const level = event === 'credential_accepted' ? 'info' : 'warn';
    // Appended to the list as it is at the version written to, so notifications racing each other all
    // stay; the event recorded on the credential in the same statement (on PostgreSQL), which the change
    // depends on: an id that is not this session's changes nothing.
    const write = { query: notificationEventUpdate(this.db, request.tenantId, session.id, notificationId, event), guards: true };
    const updated = await this.sessions.update(
      request.tenantId,
      session.id,
      (current) => ({ public: { notifications: [...issuancePublic(current).notifications, notification] } }),
      { from: session, log: { level, message: `wallet notification: ${event}`, details: { notificationId } }, writes: [write] },
    );
    if (!updated) throw invalidNotificationId('unknown notification_id for this access token');
  }
}
