// One pre-authorized SD-JWT VC issuance as a wallet does it (management offer, offer fetch, issuer
// metadata, token with DPoP, nonce, credential with DPoP, notification) against a tenant it sets up,
// with the latency of each request; shared by the issuance and start-up benchmarks.
import { createHash, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { type BenchService, json } from './support.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

export interface IssuanceFlow {
  run(): Promise<void>;
  /** Milliseconds per request step since the last reset. */
  latencies: Record<string, number[]>;
}

export async function prepareIssuance(service: BenchService, tenantId = 'bench'): Promise<IssuanceFlow> {
  const tenant = await json(`${service.url}/api/tenant`, {
    method: 'POST',
    token: service.rootToken,
    body: JSON.stringify({ id: tenantId, name: 'Bench', roles: ['issuance:manage', 'issuance:offer'] }),
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
  const issuer = `${service.url}/issuers/${tenantId}`;
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  const latencies: Record<string, number[]> = {
    offer: [],
    'offer fetch': [],
    metadata: [],
    token: [],
    nonce: [],
    credential: [],
    notification: [],
  };
  const timed = async <T>(step: string, work: () => Promise<T>) => {
    const started = performance.now();
    const result = await work();
    latencies[step]?.push(performance.now() - started);
    return result;
  };
  const dpop = (url: string, accessToken?: string) =>
    new SignJWT({
      htm: 'POST',
      htu: url,
      iat: Math.floor(Date.now() / 1000),
      jti: randomUUID(),
      ...(accessToken && { ath: createHash('sha256').update(accessToken).digest('base64url') }),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
      .sign(privateKey);
  const wellKnown = `${service.url}/.well-known/openid-credential-issuer/issuers/${tenantId}`;

  const run = async () => {
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
    const metadata = await timed('metadata', () => json(wellKnown));
    const token = await timed('token', async () =>
      json(metadata.token_endpoint ?? `${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await dpop(`${issuer}/token`) },
        body: new URLSearchParams({
          grant_type: GRANT,
          'pre-authorized_code': credentialOffer.grants[GRANT]['pre-authorized_code'],
        }).toString(),
      }),
    );
    const { c_nonce } = await timed('nonce', () => json(metadata.nonce_endpoint, { method: 'POST' }));
    const proof = await new SignJWT({ aud: issuer, nonce: c_nonce, iat: Math.floor(Date.now() / 1000) })
      .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk })
      .sign(privateKey);
    const issued = await timed('credential', async () =>
      json(metadata.credential_endpoint, {
        method: 'POST',
        headers: { authorization: `DPoP ${token.access_token}`, dpop: await dpop(metadata.credential_endpoint, token.access_token) },
        body: JSON.stringify({ credential_configuration_id: 'pid', proofs: { jwt: [proof] } }),
      }),
    );
    await timed('notification', async () =>
      fetch(metadata.notification_endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `DPoP ${token.access_token}`,
          dpop: await dpop(metadata.notification_endpoint, token.access_token),
        },
        body: JSON.stringify({ notification_id: issued.notification_id, event: 'credential_accepted' }),
      }).then((r) => {
        if (r.status !== 204) throw new Error(`notification: ${r.status}`);
      }),
    );
  };
  return { run, latencies };
}
