// When a failed webhook delivery is tried again: first after each of WEBHOOK_RETRY_DELAYS_MS, then
// after twice the wait before, until WEBHOOK_RETRY_HORIZON_SECONDS after its event; a retry that
// would come later is not made. Each wait is stretched by up to JITTER of itself, so that the
// deliveries an outage of one receiver held back do not all come back at the same moment.

/** Each wait is its planned length times a factor in [1, 1 + JITTER). */
export const JITTER = 0.2;

/** The planned wait after failed attempt number `attempt` (1-based), without jitter. */
export function plannedDelayMs(attempt: number, delaysMs: readonly number[]): number {
  if (attempt <= delaysMs.length) return delaysMs[attempt - 1] as number;
  // No list at all: a second to start from, so that a retry still comes.
  const last = delaysMs.at(-1) ?? 1000;
  return last * 2 ** (attempt - delaysMs.length);
}

export interface RetryPlan {
  /** The attempts made so far, the failed one included. */
  attempts: number;
  /** When the event was written (ms since the epoch). */
  createdAt: number;
  /** When the failed attempt ended (ms since the epoch). */
  now: number;
  delaysMs: readonly number[];
  horizonSeconds: number;
  /** In [0, 1): Math.random unless a test fixes it. */
  random?: number;
}

/** When to try again after a failed attempt; undefined when that would be past the horizon (the delivery has failed). */
export function nextAttemptAt(plan: RetryPlan): number | undefined {
  const random = plan.random ?? Math.random();
  const wait = plannedDelayMs(plan.attempts, plan.delaysMs) * (1 + JITTER * random);
  // Rounded down: the wait stays below its planned length times (1 + JITTER), as the factor does.
  const at = plan.now + Math.floor(wait);
  return at > plan.createdAt + plan.horizonSeconds * 1000 ? undefined : at;
}
