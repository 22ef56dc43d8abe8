// The notification request (OpenID4VCI 1.0 section 11.1).
import { z } from 'zod';
import { invalidNotificationRequest } from '../errors.js';

export const NOTIFICATION_EVENTS = ['credential_accepted', 'credential_failure', 'credential_deleted'] as const;

const NotificationRequest = z.object({
  notification_id: z.string().min(1),
  event: z.enum(NOTIFICATION_EVENTS),
  event_description: z.string().max(1000).optional(),
});
export type NotificationRequest = z.infer<typeof NotificationRequest>;

export function parseNotificationRequest(body: Record<string, unknown>): NotificationRequest {
  const parsed = NotificationRequest.safeParse(body);
  if (parsed.success) return parsed.data;
  const field = parsed.error.issues[0]?.path[0];
  if (field === 'event') throw invalidNotificationRequest(`event must be one of ${NOTIFICATION_EVENTS.join(', ')}`);
  if (field === 'event_description') throw invalidNotificationRequest('event_description must be a string of at most 1000 characters');
  throw invalidNotificationRequest('notification_id is required');
}
