// The notification endpoint (OpenID4VCI 1.0 section 11): the wallet reports what became of a credential.
import { tenantDb } from '../platform/db/tenant-db.js';
import { authenticateWallet, type ResourceRequest } from './credential-endpoint.js';
import type { IssuanceDeps } from './deps.js';
import { invalidNotificationId, invalidNotificationRequest } from './errors.js';

const EVENTS = ['credential_accepted', 'credential_failure', 'credential_deleted'];

export class NotificationEndpoint {
  constructor(private readonly deps: IssuanceDeps) {}

  async notify(request: ResourceRequest): Promise<void> {
    const settings = await this.deps.settings.get(request.tenantId);
    const { session } = await authenticateWallet(this.deps, request, settings);
    const { notification_id: notificationId, event, event_description: description } = request.body;
    if (typeof notificationId !== 'string' || !notificationId) throw invalidNotificationRequest('notification_id is required');
    if (typeof event !== 'string' || !EVENTS.includes(event)) throw invalidNotificationRequest(`event must be one of ${EVENTS.join(', ')}`);
    const scoped = tenantDb(this.deps.db, request.tenantId);
    const updated = await scoped
      .updateTable('issued_credentials')
      .set({ notification_event: event })
      .where('notification_id', '=', notificationId)
      .where('session_id', '=', session.id)
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) throw invalidNotificationId('unknown notification_id for this access token');
    const notification = {
      notificationId,
      event,
      ...(typeof description === 'string' && { description }),
      receivedAt: new Date().toISOString(),
    };
    const notifications = [...((session.public.notifications as unknown[] | undefined) ?? []), notification];
    await this.deps.sessions.update(request.tenantId, session.id, { public: { notifications } });
    await this.deps.sessions.log(session.id, event === 'credential_accepted' ? 'info' : 'warn', `wallet notification: ${event}`, {
      notificationId,
    });
  }
}
