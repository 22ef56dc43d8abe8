// One SD-JWT VC issuance as a wallet does it (management offer, offer fetch, issuer metadata, token
// with DPoP, nonce, credential with DPoP, notification) against a tenant it sets up, with the latency
// of each request: by pre-authorized code, or by authorization code as a HAIP wallet does it (PAR with
// PKCE, DPoP and wallet attestation, the authorization redirect, the code at the token endpoint with
// DPoP and wallet attestation). Shared by the issuance and start-up benchmarks.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { attestationHeaders, walletInstance, walletProvider } from '../test/support/wallet-provider.js';
import { type BenchService, json } from './support.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const REDIRECT_URI = 'https://wallet.example.com/callback';

export interface IssuanceFlow {
  run(): Promise<void>;
  /** Milliseconds per request step since the last reset. */
  latencies: Record<string, number[]>;
  /**
   * Runs one flow alone, reading the service's count of statements sent while answering requests
   * around each request (so neither the scrape nor background work counts): round trips per step.
   */
  roundTripsPerStep(): Promise<Record<string, number>>;
}

export type FlowKind = 'pre-authorized' | 'authorization code';

const tenantClients = new Map<string, { clientId: string; secret: string }>();

/** How a tenant is set up (setUpTenant: the tenant with its PID configuration, each credential in a status list; its admin's token). */
export interface FlowOptions {
  /** false: the tenant exists already (set up through another instance of the same deployment). */
  setUp?: boolean;
  /**
   * A key chain (the body of POST /api/key-chain) made the tenant's default attestation chain before
   * the credential configuration, so that credentials are signed with it.
   */
  attestationKeyChain?: Record<string, unknown>;
}

export async function setUpTenant(service: BenchService, tenantId: string, options: FlowOptions): Promise<string> {
  const tenant = await json(`${service.url}/api/tenant`, {
    method: 'POST',
    token: service.rootToken,
    body: JSON.stringify({ id: tenantId, name: 'Bench', roles: ['issuance:manage', 'issuance:offer'] }),
  });
  const { access_token: admin } = await json(`${service.url}/api/oauth2/token`, {
    method: 'POST',
    body: JSON.stringify({ client_id: tenant.client.clientId, client_secret: tenant.client.secret }),
  });
  if (options.attestationKeyChain) {
    await json(`${service.url}/api/key-chain`, {
      method: 'POST',
      token: admin,
      body: JSON.stringify({ usageType: 'attestation', ...options.attestationKeyChain, default: true }),
    });
  }
  await json(`${service.url}/api/issuer/credentials`, {
    method: 'POST',
    token: admin,
    body: JSON.stringify({
      id: 'pid',
      config: { format: 'dc+sd-jwt', scope: 'pid' },
      // Each credential takes an entry in a status list, as a PID does.
      statusManagement: true,
      vct: 'urn:eudi:pid:1',
      fields: ['given_name', 'family_name', 'birthdate', 'nationality'].map((name) => ({ path: [name], type: 'string' })),
    }),
  });
  tenantClients.set(tenantId, tenant.client);
  return admin;
}

/** A management token of a tenant set up before, from any instance of the deployment. */
async function tenantAdmin(service: BenchService, tenantId: string): Promise<string> {
  const client = tenantClients.get(tenantId);
  if (!client) throw new Error(`tenant ${tenantId} was not set up`);
  const { access_token } = await json(`${service.url}/api/oauth2/token`, {
    method: 'POST',
    body: JSON.stringify({ client_id: client.clientId, client_secret: client.secret }),
  });
  return access_token;
}

/**
 * Sets up the tenant through `service` and returns its flow (with `setUp: false`, `service` only serves
 * the flow of a tenant set up before).
 */
export async function prepareIssuance(
  service: BenchService,
  tenantId = 'bench',
  kind: FlowKind = 'pre-authorized',
  options: FlowOptions = {},
): Promise<IssuanceFlow> {
  const admin = options.setUp === false ? await tenantAdmin(service, tenantId) : await setUpTenant(service, tenantId, options);
  const issuer = `${service.url}/issuers/${tenantId}`;
  // A wallet provider the issuer trusts, and this wallet's instance, attested by it.
  const provider = await walletProvider('Bench Wallets');
  const instance = await walletInstance();
  if (kind === 'authorization code') {
    await json(`${service.url}/api/issuer/config`, {
      method: 'PUT',
      token: admin,
      body: JSON.stringify({ walletProviders: [{ name: provider.name, certificates: [provider.caPem] }], walletAttestationRequired: true }),
    });
  }
  const attested = () => attestationHeaders(provider, instance, 'bench-wallet', issuer);
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  const steps =
    kind === 'pre-authorized'
      ? ['offer', 'offer fetch', 'metadata', 'token', 'nonce', 'credential', 'notification']
      : ['offer', 'offer fetch', 'metadata', 'par', 'authorize', 'token', 'nonce', 'credential', 'notification'];
  const latencies: Record<string, number[]> = Object.fromEntries(steps.map((step) => [step, []]));
  let stepRoundTrips: Record<string, number> | undefined;
  const timed = async <T>(step: string, work: () => Promise<T>) => {
    const counted = stepRoundTrips && (await service.requestRoundTrips());
    const started = performance.now();
    const result = await work();
    latencies[step]?.push(performance.now() - started);
    if (stepRoundTrips && counted !== undefined) stepRoundTrips[step] = (await service.requestRoundTrips()) - counted;
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

  // The wallet redeems the pre-authorized code at once, DPoP-bound.
  const preAuthorizedToken = (credentialOffer: any) =>
    timed('token', async () =>
      json(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await dpop(`${issuer}/token`) },
        body: new URLSearchParams({
          grant_type: GRANT,
          'pre-authorized_code': credentialOffer.grants[GRANT]['pre-authorized_code'],
        }).toString(),
      }),
    );

  // PAR with PKCE and DPoP, the authorization endpoint's redirect, then the code at the token endpoint.
  const authorizationCodeToken = async (credentialOffer: any) => {
    const verifier = randomBytes(32).toString('base64url');
    const form = (fields: Record<string, string>) => ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    const pushed = await timed('par', async () =>
      json(`${issuer}/par`, {
        ...form({
          client_id: 'bench-wallet',
          response_type: 'code',
          redirect_uri: REDIRECT_URI,
          code_challenge: createHash('sha256').update(verifier).digest('base64url'),
          code_challenge_method: 'S256',
          issuer_state: credentialOffer.grants.authorization_code.issuer_state,
          scope: 'pid',
        }),
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await dpop(`${issuer}/par`), ...(await attested()) },
      }),
    );
    const code = await timed('authorize', async () => {
      const query = new URLSearchParams({ client_id: 'bench-wallet', request_uri: pushed.request_uri });
      const answer = await fetch(`${issuer}/authorize?${query}`, { redirect: 'manual' });
      const location = answer.headers.get('location');
      const found = location && new URL(location).searchParams.get('code');
      if (answer.status !== 302 || !found) throw new Error(`authorize: ${answer.status} ${await answer.text()}`);
      return found;
    });
    return timed('token', async () =>
      json(`${issuer}/token`, {
        ...form({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT_URI, client_id: 'bench-wallet' }),
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await dpop(`${issuer}/token`), ...(await attested()) },
      }),
    );
  };

  const run = async () => {
    const offer = await timed('offer', () =>
      json(`${service.url}/api/issuer/offer`, {
        method: 'POST',
        token: admin,
        body: JSON.stringify({
          response_type: 'uri',
          flow: kind === 'pre-authorized' ? 'pre_authorized_code' : 'authorization_code',
          credentialConfigurationIds: ['pid'],
          credentialClaims: {
            pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12', nationality: 'DE' } },
          },
        }),
      }),
    );
    const credentialOffer = await timed('offer fetch', () => json(offer.credentialOfferUri));
    const metadata = await timed('metadata', () => json(wellKnown));
    const token = kind === 'pre-authorized' ? await preAuthorizedToken(credentialOffer) : await authorizationCodeToken(credentialOffer);
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
  const roundTripsPerStep = async () => {
    stepRoundTrips = {};
    try {
      await run();
      return stepRoundTrips;
    } finally {
      stepRoundTrips = undefined;
    }
  };
  return { run, latencies, roundTripsPerStep };
}
