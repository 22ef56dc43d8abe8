// Complete SD-JWT VC issuance flows per second, pre-authorized and by authorization code (with DPoP
// and wallet attestation at PAR and the token endpoint), with 1 and 8 concurrent wallets: the service's
// CPU, PostgreSQL's CPU and the database round trips per flow (costMeter), the round trips of each
// request, and the median latency of each request. On PostgreSQL, last, the statements that cost the
// server most over the whole run (pg_stat_statements, planning time included).
// Run: npx tsx bench/issuance.ts [flows per measurement, default 200]   (DB_TYPE=postgres for PostgreSQL;
// DB_PREPARED_STATEMENTS=false and the service's other settings reach it from the environment;
// BENCH_WALLETS=1,8 the concurrencies measured)
import { prepareIssuance } from './issuance-flow.js';
import { statementStatistics, topStatements } from './statements.js';
import { calibration, costMeter, median, newDeployment, startServiceProcess, throughput } from './support.js';

const flows = Number(process.argv[2] ?? 200);
/** Concurrent wallets per measurement: BENCH_WALLETS=8 measures only the 8-wallet case. */
const wallets = (process.env.BENCH_WALLETS ?? '1,8').split(',').map(Number);
const deployment = await newDeployment();
const statements = process.env.DB_TYPE === 'postgres' ? await statementStatistics(deployment.database) : undefined;

/** The wallet's requests of each flow (the management offer and the metadata aside), and the round trips they may take on PostgreSQL. */
const ROUND_TRIP_TARGETS = {
  'pre-authorized': { steps: ['offer fetch', 'token', 'nonce', 'credential', 'notification'], target: 9 },
  'authorization code': { steps: ['par', 'authorize', 'token', 'nonce', 'credential', 'notification'], target: 12 },
} as const;
/** CPU per flow the flows may take with 8 wallets, on a quiet machine where `node -e ""` takes 90 ms. */
const CPU_TARGETS = {
  'pre-authorized': { postgres: 'service + PostgreSQL <= 8 ms', sqlite: 'no target' },
  'authorization code': { postgres: 'service + PostgreSQL <= 9 ms', sqlite: 'service <= 6 ms' },
} as const;
const database = process.env.DB_TYPE === 'postgres' ? 'postgres' : 'sqlite';
const service = await startServiceProcess(39_000 + Math.floor(Math.random() * 1000), deployment);
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
    for (const concurrency of wallets) {
      for (const list of Object.values(flow.latencies)) list.length = 0;
      const before = await meter.sample();
      const rate = await throughput(flows, concurrency, flow.run);
      const cost = meter.perFlow(before, await meter.sample(), flows);
      const steps = Object.entries(flow.latencies)
        .map(([step, values]) => `${step} ${median(values).toFixed(1)} ms`)
        .join(', ');
      console.log(`${kind}, ${concurrency} wallet(s): ${rate.toFixed(1)} flows/s, ${cost}; median latency: ${steps}`);
      if (concurrency === 8)
        console.log(`${kind}, 8 wallets: CPU per flow target ${CPU_TARGETS[kind][database]} (where \`node -e ""\` takes 90 ms)`);
    }
  }
  if (statements) console.log(await topStatements(statements, 8));
  console.log(calibration());
} finally {
  await service.stop();
  await deployment.database.drop();
}
