// Two instances of the service on one PostgreSQL database, as behind a load balancer: pre-authorized
// SD-JWT VC issuance flows (as in bench/issuance.ts) with 8 wallets, half of them served by each
// instance, the tenant set up through the first. Prints the combined throughput, the errors (a flow
// that fails counts one and the run goes on), and per flow the two services' CPU, PostgreSQL's CPU
// and the database round trips of both (costMeter).
// Run: DB_TYPE=postgres npx tsx bench/two-instances.ts [flows, default 1000]
import { prepareIssuance } from './issuance-flow.js';
import { costMeter, median, startServiceProcess } from './support.js';

if (process.env.DB_TYPE !== 'postgres') throw new Error('two instances share a PostgreSQL database: run with DB_TYPE=postgres');
const flows = Number(process.argv[2] ?? 1000);
const WALLETS = 8;
const port = 42_000 + Math.floor(Math.random() * 1000);
const first = await startServiceProcess(port);
const second = await startServiceProcess(port + 1, first.shared);
const services = [first, second];

try {
  const flowsOn = [await prepareIssuance(first, 'bench'), await prepareIssuance(second, 'bench', 'pre-authorized', { setUp: false })];
  for (const flow of flowsOn) for (let i = 0; i < 10; i++) await flow.run(); // warm-up of each instance
  for (const flow of flowsOn) for (const list of Object.values(flow.latencies)) list.length = 0;
  const meter = costMeter(services);
  const before = await meter.sample();
  const done = [0, 0];
  const errors: string[] = [];
  let next = 0;
  const started = performance.now();
  // Wallet w talks to instance w % 2 throughout, as a sticky load balancer would send it.
  await Promise.all(
    Array.from({ length: WALLETS }, async (_, wallet) => {
      const instance = wallet % services.length;
      while (next < flows) {
        next++;
        try {
          await flowsOn[instance]?.run();
          done[instance] = (done[instance] ?? 0) + 1;
        } catch (err) {
          errors.push(`instance ${instance + 1}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cost = meter.perFlow(before, await meter.sample(), flows);
  console.log(`two instances on one PostgreSQL database, ${WALLETS} wallets split between them, ${flows} pre-authorized SD-JWT VC flows`);
  console.log(
    `${(flows / seconds).toFixed(1)} flows/s combined (instance 1: ${done[0]} flows, instance 2: ${done[1]}), ${errors.length} errors; ${cost} (both services)`,
  );
  for (const [i, flow] of flowsOn.entries()) {
    const steps = Object.entries(flow.latencies)
      .map(([step, values]) => `${step} ${median(values).toFixed(1)} ms`)
      .join(', ');
    console.log(`instance ${i + 1} median latency: ${steps}`);
  }
  for (const error of errors.slice(0, 5)) console.log(`error: ${error}`);
  if (errors.length > 0) process.exitCode = 1;
} finally {
  await second.stop();
  await first.stop();
}
