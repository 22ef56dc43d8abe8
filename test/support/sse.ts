// A server-sent-event client, reading a stream as a browser's EventSource does: it records every
// event and comment line, and tells when the server ended the stream.
import { get, type IncomingMessage } from 'node:http';

export interface SseMessage {
  /** `event` for an event, `comment` for a line starting with a colon. */
  kind: 'event' | 'comment';
  event?: string;
  id?: string;
  data?: string;
  comment?: string;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** The body when the server answered with something other than a stream. */
  text: string;
  messages: SseMessage[];
  /** The `status` events' data, parsed. */
  statuses(): any[];
  ended: boolean;
  /** Resolves once `done` holds for the messages received so far; rejects after `timeoutMs`. */
  waitFor(done: (messages: SseMessage[]) => boolean, timeoutMs?: number): Promise<SseMessage[]>;
  /** Resolves when the server has ended the stream. */
  waitForEnd(timeoutMs?: number): Promise<void>;
  close(): void;
}

function parseBlock(block: string): SseMessage[] {
  const found: SseMessage[] = [];
  const event: SseMessage = { kind: 'event' };
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) found.push({ kind: 'comment', comment: line.slice(1).trim() });
    else if (line.startsWith('event:')) event.event = line.slice(6).trim();
    else if (line.startsWith('id:')) event.id = line.slice(3).trim();
    else if (line.startsWith('data:')) event.data = (event.data === undefined ? '' : `${event.data}\n`) + line.slice(5).trim();
  }
  if (event.event !== undefined || event.data !== undefined) found.push(event);
  return found;
}

export async function openStream(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  // node:http rather than fetch: aborting a fetch makes its pool open a spare connection, which
  // would hold the server under test open at shutdown until its header timeout.
  const request = get(url, { headers: { accept: 'text/event-stream', ...headers } });
  const response = await new Promise<IncomingMessage>((resolve, reject) => request.on('response', resolve).on('error', reject));
  response.setEncoding('utf8');
  const messages: SseMessage[] = [];
  let ended = false;
  let text = '';
  const streaming = response.statusCode === 200 && /text\/event-stream/.test(response.headers['content-type'] ?? '');
  const finished = new Promise<void>((resolve) => {
    let buffer = '';
    response.on('data', (chunk: string) => {
      if (!streaming) {
        text += chunk;
        return;
      }
      buffer += chunk;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        messages.push(...parseBlock(buffer.slice(0, end)));
        buffer = buffer.slice(end + 2);
      }
    });
    response.on('close', () => {
      ended = true;
      resolve();
    });
  });
  if (!streaming) await finished;

  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') responseHeaders.set(name, value);
  return {
    status: response.statusCode ?? 0,
    headers: responseHeaders,
    get text() {
      return text;
    },
    messages,
    statuses: () => messages.filter((m) => m.kind === 'event' && m.event === 'status').map((m) => JSON.parse(m.data as string)),
    get ended() {
      return ended;
    },
    async waitFor(done, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (!done(messages)) {
        if (Date.now() > deadline) throw new Error(`timed out; received ${JSON.stringify(messages)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return messages;
    },
    async waitForEnd(timeoutMs = 5000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`stream still open; received ${JSON.stringify(messages)}`)), timeoutMs);
      });
      await Promise.race([finished, timeout]).finally(() => clearTimeout(timer));
    },
    close: () => request.destroy(),
  };
}
