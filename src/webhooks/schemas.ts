import { z } from 'zod';
import { DELIVERY_STATES } from './store.js';

export const DeliveryListQuery = z.strictObject({
  sessionId: z.string().optional().describe('only the deliveries of this session'),
  state: z.enum(DELIVERY_STATES).optional(),
  endpointId: z
    .string()
    .optional()
    .describe('only those sent to this target: a webhook endpoint id, `presentation-configuration:<id>` or `request`'),
  page: z.coerce.number().int().min(1).default(1).describe('1-based; newest deliveries first'),
  pageSize: z.coerce.number().int().min(1).max(100).default(25),
});

export const WebhookDeliverySchema = z
  .object({
    id: z.string().describe('the webhook-id header: one per event, the same on every attempt'),
    sessionId: z.string(),
    type: z.enum(['issuance.status', 'presentation.completed']),
    endpoint: z
      .string()
      .describe(
        "the target: a webhook endpoint's id, `presentation-configuration:<id>` (a configuration's inline webhook) or `request` (the webhook given with the presentation request)",
      ),
    state: z.enum(DELIVERY_STATES).describe('pending until a 2xx answer (delivered) or the retry horizon passed (failed)'),
    attempts: z.number().int(),
    lastStatus: z.number().int().nullable().describe('the HTTP status of the last answer; null when there was none'),
    lastError: z.string().nullable().describe('why the last attempt failed'),
    nextAttemptAt: z.string().nullable().describe('when a pending delivery is tried next; null once delivered or failed'),
    deliveredAt: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: 'WebhookDelivery' });

export const WebhookDeliveryPageSchema = z
  .object({
    items: z.array(WebhookDeliverySchema),
    total: z.number().int(),
    page: z.number().int(),
    pageSize: z.number().int(),
    totalPages: z.number().int(),
  })
  .meta({ id: 'WebhookDeliveryPage' });

export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;
