// Complete OpenID4VP presentation flows per second (request created, request object fetched,
// encrypted SD-JWT VC presentation posted and verified), with 1 and 8 concurrent wallets.
// Run: npx tsx bench/verification.ts [flows per measurement, default 200]   (DB_TYPE=postgres for PostgreSQL)
import { createHash } from 'node:crypto';
import { CompactEncrypt, decodeJwt, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { json, median, startServiceProcess, throughput } from './support.js';

const flows = Number(process.argv[2] ?? 200);
const service = await startServiceProcess(40_000 + Math.floor(Math.random() * 1000));
const GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const sha256 = (data: string) => createHash('sha256').update(data).digest('base64url');

try {
  const tenant = await json(`${service.url}/api/tenant`, {
    method: 'POST',
    token: service.rootToken,
    body: JSON.stringify({
      id: 'bench',
      name: 'Bench',
      roles: ['issuance:manage', 'issuance:offer', 'presentation:manage', 'presentation:request'],
    }),
  });
  const { access_token: admin } = await json(`${service.url}/api/oauth2/token`, {
    method: 'POST',
    body: JSON.stringify({ client_id: tenant.client.clientId, client_secret: tenant.client.secret }),
  });
  const post = (path: string, body: unknown) => json(`${service.url}${path}`, { method: 'POST', token: admin, body: JSON.stringify(body) });
  await post('/api/issuer/credentials', {
    id: 'pid',
    config: { format: 'dc+sd-jwt' },
    vct: 'urn:eudi:pid:1',
    fields: ['given_name', 'family_name', 'birthdate'].map((name) => ({ path: [name], type: 'string' })),
  });
  await post('/api/trust-list', { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] });
  await post('/api/verifier/config', {
    id: 'kyc',
    dcql_query: {
      credentials: [
        {
          id: 'pid',
          format: 'dc+sd-jwt',
          meta: { vct_values: ['urn:eudi:pid:1'] },
          claims: [{ path: ['given_name'] }, { path: ['family_name'] }],
        },
      ],
    },
  });

  // One credential, issued once, presented in every flow.
  const holder = await generateKeyPair('ES256', { extractable: true });
  const holderJwk = await exportJWK(holder.publicKey);
  const issuer = `${service.url}/issuers/bench`;
  const offer = await post('/api/issuer/offer', {
    response_type: 'uri',
    flow: 'pre_authorized_code',
    credentialConfigurationIds: ['pid'],
    credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12' } } },
  });
  const token = await json(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: GRANT,
      'pre-authorized_code': offer.credentialOffer.grants[GRANT]['pre-authorized_code'],
    }).toString(),
  });
  const { c_nonce } = await json(`${issuer}/nonce`, { method: 'POST' });
  const proof = await new SignJWT({ aud: issuer, nonce: c_nonce, iat: Math.floor(Date.now() / 1000) })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: holderJwk })
    .sign(holder.privateKey);
  const issued = await json(`${issuer}/credential`, {
    method: 'POST',
    token: token.access_token,
    body: JSON.stringify({ credential_configuration_id: 'pid', proofs: { jwt: [proof] } }),
  });
  const credential: string = issued.credentials[0].credential;

  const latencies: Record<string, number[]> = { request: [], 'request object': [], response: [] };
  const timed = async <T>(step: string, work: () => Promise<T>) => {
    const started = performance.now();
    const result = await work();
    latencies[step]?.push(performance.now() - started);
    return result;
  };
  const flow = async () => {
    const created = await timed('request', () => post('/api/verifier/offer', { response_type: 'uri', requestId: 'kyc' }));
    const jar = await timed('request object', () => fetch(created.requestUri).then((r) => r.text()));
    const request = decodeJwt(jar) as Record<string, any>;
    const kb = await new SignJWT({
      iat: Math.floor(Date.now() / 1000),
      aud: request.client_id,
      nonce: request.nonce,
      sd_hash: sha256(credential),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'kb+jwt' })
      .sign(holder.privateKey);
    const encryptionKey = request.client_metadata.jwks.keys[0] as JWK;
    const response = await new CompactEncrypt(
      new TextEncoder().encode(JSON.stringify({ vp_token: { pid: [`${credential}${kb}`] }, state: request.state })),
    )
      .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128GCM', kid: encryptionKey.kid })
      .encrypt(await importJWK(encryptionKey, 'ECDH-ES'));
    await timed('response', () =>
      json(request.response_uri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ response }).toString(),
      }),
    );
  };

  console.log(
    `verification benchmark: ${flows} SD-JWT VC presentation flows (direct_post.jwt) per measurement, database ${process.env.DB_TYPE ?? 'sqlite'}`,
  );
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
