// Server CPU per SD-JWT VC issuance flow (pre-authorized, one wallet at a time) when the credential
// is signed by a key in a PKCS#11 token (SoftHSM2, through the session pool) beside one whose key is
// sealed in the database: the same flow, two tenants, measured in alternating rounds so that both
// see the same machine. Each round's CPU per flow is noted; the medians are reported.
// Run: npx tsx bench/kms.ts [rounds, default 10] [flows per round, default 50]   (DB_TYPE=postgres for PostgreSQL)

import { SOFTHSM_MODULE, softHsm } from '../test/support/softhsm.js';
import { prepareIssuance } from './issuance-flow.js';
import { median, startServiceProcess, throughput } from './support.js';

const rounds = Number(process.argv[2] ?? 10);
const flows = Number(process.argv[3] ?? 50);
const PIN = '123456';
const hsm = softHsm('svc-bench', PIN);
// The service process inherits these: the token's folder, the provider file, and the PIN it names.
process.env.HSM_PIN = PIN;
process.env.KMS_PROVIDERS = hsm.kmsFile({
  providers: [{ id: 'hsm', type: 'pkcs11', module: SOFTHSM_MODULE, tokenLabel: 'svc-bench', pin: { env: 'HSM_PIN' } }],
});
const service = await startServiceProcess(40_000 + Math.floor(Math.random() * 1000));

try {
  console.log(
    `key provider benchmark: ${rounds} rounds of ${flows} pre-authorized SD-JWT VC flows each, database ${process.env.DB_TYPE ?? 'sqlite'}`,
  );
  const kinds = {
    db: await prepareIssuance(service, 'bench-db'),
    'pkcs11 (SoftHSM2)': await prepareIssuance(service, 'bench-hsm', 'pre-authorized', {
      attestationKeyChain: { id: 'hsm-attestation', type: 'internalChain', kmsProvider: 'hsm', externalKeyId: 'bench-attestation' },
    }),
  };
  for (const flow of Object.values(kinds)) await throughput(20, 1, flow.run); // warm-up
  const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(kinds).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, flow] of Object.entries(kinds)) {
      const before = service.cpuMs();
      await throughput(flows, 1, flow.run);
      cpu[name]?.push((service.cpuMs() - before) / flows);
    }
  }
  for (const [name, flow] of Object.entries(kinds)) {
    console.log(
      `${name}: server CPU ${median(cpu[name] ?? []).toFixed(2)} ms/flow (median of ${rounds} rounds); credential request ${median(flow.latencies.credential ?? []).toFixed(1)} ms (median)`,
    );
  }
} finally {
  await service.stop();
  hsm.remove();
}
