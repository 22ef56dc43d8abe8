// Complete SD-JWT VC issuance flows per second, pre-authorized and by authorization code (with DPoP
// and wallet attestation at PAR and the token endpoint), with 1 and 8 concurrent wallets: server CPU per flow and the median latency of each request.
// Run: npx tsx bench/issuance.ts [flows per measurement, default 200]   (DB_TYPE=postgres for PostgreSQL)
import { prepareIssuance } from './issuance-flow.js';
import { median, startServiceProcess, throughput } from './support.js';

const flows = Number(process.argv[2] ?? 200);
const service = await startServiceProcess(39_000 + Math.floor(Math.random() * 1000));

try {
  console.log(`issuance benchmark: ${flows} SD-JWT VC flows per measurement, database ${process.env.DB_TYPE ?? 'sqlite'}`);
  for (const [kind, tenantId] of [
    ['pre-authorized', 'bench'],
    ['authorization code', 'bench-code'],
  ] as const) {
    const flow = await prepareIssuance(service, tenantId, kind);
    await throughput(20, 2, flow.run); // warm-up
    for (const concurrency of [1, 8]) {
      for (const list of Object.values(flow.latencies)) list.length = 0;
      const cpuBefore = service.cpuMs();
      const rate = await throughput(flows, concurrency, flow.run);
      const cpuPerFlow = (service.cpuMs() - cpuBefore) / flows;
      const steps = Object.entries(flow.latencies)
        .map(([step, values]) => `${step} ${median(values).toFixed(1)} ms`)
        .join(', ');
      console.log(
        `${kind}, ${concurrency} wallet(s): ${rate.toFixed(1)} flows/s, server CPU ${cpuPerFlow.toFixed(2)} ms/flow; median latency: ${steps}`,
      );
    }
  }
} finally {
  await service.stop();
}
