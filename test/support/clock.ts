// The clock a test service runs on: the system's time plus however far the test has moved it, so
// that a test which needs time to pass (a certificate, a credential, a signed list to age) moves it
// instead of sleeping. Only the services that take the clock see the move; everything else (the
// database, timers, tokens the service mints) keeps the real time.
import type { Clock } from '../../src/platform/clock.js';

export class TestClock implements Clock {
  private aheadMs = 0;

  now(): Date {
    return new Date(Date.now() + this.aheadMs);
  }

  /** Moves the service's time forward by `ms`. */
  advance(ms: number): void {
    this.aheadMs += ms;
  }
}
