// Races for the invariant tests (issue 24): N requests fired at once, alternating over the instances
// of one database (two on PostgreSQL, as behind a load balancer; one on SQLite, whose file one process
// owns), and their outcomes counted, so that a test states exactly how many won and how the others lost.
import { secondInstance, stopSecond, type TestService } from '../support/service.js';

export interface Instances {
  /** `svc` first, then the instance started beside it (PostgreSQL only). */
  all: TestService[];
  /** Stops the instances started here; `svc` is the caller's to stop. */
  stop(): Promise<void>;
}

/**
 * The instances a race runs on: `svc`, and on PostgreSQL a second instance on its database (`env` for
 * that one). Both answer for `svc`'s PUBLIC_URL, as two instances behind one load balancer do: the
 * issuer identifiers, the audiences and the DPoP htu a wallet signs for are the same on either.
 */
export async function instancesOf(svc: TestService, env: Record<string, string> = {}): Promise<Instances> {
  const second = await secondInstance(svc, { PUBLIC_URL: svc.url, ...env });
  return {
    all: second === svc ? [svc] : [svc, second],
    stop: () => stopSecond(svc, second),
  };
}

/**
 * Sends `count` requests at once, the i-th to instance i mod n, and waits for all. Whatever is slow
 * (offers, signatures) belongs before the race: `send` should go straight to its request, so that
 * the requests overlap.
 */
export function race<R>(instances: readonly TestService[], count: number, send: (instance: TestService, index: number) => Promise<R>) {
  return Promise.all(Array.from({ length: count }, (_, index) => send(instances[index % instances.length] as TestService, index)));
}

/** What a reply amounts to: its status, with the OAuth error when it names one ("200", "400 invalid_grant"). */
export function outcome(reply: { status: number; body?: unknown }): string {
  const body = reply.body as { error?: unknown } | undefined;
  return typeof body?.error === 'string' ? `${reply.status} ${body.error}` : String(reply.status);
}

/** How many replies had each outcome, for an exact assertion: `expect(tally(replies)).toEqual({ '200': 1, '400 invalid_grant': 31 })`. */
export function tally<R extends { status: number; body?: unknown }>(replies: readonly R[], classify: (reply: R) => string = outcome) {
  return countOf(replies.map(classify));
}

/** How often each value occurs (rows by purpose, sessions by status, ...). */
export function countOf(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
