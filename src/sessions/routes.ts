import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Role } from '../platform/auth/roles.js';
import { contextOf, tenantOf } from '../platform/http/access.js';
import { withExample } from '../platform/http/examples.js';
import { type EventStream, type EventStreams, MAX_TIMER_MS } from '../platform/http/sse.js';
import type { App } from '../platform/http/types.js';
import { SessionConfigSchema } from '../tenants/schemas.js';
import type { TenantService } from '../tenants/service.js';
import {
  type RetentionPolicy,
  SESSION_KINDS,
  SESSION_STATUSES,
  type SessionState,
  type SessionStatus,
  type SessionStatusEvent,
  statusEvent,
  TERMINAL_STATUSES,
} from './model.js';
import { effectiveSessionConfig } from './retention.js';
import type { SessionService } from './service.js';
import { SessionLogEntrySchema, SessionPageSchema, SessionSchema, SessionStatusEventSchema, toSessionView } from './view.js';

const READ_ROLES: Role[] = ['issuance:manage', 'issuance:offer', 'presentation:manage', 'presentation:request'];
const MANAGE_ROLES: Role[] = ['issuance:manage', 'presentation:manage'];
const read = { roles: READ_ROLES, tenant: 'required' } as const;
const manage = { roles: MANAGE_ROLES, tenant: 'required' } as const;
const tags = ['sessions'];

const ListQuery = z.strictObject({
  page: z.coerce.number().int().min(1).default(1).describe('1-based'),
  pageSize: z.coerce.number().int().min(1).max(100).default(25),
  sortBy: z.enum(['createdAt', 'updatedAt', 'status', 'expiresAt']).default('createdAt'),
  sortOrder: z.enum(['asc', 'desc']).default('desc'),
  status: z
    .enum(SESSION_STATUSES)
    .optional()
    .describe('only sessions in this status (as readers see it: an open session past expiresAt is expired)'),
  type: z.enum(SESSION_KINDS).optional(),
  configurationId: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'only sessions of this configuration: an issuance session offering this credential configuration, or a presentation session requesting this presentation configuration (its requestId, or presentationConfigId)',
    ),
  createdFrom: z.iso.datetime({ offset: true }).optional().describe('only sessions created at or after this moment (RFC 3339 date-time)'),
  createdTo: z.iso.datetime({ offset: true }).optional().describe('only sessions created before this moment (RFC 3339 date-time)'),
  idPrefix: z
    .string()
    .regex(/^[A-Za-z0-9-]{1,64}$/, 'letters, digits and hyphens, at most 64')
    .optional()
    .describe('only sessions whose id starts with this (a whole id finds that session)'),
});
const Params = z.object({ id: z.string() });
const EventsQuery = z.object({ token: z.string().describe('a management access token (JWT), as would go in the Authorization header') });

const EffectiveSessionConfigSchema = z
  .object({
    ttlSeconds: z.number().describe('sessions are cleaned up this long after their creation'),
    cleanupMode: z
      .enum(['full', 'anonymize'])
      .describe('full deletes the session with its logs; anonymize keeps metadata and removes personal data'),
    usesGlobalDefault: z
      .object({ ttlSeconds: z.boolean(), cleanupMode: z.boolean() })
      .describe('true where the tenant sets nothing and the global SESSION_TTL / SESSION_CLEANUP_MODE applies'),
  })
  .meta({ id: 'EffectiveSessionStorageConfig' });

const EVENTS_DESCRIPTION = `A server-sent-event stream (\`text/event-stream\`) of the session's status.

- The first event, sent at once, is \`status\` with the current state (\`previousStatus\` null).
- Then one \`status\` event per status change. The \`data\` of every event is one line of JSON, a SessionStatusEvent; its \`id\` is the status.
- A comment line \`: heartbeat\` comes every SSE_HEARTBEAT_SECONDS (default 15) seconds.
- After a terminal status (\`completed\`, \`failed\`, \`expired\`) the server ends the stream. An EventSource that reconnects afterwards (it sends \`Last-Event-ID\`) gets 204 No Content, which tells it to stop.
- The stream lives no longer than its access: the server ends it when the token expires, and at the next heartbeat once the token would be refused (its client deleted or re-created, its secret rotated, its roles taken away). A reconnect with that token gets 401.

404 for a session of another tenant, as for a missing one.`;

export interface SessionRouteDeps {
  sessions: SessionService;
  tenants: TenantService;
  streams: EventStreams;
  /** SESSION_TTL and SESSION_CLEANUP_MODE. */
  retentionDefaults: RetentionPolicy;
}

export function sessionRoutes(app: App, deps: SessionRouteDeps) {
  const { sessions, tenants } = deps;
  const view = async (tenantId: string, states: SessionState[]) => {
    const tenant = await tenants.summary(tenantId);
    return states.map((state) => toSessionView(state, tenant));
  };

  app.get(
    '/api/session',
    {
      config: { access: read },
      schema: {
        tags,
        summary: "List the tenant's sessions, a page at a time",
        description:
          'Every filter is optional and they combine (all must hold): `status`, `type`, `configurationId` (the credential configuration offered, or the presentation configuration requested), `createdFrom` (inclusive) and `createdTo` (exclusive), and `idPrefix` (the start of the session id). A bad value answers 400 naming the field.',
        querystring: ListQuery,
        response: { 200: SessionPageSchema },
      },
    },
    async (request) => {
      const tenantId = tenantOf(request);
      const { type, createdFrom, createdTo, ...rest } = request.query;
      const { page, pageSize } = rest;
      const { items, total } = await sessions.list(tenantId, {
        ...rest,
        kind: type,
        // Stored as ISO strings in UTC: the bounds in the same form compare as the moments they are.
        createdFrom: createdFrom && new Date(createdFrom).toISOString(),
        createdTo: createdTo && new Date(createdTo).toISOString(),
      });
      return { items: await view(tenantId, items), total, page, pageSize, totalPages: Math.ceil(total / pageSize) };
    },
  );

  app.get(
    '/api/session/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'Get a session', params: Params, response: { 200: SessionSchema } },
    },
    async (request) => {
      const tenantId = tenantOf(request);
      const { session, tenant } = await sessions.getWithTenant(tenantId, request.params.id);
      return toSessionView(session, tenant);
    },
  );

  app.delete(
    '/api/session/:id',
    {
      config: { access: manage },
      schema: { tags, summary: 'Delete a session with its logs', params: Params, response: { 204: z.null() } },
    },
    async (request, reply) => {
      await sessions.remove(contextOf(request), tenantOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/session/:id/logs',
    {
      config: { access: read },
      schema: {
        tags,
        summary: "The session's log, oldest entry first",
        description:
          'What happened in the flow, step by step. Entries never hold personal data or secrets; they stay when a session is anonymized.',
        params: Params,
        response: { 200: z.array(SessionLogEntrySchema) },
      },
    },
    (request) => sessions.logs(tenantOf(request), request.params.id),
  );

  app.get(
    '/api/session/:id/events',
    {
      // A HEAD request would open a stream without a body to read.
      exposeHeadRoute: false,
      config: { access: { ...read, tokenInQuery: true } },
      schema: {
        tags,
        summary: "Server-sent events on the session's status",
        description: EVENTS_DESCRIPTION,
        params: Params,
        querystring: EventsQuery,
        produces: ['text/event-stream'],
        response: { 200: SessionStatusEventSchema.describe('the data of each `status` event') },
      },
    },
    (request, reply) => streamStatus(request, reply, deps, tenantOf(request), request.params.id),
  );

  const config = async (tenantId: string) => effectiveSessionConfig(await tenants.sessionConfig(tenantId), deps.retentionDefaults);

  app.get(
    '/api/session-config',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: "The tenant's session storage configuration, as in effect",
        description: 'The values that apply, with `usesGlobalDefault` telling which ones the tenant leaves to the global configuration.',
        response: { 200: EffectiveSessionConfigSchema },
      },
    },
    (request) => config(tenantOf(request)),
  );

  app.put(
    '/api/session-config',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: "Set the tenant's session storage configuration",
        description:
          'A field with a value sets it; a field set to null returns to the global default; an absent field stays as it is. Answers the configuration now in effect. Applies to existing sessions from the next clean-up round on.',
        body: withExample(SessionConfigSchema, { ttlSeconds: 86400, cleanupMode: 'anonymize' }),
        response: { 200: EffectiveSessionConfigSchema },
      },
    },
    async (request) => {
      const tenantId = tenantOf(request);
      await tenants.updateSessionConfig(contextOf(request), tenantId, request.body);
      return config(tenantId);
    },
  );

  app.delete(
    '/api/session-config',
    {
      config: { access: manage },
      schema: { tags, summary: 'Return to the global defaults (SESSION_TTL, SESSION_CLEANUP_MODE)', response: { 204: z.null() } },
    },
    async (request, reply) => {
      await tenants.updateSessionConfig(contextOf(request), tenantOf(request), null);
      return reply.code(204).send(null);
    },
  );
}

async function streamStatus(request: FastifyRequest, reply: FastifyReply, deps: SessionRouteDeps, tenantId: string, id: string) {
  const { sessions, streams } = deps;
  // Subscribe before reading, so that a change between the read and the subscription is not lost.
  const early: SessionStatusEvent[] = [];
  let stream: EventStream | undefined;
  let last: SessionStatus | undefined;
  const forward = (event: SessionStatusEvent) => {
    if (!stream || stream.closed || event.status === last) return;
    last = event.status;
    stream.send('status', event, event.status);
    if (TERMINAL_STATUSES.includes(event.status)) stream.end();
  };
  const unsubscribe = sessions.subscribe(id, (event) => (stream ? forward(event) : early.push(event)));
  let state: SessionState;
  try {
    state = await sessions.get(tenantId, id);
  } catch (err) {
    unsubscribe();
    throw err;
  }
  if (request.headers['last-event-id'] !== undefined && TERMINAL_STATUSES.includes(state.status)) {
    unsubscribe();
    return reply.code(204).send(null);
  }

  try {
    stream = streams.start(request, reply);
  } catch (err) {
    unsubscribe();
    throw err;
  }
  // The session as it is now: undefined once it is gone, 'unread' when the database did not answer
  // (logged; the stream stays open and the next heartbeat looks again, for a failed read is no news).
  const lookAgain = async (): Promise<SessionState | undefined | 'unread'> => {
    try {
      return await sessions.find(tenantId, id);
    } catch (err) {
      request.log.warn({ err, sessionId: id }, 'session event stream: the session could not be read; looking again at the next heartbeat');
      return 'unread';
    }
  };
  // Expiry is a matter of time, not of a write: look again when it is due (later than a timer can
  // wait, it is left to the clean-up job).
  const untilExpiry = Date.parse(state.expiresAt) - sessions.clock.now().getTime() + 50;
  const expiryTimer =
    untilExpiry < MAX_TIMER_MS
      ? setTimeout(
          async () => {
            const now = await lookAgain();
            if (now === 'unread') return;
            if (now) forward(statusEvent(now, last ?? null));
            else stream?.end();
          },
          Math.max(untilExpiry, 0),
        )
      : undefined;
  // A notification can be lost (the listener of another instance reconnecting, say): looking at the
  // session again at every heartbeat bounds how late a stream can learn of a change.
  const reconcile = setInterval(async () => {
    const now = await lookAgain();
    if (now && now !== 'unread') forward(statusEvent(now, last ?? null));
  }, streams.heartbeatSeconds * 1000);
  stream.onClose(() => {
    unsubscribe();
    clearTimeout(expiryTimer);
    clearInterval(reconcile);
  });
  forward(statusEvent(state, null));
  for (const event of early) forward(event);
}
