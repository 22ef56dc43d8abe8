// Server-sent events, written by hand on the raw response: a stream sends named events and
// heartbeat comments until the client leaves, the handler ends it, its access ends, or the server
// shuts down.
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { unauthorized } from './access.js';

export interface EventStream {
  /** Sends one event; `data` is written as one line of JSON. Does nothing once the stream is closed. */
  send(event: string, data: unknown, id?: string): void;
  end(): void;
  /** Runs once the stream is over, whoever ended it (the client going away included). */
  onClose(listener: () => void): void;
  readonly closed: boolean;
}

/** Longest delay setTimeout honours. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export class EventStreams {
  private readonly open = new Set<EventStream>();

  constructor(readonly heartbeatSeconds: number) {}

  /**
   * Takes the reply over from Fastify and starts the stream. A stream lives no longer than the access
   * that opened it: it ends when the token expires, and at the first heartbeat at which the token
   * would be refused (its client deleted, re-created or given a new secret, or its roles taken away).
   */
  start(request: FastifyRequest, reply: FastifyReply): EventStream {
    const grant = request.grant;
    if (!grant) throw new Error('an event stream is opened only by an authenticated request');
    // The clock-skew allowance of a request does not stretch to a stream: one opened past the token's
    // expiry would end at once, and its EventSource would reconnect into the same end again and again.
    // The token's expiry as its verifier judged it: on the system clock (see src/platform/auth/tokens.ts).
    if (grant.expiresAt <= Date.now()) throw unauthorized('the access token has expired', 'invalid_token');
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      // Tells reverse proxies such as nginx not to buffer the stream.
      'x-accel-buffering': 'no',
    });
    let closed = false;
    const listeners: (() => void)[] = [];
    const write = (text: string) => {
      if (!closed) raw.write(text);
    };
    let judging = false;
    const heartbeat = setInterval(() => {
      write(': heartbeat\n\n');
      if (judging) return;
      judging = true;
      // A failure to judge (the database out of reach) is not a refusal: the next heartbeat judges again.
      grant.stillHeld().then(
        (held) => {
          judging = false;
          if (!held) stream.end();
        },
        () => {
          judging = false;
        },
      );
    }, this.heartbeatSeconds * 1000);
    const untilExpiry = grant.expiresAt - Date.now();
    // Beyond setTimeout's reach, expiry is left to the heartbeat's judgement.
    const expiry = untilExpiry < MAX_TIMER_MS ? setTimeout(() => stream.end(), untilExpiry) : undefined;
    const stream: EventStream = {
      send: (event, data, id) => write(`event: ${event}\n${id ? `id: ${id}\n` : ''}data: ${JSON.stringify(data)}\n\n`),
      end: () => {
        if (!closed) raw.end();
      },
      onClose: (listener) => {
        if (closed) listener();
        else listeners.push(listener);
      },
      get closed() {
        return closed;
      },
    };
    const finish = () => {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      clearTimeout(expiry);
      this.open.delete(stream);
      for (const listener of listeners) listener();
    };
    raw.on('close', finish);
    // The client may have left while the handler was still reading: its 'close' has been and gone.
    if (raw.destroyed || !raw.socket || raw.socket.destroyed) finish();
    else this.open.add(stream);
    return stream;
  }

  /** Ends every open stream, so that shutting down does not wait for clients to leave. */
  closeAll() {
    for (const stream of this.open) stream.end();
  }
}
