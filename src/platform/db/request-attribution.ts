// Which database statements a request sent: the statements an instance sends while it answers an
// HTTP request are counted apart from those of its background work (the rate-limit batches, the
// webhook outbox, scheduled jobs) and of the metrics scrape itself, so that a benchmark reading the
// count around one request sees what that request cost the database, whatever ran meanwhile.
import { AsyncLocalStorage } from 'node:async_hooks';

const answering = new AsyncLocalStorage<true>();

/** Whether the code running now serves an HTTP request (and so do the statements it sends). */
export const inRequest = (): boolean => answering.getStore() === true;

/**
 * Marks the rest of the current execution (and what it starts) as serving a request. Called from the
 * request's hooks: Fastify continues a request from the socket's callbacks after reading its body,
 * outside any scope a `run` could open around the handler, so the mark is set again at each hook.
 */
export const markAnsweringRequest = (): void => answering.enterWith(true);

/**
 * Runs `work` as background work: a timer or a batch a request merely starts (a rate-limit sync, a
 * webhook delivery round) is not that request's cost, however long it runs after it.
 */
export const outsideRequests = <T>(work: () => T): T => answering.exit(work);
