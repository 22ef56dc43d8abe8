import { WALLET_SECURITY } from '../../platform/http/openapi.js';
import type { App } from '../../platform/http/types.js';
import { ProtocolBody, resourceRequest, TenantParams, WALLET_TAGS } from '../routes-support.js';
import type { NotificationEndpoint } from './endpoint.js';

export function notificationRoutes(app: App, publicUrl: string, notification: NotificationEndpoint) {
  app.post(
    '/issuers/:tenantId/notification',
    {
      schema: {
        tags: WALLET_TAGS,
        summary: 'Notification endpoint',
        description:
          'JSON body with the notification_id of an issued credential and an event (credential_accepted, credential_failure, credential_deleted); answers 204.',
        params: TenantParams,
        body: ProtocolBody,
        security: WALLET_SECURITY,
      },
    },
    async (request, reply) => {
      await notification.notify(resourceRequest(publicUrl, request));
      return reply.code(204).send();
    },
  );
}
