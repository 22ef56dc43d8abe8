// The event bus across instances on PostgreSQL: every instance keeps one dedicated connection that
// LISTENs on one channel; publishing is a NOTIFY on the caller's executor, so an event sent inside a
// transaction goes out when (and only if) it commits. Each instance hears its own events too, so
// local subscribers are served the same way as remote ones.
import { EventEmitter } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import { type RawBuilder, sql } from 'kysely';
import pg from 'pg';
import type { Executor } from '../db/values.js';
import { EVENTS_MISSED_TOPIC, type EventBus, encodeEvent, type Listener } from './bus.js';

export const EVENTS_CHANNEL = 'svc_events';
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 10_000;

type Log = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

export class PostgresBus implements EventBus {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  private client: pg.Client | undefined;
  private log: Log | undefined;
  private retryMs = RETRY_MIN_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly settings: pg.ClientConfig,
    private readonly channel = EVENTS_CHANNEL,
  ) {}

  /** Opens the listening connection; resolves once LISTEN is in place, so no event published after it is missed. */
  async listen(log: Log) {
    this.log = log;
    await this.connect();
  }

  async publish(db: Executor, topic: string, payload: unknown) {
    await sql`select ${this.notification(topic, payload)}`.execute(db);
  }

  notification(topic: string, payload: unknown) {
    return sql`pg_notify(${this.channel}, ${encodeEvent(topic, payload)})`;
  }

  notificationOf(topic: RawBuilder<string>, payload: RawBuilder<unknown>) {
    return sql`pg_notify(${this.channel}, json_build_object('topic', ${topic}, 'payload', ${payload})::text)`;
  }

  subscribe(topic: string, listener: Listener) {
    this.emitter.on(topic, listener);
    return () => this.emitter.off(topic, listener);
  }

  async close() {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.emitter.removeAllListeners();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private async connect() {
    const client = new pg.Client({ ...this.settings, application_name: 'svc-events' });
    // Without an error listener a dropped connection would crash the process.
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => this.dispatch(message));
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(this.channel)}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.retryMs = RETRY_MIN_MS;
  }

  private dispatch(message: pg.Notification) {
    if (message.channel !== this.channel || !message.payload) return;
    let event: { topic?: unknown; payload?: unknown };
    try {
      event = JSON.parse(message.payload);
    } catch {
      this.log?.warn({ channel: message.channel }, 'ignoring a malformed event notification');
      return;
    }
    // The missed-events topic is this instance's own news: another instance cannot send it.
    if (typeof event.topic !== 'string' || event.topic === EVENTS_MISSED_TOPIC) return;
    this.deliver(event.topic, event.payload);
  }

  private deliver(topic: string, payload: unknown) {
    for (const listener of this.emitter.listeners(topic) as Listener[]) {
      try {
        listener(payload);
      } catch (err) {
        this.log?.error({ err, topic }, 'event listener failed');
      }
    }
  }

  /** The listening connection is gone: events published until it is back are not delivered. */
  private lost(client: pg.Client, err?: Error) {
    if (this.client !== client) return;
    this.client = undefined;
    client.removeAllListeners('end');
    client.end().catch(() => {});
    if (this.closed) return;
    this.log?.warn({ err }, 'event listener connection lost; reconnecting');
    this.scheduleReconnect();
  }

  private scheduleReconnect() {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(async () => {
      try {
        await this.connect();
        this.log?.info('event listener connection restored');
        // What was published while the connection was gone never arrives here.
        this.deliver(EVENTS_MISSED_TOPIC, null);
      } catch (err) {
        this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
        this.log?.error({ err, retryInMs: this.retryMs }, 'event listener cannot reconnect');
        this.scheduleReconnect();
      }
    }, this.retryMs);
    this.retryTimer.unref();
  }
}
