// A stopping instance gives back its job leases: another instance on the same database runs the
// jobs at its next round instead of waiting up to an interval for the leases to run out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTwoInstances, stopInstances, type TestService } from '../support/service.js';

let a: TestService;
let b: TestService;
beforeAll(async () => {
  [a, b] = await startTwoInstances();
});
afterAll(() => stopInstances(a, b));

const leases = () => b.db.selectFrom('job_leases').select(['name', 'holder', 'lease_until']).orderBy('name').execute();

describe('job leases', () => {
  it('are held by the instance that took them until it stops, then taken by another at its next round', async () => {
    await a.running.services.scheduler.tick();
    const taken = await leases();
    expect(taken.length).toBeGreaterThan(0);
    const holderA = taken[0]?.holder;
    expect(taken.every((lease) => lease.holder === holderA)).toBe(true);

    // While A holds them, B's round runs nothing and takes nothing.
    await b.running.services.scheduler.tick();
    expect(await leases()).toEqual(taken);

    await a.running.close();
    expect(await leases()).toEqual([]);

    await b.running.services.scheduler.tick();
    const retaken = await leases();
    expect(retaken.map((lease) => lease.name)).toEqual(taken.map((lease) => lease.name));
    expect(retaken.every((lease) => lease.holder !== holderA)).toBe(true);
  });
});
