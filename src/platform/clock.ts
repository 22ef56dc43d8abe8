// What time it is, for the services that stamp and expire things (a signed list's issue time, a
// presentation's validity checks, a given certificate's expiry). The service runs on the system
// clock; a test hands in one it can move forward instead of waiting for the time to pass.

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
