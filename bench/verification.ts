// Complete OpenID4VP presentation flows per second (request created, request object fetched,
// encrypted presentation posted and verified with its status checked, the session polled until it
// has its result), with 1 and 8 concurrent wallets, for an SD-JWT VC (with KB-JWT, in a status list)
// and for an mso_mdoc (a DeviceResponse signed over the OpenID4VP session transcript): the service's
// CPU, PostgreSQL's CPU and the database round trips per flow (costMeter), the round trips of each
// request, and the median latency of each request.
// Run: npx tsx bench/verification.ts [flows per measurement, default 200]   (DB_TYPE=postgres for PostgreSQL)
import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { IssuerSigned } from '@owf/mdoc';
import { CompactEncrypt, decodeJwt, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { presentMdoc } from '../test/support/mdoc-wallet.js';
import { costMeter, json, median, startServiceProcess, throughput } from './support.js';

const flows = Number(process.argv[2] ?? 200);
const service = await startServiceProcess(40_000 + Math.floor(Math.random() * 1000));
const meter = costMeter([service]);
const GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const sha256 = (data: string) => createHash('sha256').update(data).digest('base64url');
const DOC_TYPE = 'org.iso.18013.5.1.mDL';
const NS = 'org.iso.18013.5.1';

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
    statusManagement: true,
    vct: 'urn:eudi:pid:1',
    fields: ['given_name', 'family_name', 'birthdate'].map((name) => ({ path: [name], type: 'string' })),
  });
  await post('/api/issuer/credentials', {
    id: 'mdl',
    config: { format: 'mso_mdoc', docType: DOC_TYPE },
    fields: ['family_name', 'given_name', 'birth_date'].map((name) => ({ path: [name], type: 'string', namespace: NS })),
  });
  // The issuer's credentials and its status lists' signer.
  await post('/api/trust-list', {
    id: 'issuers',
    entities: [
      { type: 'internal', keyChainId: 'default-attestation' },
      { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
    ],
  });
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
  const holder = await generateKeyPair('ES256', { extractable: true });
  const holderJwk = await exportJWK(holder.publicKey);
  const issuer = `${service.url}/issuers/bench`;
  /** The pre-authorized flow for one configuration, with a jwt proof of the holder key. */
  const issue = async (configurationId: string, claims: Record<string, unknown>): Promise<string> => {
    const offer = await post('/api/issuer/offer', {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: [configurationId],
      credentialClaims: { [configurationId]: { type: 'inline', claims } },
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
      body: JSON.stringify({ credential_configuration_id: configurationId, proofs: { jwt: [proof] } }),
    });
    return issued.credentials[0].credential;
  };
  const credential = await issue('pid', { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12' });
  const mdoc = IssuerSigned.fromEncodedForOid4Vci(
    await issue('mdl', { [NS]: { given_name: 'Erika', family_name: 'Mustermann', birth_date: '1964-08-12' } }),
  );
  const holderPrivateJwk = await exportJWK(holder.privateKey);

  const latencies: Record<string, number[]> = { request: [], 'request object': [], response: [], result: [] };
  let stepRoundTrips: Record<string, number> | undefined;
  const timed = async <T>(step: string, work: () => Promise<T>) => {
    const counted = stepRoundTrips && (await service.roundTrips());
    const started = performance.now();
    const result = await work();
    latencies[step]?.push(performance.now() - started);
    if (stepRoundTrips && counted !== undefined) stepRoundTrips[step] = (await service.roundTrips()) - counted;
    return result;
  };
  /** The session as the relying party's back end polls it, until it has its result. */
  const pollResult = async (session: string) => {
    for (let polls = 0; polls < 100; polls++) {
      const state = await json(`${service.url}/api/session/${session}`, { token: admin });
      if (state.status === 'completed') return;
      if (state.status === 'failed' || state.status === 'expired') throw new Error(`session ${session}: ${state.status}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`session ${session}: no result`);
  };
  /** One presentation flow: `vpToken` builds the presentation(s) for the decoded request object. */
  const flowFor = (requestId: string, vpToken: (request: Record<string, any>) => Promise<Record<string, string[]>>) => async () => {
    const created = await timed('request', () => post('/api/verifier/offer', { response_type: 'uri', requestId }));
    const jar = await timed('request object', () => fetch(created.requestUri).then((r) => r.text()));
    const request = decodeJwt(jar) as Record<string, any>;
    const encryptionKey = request.client_metadata.jwks.keys[0] as JWK;
    const response = await new CompactEncrypt(
      new TextEncoder().encode(JSON.stringify({ vp_token: await vpToken(request), state: request.state })),
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
    await timed('result', () => pollResult(created.session));
  };
  const sdJwtFlow = flowFor('kyc', async (request) => {
    const kb = await new SignJWT({
      iat: Math.floor(Date.now() / 1000),
      aud: request.client_id,
      nonce: request.nonce,
      sd_hash: sha256(credential),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'kb+jwt' })
      .sign(holder.privateKey);
    return { pid: [`${credential}${kb}`] };
  });
  // The session transcript: client_id, nonce, response_uri and the thumbprint of the request's encryption key.
  const mdocFlow = flowFor('mdl-check', async (request) => {
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
    stepRoundTrips = {};
    await flow();
    const perStep = Object.entries(stepRoundTrips)
      .map(([step, count]) => `${step} ${count}`)
      .join(', ');
    stepRoundTrips = undefined;
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
    }
  }
} finally {
  await service.stop();
}
