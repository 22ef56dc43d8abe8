// What the rate limits cost: the service's CPU and database round trips per pre-authorized SD-JWT VC
// issuance flow (offer, token, nonce, credential, notification: the wallet's requests are limited),
// on two instances side by side, one with the limits on (limits it never reaches, counted and synced
// as in production) and one with RATE_LIMITS_ENABLED=false, measured in alternating rounds so that
// the machine's pace weighs on both alike (the difference is the median of each round's on - off).
// On a busy machine those figures are noisy, so the decision alone is also timed in-process: the
// limiter's admit (as the route hook calls it, twice per limited request) over a store that answers
// at once. Calibration: an ES256 signature and `node -e ""`.
// Run: npx tsx bench/rate-limit.ts [flows per round, default 200] [rounds, default 5]   (DB_TYPE=postgres for PostgreSQL)
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, sign } from 'node:crypto';
import { RateLimiter } from '../src/platform/rate-limits/limiter.js';
import type { SharedWindows, WindowDelta } from '../src/platform/rate-limits/windows.js';
import { prepareIssuance } from './issuance-flow.js';
import { median, startServiceProcess, throughput } from './support.js';

const flows = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 5);
const port = 41_000 + Math.floor(Math.random() * 1000);
const on = await startServiceProcess(port);
const off = await startServiceProcess(port + 1, undefined, { env: { RATE_LIMITS_ENABLED: 'false' } });

try {
  console.log(`rate limit cost: ${flows} pre-authorized flows per round, ${rounds} rounds, database ${process.env.DB_TYPE ?? 'sqlite'}`);
  const instances = [
    { name: 'limits on', service: on, cpu: [] as number[], trips: [] as number[] },
    { name: 'limits off', service: off, cpu: [] as number[], trips: [] as number[] },
  ];
  const prepared = await Promise.all(instances.map(({ service }) => prepareIssuance(service, 'bench', 'pre-authorized')));
  for (const flow of prepared) await throughput(30, 1, flow.run); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const [i, instance] of instances.entries()) {
      const flow = prepared[i];
      if (!flow) continue;
      const cpuBefore = instance.service.cpuMs();
      const tripsBefore = await instance.service.roundTrips();
      await throughput(flows, 1, flow.run);
      instance.cpu.push((instance.service.cpuMs() - cpuBefore) / flows);
      instance.trips.push(((await instance.service.roundTrips()) - tripsBefore) / flows);
    }
  }
  for (const { name, cpu, trips } of instances) {
    console.log(
      `${name}: service CPU median ${median(cpu).toFixed(3)} ms/flow (rounds ${cpu.map((v) => v.toFixed(2)).join(', ')}), DB round trips ${median(trips).toFixed(2)}/flow`,
    );
  }
  const [withLimits, without] = instances;
  if (withLimits && without) {
    const paired = (a: number[], b: number[]) => median(a.map((value, i) => value - (b[i] ?? Number.NaN)));
    console.log(
      `difference (median of rounds' on - off): ${paired(withLimits.cpu, without.cpu).toFixed(3)} ms service CPU per flow (budget 0.5), ${paired(withLimits.trips, without.trips).toFixed(2)} round trips per flow`,
    );
  }
  const perAdmitUs = await admitMicroseconds();
  // A pre-authorized flow makes 4 limited requests (token, nonce, credential, notification), each admitted per address and per tenant.
  console.log(`in-process: admit ${perAdmitUs.toFixed(2)} µs each; 8 per flow: ${((perAdmitUs * 8) / 1000).toFixed(4)} ms per flow`);
  console.log(
    `calibration: ES256 sign (node:crypto) median ${es256SignMs().toFixed(3)} ms; \`node -e ""\` median ${bareNodeMs().toFixed(0)} ms`,
  );
} finally {
  await on.stop();
  await off.stop();
}

/** Median microseconds of one admit, over rounds of 100,000 spread over 1,000 addresses at one tenant. */
async function admitMicroseconds(): Promise<number> {
  const store: SharedWindows = {
    addAll: async (deltas: readonly WindowDelta[]) => new Map(deltas.map(({ window, delta }) => [window.id, delta])),
    close: async () => {},
  };
  const limiter = new RateLimiter(store, () => {});
  const limit = { requests: 100_000_000, windowSeconds: 60 };
  const times: number[] = [];
  for (let round = 0; round < 7; round++) {
    const started = performance.now();
    for (let i = 0; i < 100_000; i++) await limiter.admit(`token:a:${JSON.stringify(['bench', `10.0.${i % 1000}`])}`, limit);
    times.push(((performance.now() - started) * 1000) / 100_000);
  }
  await limiter.close();
  return median(times);
}

function es256SignMs(): number {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const input = Buffer.from('calibration');
  const times = Array.from({ length: 200 }, () => {
    const started = performance.now();
    sign('sha256', input, { key: privateKey, dsaEncoding: 'ieee-p1363' });
    return performance.now() - started;
  });
  return median(times);
}

function bareNodeMs(): number {
  const times = Array.from({ length: 5 }, () => {
    const started = performance.now();
    execFileSync(process.execPath, ['-e', '']);
    return performance.now() - started;
  });
  return median(times);
}
