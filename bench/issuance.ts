// Complete SD-JWT VC issuance flows per second, pre-authorized and by authorization code (with DPoP
// and wallet attestation at PAR and the token endpoint), with 1 and 8 concurrent wallets: the service's
// CPU, PostgreSQL's CPU and the database round trips per flow (costMeter), the round trips of each
// request, and the median latency of each request.
// Run: npx tsx bench/issuance.ts [flows per measurement, default 200]   (DB_TYPE=postgres for PostgreSQL)
import { prepareIssuance } from './issuance-flow.js';
import { costMeter, median, startServiceProcess, throughput } from './support.js';

const flows = Number(process.argv[2] ?? 200);

/** The wallet's requests of each flow (the management offer and the metadata aside), and the round trips they may take on PostgreSQL. */
const ROUND_TRIP_TARGETS = {
  'pre-authorized': { steps: ['offer fetch', 'token', 'nonce', 'credential', 'notification'], target: 9 },
  'authorization code': { steps: ['par', 'authorize', 'token', 'nonce', 'credential', 'notification'], target: 12 },
} as const;
const service = await startServiceProcess(39_000 + Math.floor(Math.random() * 1000));
const meter = costMeter([service]);

try {
  console.log(`issuance benchmark: ${flows} SD-JWT VC flows per measurement, database ${process.env.DB_TYPE ?? 'sqlite'}`);
  for (const [kind, tenantId] of [
    ['pre-authorized', 'bench'],
    ['authorization code', 'bench-code'],
  ] as const) {
    const flow = await prepareIssuance(service, tenantId, kind);
    await throughput(20, 2, flow.run); // warm-up
    const trips = await flow.roundTripsPerStep();
    const perStep = Object.entries(trips)
      .map(([step, count]) => `${step} ${count}`)
      .join(', ');
    console.log(`${kind}: database round trips per request: ${perStep}`);
    const { steps: counted, target } = ROUND_TRIP_TARGETS[kind];
    const total = counted.reduce((sum, step) => sum + (trips[step] ?? 0), 0);
    console.log(`${kind}: round trips per flow (${counted[0]}..${counted.at(-1)}) ${total.toFixed(1)} (target <= ${target})`);
    for (const concurrency of [1, 8]) {
      for (const list of Object.values(flow.latencies)) list.length = 0;
      const before = await meter.sample();
      const rate = await throughput(flows, concurrency, flow.run);
      const cost = meter.perFlow(before, await meter.sample(), flows);
      const steps = Object.entries(flow.latencies)
        .map(([step, values]) => `${step} ${median(values).toFixed(1)} ms`)
        .join(', ');
      console.log(`${kind}, ${concurrency} wallet(s): ${rate.toFixed(1)} flows/s, ${cost}; median latency: ${steps}`);
    }
  }
} finally {
  await service.stop();
}
