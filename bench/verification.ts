// Complete OpenID4VP presentation flows per second (request created, request object fetched,
// encrypted presentation posted and verified with its status checked, the session polled until it
// has its result), with 1 and 8 concurrent wallets, for an SD-JWT VC (with KB-JWT, in a status list)
// and for an mso_mdoc (a DeviceResponse signed over the OpenID4VP session transcript): the service's
// CPU, PostgreSQL's CPU and the database round trips per flow (costMeter), the round trips of each
// request, and the median latency of each request.
// Run: npx tsx bench/verification.ts [flows per measurement, default 200]   (DB_TYPE=postgres for PostgreSQL)
import 'reflect-metadata';
import { IssuerSigned } from '@owf/mdoc';
import { exportJWK } from 'jose';
import { presentMdoc } from '../test/support/mdoc-wallet.js';
import { preparePresentation } from './presentation-flow.js';
import { calibration, costMeter, median, startServiceProcess, throughput } from './support.js';

const flows = Number(process.argv[2] ?? 200);
const service = await startServiceProcess(40_000 + Math.floor(Math.random() * 1000));
const meter = costMeter([service]);
const DOC_TYPE = 'org.iso.18013.5.1.mDL';
const NS = 'org.iso.18013.5.1';

try {
  // The tenant with its PID configuration, trust list and 'kyc' presentation configuration
  // (bench/presentation-flow.ts); an mDL configuration and its presentation configuration beside them.
  const tenant = await preparePresentation(service, 'bench');
  const { post, latencies } = tenant;
  await post('/api/issuer/credentials', {
    id: 'mdl',
    config: { format: 'mso_mdoc', docType: DOC_TYPE },
    fields: ['family_name', 'given_name', 'birth_date'].map((name) => ({ path: [name], type: 'string', namespace: NS })),
  });
  await post('/api/verifier/config', {
    id: 'mdl-check',
    dcql_query: {
      credentials: [
        {
          id: 'mdl',
          format: 'mso_mdoc',
          meta: { doctype_value: DOC_TYPE },
          claims: [{ path: [NS, 'given_name'] }, { path: [NS, 'family_name'] }],
        },
      ],
    },
  });

  // One credential of each format, issued once, presented in every flow.
  const sdJwtFlow = await tenant.sdJwtFlow();
  const mdoc = IssuerSigned.fromEncodedForOid4Vci(
    await tenant.issue('mdl', { [NS]: { given_name: 'Erika', family_name: 'Mustermann', birth_date: '1964-08-12' } }),
  );
  const holderPrivateJwk = await exportJWK(tenant.holder.privateKey);
  // The session transcript: client_id, nonce, response_uri and the thumbprint of the request's encryption key.
  const mdocFlow = tenant.flowFor('mdl-check', async (request) => {
    const resolved = {
      clientId: request.client_id,
      nonce: request.nonce,
      responseUri: request.response_uri,
      responseMode: request.response_mode,
      payload: request,
    };
    const { vpToken } = await presentMdoc(resolved, {
      docType: DOC_TYPE,
      namespace: NS,
      elements: ['given_name', 'family_name'],
      issuerSigned: mdoc,
      holder: holderPrivateJwk,
    });
    return vpToken;
  });

  console.log(
    `verification benchmark: ${flows} presentation flows (direct_post.jwt) per measurement and format, database ${process.env.DB_TYPE ?? 'sqlite'}`,
  );
  for (const [format, flow] of [
    ['SD-JWT VC', sdJwtFlow],
    ['mso_mdoc ', mdocFlow],
  ] as const) {
    await throughput(20, 2, flow); // warm-up
    const perStep = Object.entries(await tenant.roundTripsPerStep(flow))
      .map(([step, count]) => `${step} ${count}`)
      .join(', ');
    console.log(`${format}: database round trips per request: ${perStep}`);
    for (const concurrency of [1, 8]) {
      for (const list of Object.values(latencies)) list.length = 0;
      const before = await meter.sample();
      const rate = await throughput(flows, concurrency, flow);
      const cost = meter.perFlow(before, await meter.sample(), flows);
      const steps = Object.entries(latencies)
        .map(([step, values]) => `${step} ${median(values).toFixed(1)} ms`)
        .join(', ');
      console.log(`${format} ${concurrency} wallet(s): ${rate.toFixed(1)} flows/s, ${cost}; median latency: ${steps}`);
      if (concurrency === 8 && process.env.DB_TYPE === 'postgres') {
        console.log(`${format}, 8 wallets: CPU per flow target service + PostgreSQL <= 6 ms (where \`node -e ""\` takes 90 ms)`);
      }
    }
  }
  console.log(calibration());
} finally {
  await service.stop();
}
