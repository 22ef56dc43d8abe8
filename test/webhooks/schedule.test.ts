// The retry schedule of a failed webhook delivery, as a function of the attempts made: the listed
// delays, then doubling, each stretched by a jitter within its bounds, and nothing past the horizon.
import { describe, expect, it } from 'vitest';
import { JITTER, nextAttemptAt, plannedDelayMs } from '../../src/webhooks/schedule.js';

const DELAYS = [1000, 5000, 15000];

describe('the retry schedule', () => {
  it('takes the listed delays first, then doubles the last one', () => {
    expect([1, 2, 3, 4, 5, 6].map((attempt) => plannedDelayMs(attempt, DELAYS))).toEqual([1000, 5000, 15000, 30000, 60000, 120000]);
    expect([1, 2, 3].map((attempt) => plannedDelayMs(attempt, [10]))).toEqual([10, 20, 40]);
  });

  it('stretches each wait by a jitter within [1, 1 + JITTER) of it', () => {
    const plan = { attempts: 4, createdAt: 0, now: 100_000, delaysMs: DELAYS, horizonSeconds: 86_400 };
    expect(nextAttemptAt({ ...plan, random: 0 })).toBe(100_000 + 30_000);
    expect(nextAttemptAt({ ...plan, random: 0.999999 })).toBe(100_000 + Math.floor(30_000 * (1 + JITTER * 0.999999)));
    for (let i = 0; i < 200; i++) {
      const at = nextAttemptAt(plan) as number;
      expect(at).toBeGreaterThanOrEqual(130_000);
      expect(at).toBeLessThan(100_000 + 30_000 * (1 + JITTER));
    }
  });

  it('stops at the horizon after the event: a retry that would come later is not made', () => {
    const plan = { createdAt: 0, delaysMs: DELAYS, horizonSeconds: 60, random: 0 };
    expect(nextAttemptAt({ ...plan, attempts: 1, now: 58_000 })).toBe(59_000);
    expect(nextAttemptAt({ ...plan, attempts: 1, now: 59_000 })).toBe(60_000);
    expect(nextAttemptAt({ ...plan, attempts: 1, now: 59_001 })).toBeUndefined();
    // The planned attempts of a day-long horizon with the default delays: 1 s, 5 s, 15 s, then doubling.
    const times: number[] = [];
    let now = 0;
    for (let attempts = 1; ; attempts++) {
      const at = nextAttemptAt({ attempts, createdAt: 0, now, delaysMs: DELAYS, horizonSeconds: 86_400, random: 0 });
      if (at === undefined) break;
      times.push(at);
      now = at;
    }
    expect(times.slice(0, 5)).toEqual([1000, 6000, 21000, 51000, 111000]);
    expect(times.at(-1)).toBeLessThanOrEqual(86_400_000);
    expect(times.length).toBe(14);
  });
});
