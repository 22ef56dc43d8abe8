// Server-sent events, written by hand on the raw response: a stream sends named events and
// heartbeat comments until the client leaves, the handler ends it, or the server shuts down.
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply } from 'fastify';

export interface EventStream {
  /** Sends one event; `data` is written as one line of JSON. Does nothing once the stream is closed. */
  send(event: string, data: unknown, id?: string): void;
  end(): void;
  /** Runs once the stream is over, whoever ended it (the client going away included). */
  onClose(listener: () => void): void;
  readonly closed: boolean;
}

export class EventStreams {
  private readonly open = new Set<EventStream>();

  constructor(readonly heartbeatSeconds: number) {}

  /** Takes the reply over from Fastify and starts the stream. */
  start(reply: FastifyReply): EventStream {
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
    const heartbeat = setInterval(() => write(': heartbeat\n\n'), this.heartbeatSeconds * 1000);
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
