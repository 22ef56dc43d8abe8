// One OpenID4VP presentation as a relying party and a wallet do it (request created, request object
// fetched, encrypted presentation posted and verified with its status checked, the session polled
// until it has its result), against a tenant it sets up with an issued SD-JWT VC (in a status list),
// with the latency and database round trips of each request. Shared by the verification and growth
// benchmarks; flowFor() makes the flow of another format (bench/verification.ts: mso_mdoc).
import { createHash } from 'node:crypto';
import { CompactEncrypt, decodeJwt, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { type BenchService, json } from './support.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const sha256 = (data: string) => createHash('sha256').update(data).digest('base64url');

export type VpToken = (request: Record<string, any>) => Promise<Record<string, string[]>>;

export interface PresentationTenant {
  /** The tenant's management token. */
  admin: string;
  post(path: string, body: unknown): Promise<any>;
  /** The holder's key pair: issued credentials are bound to it. */
  holder: CryptoKeyPair;
  /** Issues one credential of `configurationId` with `claims` to the holder (pre-authorized flow); the credential. */
  issue(configurationId: string, claims: Record<string, unknown>): Promise<string>;
  /** The flow of the presentation configuration `requestId`, presenting what `vpToken` builds for the request. */
  flowFor(requestId: string, vpToken: VpToken): () => Promise<void>;
  /** The SD-JWT VC flow: an issued PID presented with a key binding JWT. */
  sdJwtFlow(): Promise<() => Promise<void>>;
  /** Milliseconds per request step since the last clear. */
  latencies: Record<string, number[]>;
  /** Runs `flow` once alone, reading the service's database counter around each request: round trips per step. */
  roundTripsPerStep(flow: () => Promise<void>): Promise<Record<string, number>>;
}

/**
 * The tenant `tenantId` with issuance and presentation roles, its PID configuration (each credential in
 * a status list), a trust list of its own issuer keys, and the presentation configuration 'kyc'.
 */
export async function preparePresentation(service: BenchService, tenantId = 'bench'): Promise<PresentationTenant> {
  const tenant = await json(`${service.url}/api/tenant`, {
    method: 'POST',
    token: service.rootToken,
    body: JSON.stringify({
      id: tenantId,
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

  const holder = await generateKeyPair('ES256', { extractable: true });
  const holderJwk = await exportJWK(holder.publicKey);
  const issuer = `${service.url}/issuers/${tenantId}`;
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

  const latencies: Record<string, number[]> = { request: [], 'request object': [], response: [], result: [] };
  let stepRoundTrips: Record<string, number> | undefined;
  const timed = async <T>(step: string, work: () => Promise<T>) => {
    const counted = stepRoundTrips && (await service.requestRoundTrips());
    const started = performance.now();
    const result = await work();
    latencies[step]?.push(performance.now() - started);
    if (stepRoundTrips && counted !== undefined) stepRoundTrips[step] = (await service.requestRoundTrips()) - counted;
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
  const flowFor = (requestId: string, vpToken: VpToken) => async () => {
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
  const sdJwtFlow = async () => {
    const credential = await issue('pid', { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12' });
    return flowFor('kyc', async (request) => {
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
  };
  const roundTripsPerStep = async (flow: () => Promise<void>) => {
    stepRoundTrips = {};
    try {
      await flow();
      return stepRoundTrips;
    } finally {
      stepRoundTrips = undefined;
    }
  };
  return { admin, post, holder, issue, flowFor, sdJwtFlow, latencies, roundTripsPerStep };
}
