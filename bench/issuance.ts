// Complete pre-authorized SD-JWT VC flows per second (offer, offer fetch, token, nonce, credential),
// with 1 and 8 concurrent wallets, and the median latency of each request.
// Run: npx tsx bench/issuance.ts [flows per measurement, default 200]   (DB_TYPE=postgres for PostgreSQL)
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { json, median, startServiceProcess, throughput } from './support.js';

const flows = Number(process.argv[2] ?? 200);
const service = await startServiceProcess(39_000 + Math.floor(Math.random() * 1000));
const GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

try {
  const tenant = await json(`${service.url}/api/tenant`, {
    method: 'POST',
    token: service.rootToken,
    body: JSON.stringify({ id: 'bench', name: 'Bench', roles: ['issuance:manage', 'issuance:offer'] }),
  });
  const { access_token: admin } = await json(`${service.url}/api/oauth2/token`, {
    method: 'POST',
    body: JSON.stringify({ client_id: tenant.client.clientId, client_secret: tenant.client.secret }),
  });
  await json(`${service.url}/api/issuer/credentials`, {
    method: 'POST',
    token: admin,
    body: JSON.stringify({
      id: 'pid',
      config: { format: 'dc+sd-jwt' },
      vct: 'urn:eudi:pid:1',
      fields: ['given_name', 'family_name', 'birthdate', 'nationality'].map((name) => ({ path: [name], type: 'string' })),
    }),
  });
  const issuer = `${service.url}/issuers/bench`;
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  const latencies: Record<string, number[]> = { offer: [], 'offer fetch': [], token: [], nonce: [], credential: [] };
  const timed = async <T>(step: string, work: () => Promise<T>) => {
    const started = performance.now();
    const result = await work();
    latencies[step]?.push(performance.now() - started);
    return result;
  };

  const flow = async () => {
    const offer = await timed('offer', () =>
      json(`${service.url}/api/issuer/offer`, {
        method: 'POST',
        token: admin,
        body: JSON.stringify({
          response_type: 'uri',
          flow: 'pre_authorized_code',
          credentialConfigurationIds: ['pid'],
          credentialClaims: {
            pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12', nationality: 'DE' } },
          },
        }),
      }),
    );
    const credentialOffer = await timed('offer fetch', () => json(offer.credentialOfferUri));
    const token = await timed('token', () =>
      json(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: GRANT,
          'pre-authorized_code': credentialOffer.grants[GRANT]['pre-authorized_code'],
        }).toString(),
      }),
    );
    const { c_nonce } = await timed('nonce', () => json(`${issuer}/nonce`, { method: 'POST' }));
    const proof = await new SignJWT({ aud: issuer, nonce: c_nonce, iat: Math.floor(Date.now() / 1000) })
      .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk })
      .sign(privateKey);
    await timed('credential', () =>
      json(`${issuer}/credential`, {
        method: 'POST',
        token: token.access_token,
        body: JSON.stringify({ credential_configuration_id: 'pid', proofs: { jwt: [proof] } }),
      }),
    );
  };

  console.log(`issuance benchmark: ${flows} pre-authorized SD-JWT VC flows per measurement, database ${process.env.DB_TYPE ?? 'sqlite'}`);
  await throughput(20, 2, flow); // warm-up
  for (const concurrency of [1, 8]) {
    for (const list of Object.values(latencies)) list.length = 0;
    const rate = await throughput(flows, concurrency, flow);
    const steps = Object.entries(latencies)
      .map(([step, values]) => `${step} ${median(values).toFixed(1)} ms`)
      .join(', ');
    console.log(`${concurrency} wallet(s): ${rate.toFixed(1)} flows/s; median latency: ${steps}`);
  }
} finally {
  await service.stop();
}
