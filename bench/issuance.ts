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
import { costMeter, median, newDeployment, startServiceProcess, throughput } from './support.js';

const flows = Number(process.argv[2] ?? 200);
/** Concurrent wallets per measurement: BENCH_WALLETS=8 measures only the 8-wallet case. */
const wallets = (process.env.BENCH_WALLETS ?? '1,8').split(',').map(Number);
const deployment = await newDeployment();
const statements = process.env.DB_TYPE === 'postgres' ? await statementStatistics(deployment.database) : undefined;
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
    const perStep = Object.entries(await flow.roundTripsPerStep())
      .map(([step, count]) => `${step} ${count}`)
      .join(', ');
    console.log(`${kind}: database round trips per request: ${perStep}`);
    for (const concurrency of wallets) {
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
  if (statements) console.log(await topStatements(statements, 8));
} finally {
  await service.stop();
  await deployment.database.drop();
}
