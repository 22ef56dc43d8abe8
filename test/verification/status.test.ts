// The status of presented SD-JWT VCs: the verifier fetches the status list token the credential
// names, verifies it against the tenant's trust lists, caches it, and rejects revoked, suspended and
// unverifiable credentials.
import { createServer, type Server } from 'node:http';
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundClient, OutboundRefused } from '../../src/platform/outbound/client.js';
import { OwnUrlsFirst } from '../../src/platform/outbound/own-urls.js';
import { StampedCache } from '../../src/status-lists/cache.js';
import { ownStatusListTokens } from '../../src/status-lists/routes.js';
import { PresentationRejected } from '../../src/verification/errors.js';
import { StatusListChecker } from '../../src/verification/status/checker.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey, receiveCredentials } from '../support/wallet.js';

let svc: TestService;

const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt' },
  vct: 'urn:eudi:pid:1',
  statusManagement: true,
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['age_over_18'], type: 'boolean' },
  ],
};
const QUERY = {
  credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] }, claims: [{ path: ['given_name'] }] }],
};
const STATUS_SIGNER = { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' };

interface Issued {
  credential: string;
  holder: JWK;
  sessionId: string;
  status: { idx: number; uri: string };
}

/** A tenant that issues PIDs with status (2 bits, every change signed at once, 60 s ttl) and verifies them. */
async function setUpTenant(service: TestService, id: string, trusted: Record<string, unknown>[]) {
  const { token } = await service.tenant(id);
  const config = await service.call('PUT', '/api/status-list-config', { token, body: { bits: 2, immediateUpdate: true, ttl: 60 } });
  expect(config.status, config.text).toBe(200);
  expect((await service.raw('POST', '/api/issuer/credentials', { token, body: PID })).status).toBe(201);
  const trust = await service.raw('POST', '/api/trust-list', { token, body: { id: 'issuers', entities: trusted } });
  expect(trust.status, trust.text).toBe(201);
  const verifier = await service.call('POST', '/api/verifier/config', { token, body: { id: 'pid-check', dcql_query: QUERY } });
  expect(verifier.status, verifier.text).toBe(201);
  return token;
}

async function issue(service: TestService, token: string): Promise<Issued> {
  const offer = await service.call('POST', '/api/issuer/offer', {
    token,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: ['pid'],
      credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika', age_over_18: true } } },
    },
  });
  expect(offer.status, offer.text).toBe(201);
  const key = await holderKey();
  const { response } = await receiveCredentials(offer.body.uri, { keys: [key] });
  const credential = (response.credentialResponse.credentials as { credential: string }[])[0]?.credential as string;
  const payload = JSON.parse(Buffer.from((credential.split('.')[1] as string).split('~')[0] as string, 'base64url').toString());
  return { credential, holder: key.privateJwk, sessionId: offer.body.session, status: payload.status.status_list };
}

/** One presentation to `tenant`'s verifier (of `service`); the wallet's answer and the session as it ends. */
async function present(tenant: string, token: string, issued: Issued, service = svc) {
  const offer = await service.raw('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId: 'pid-check' } });
  expect(offer.status, offer.text).toBe(201);
  const resolved = await resolveRequest(offer.body.uri);
  const reply = await submit(resolved, { pid: [await presentSdJwt(issued.credential, issued.holder, resolved, ['given_name'])] });
  return { reply, state: await service.running.services.sessions.get(tenant, offer.body.session) };
}

/** The last certificate of a key chain's chain (its root): what another tenant lists to trust it. */
async function rootCertificate(service: TestService, token: string, keyChainId: string): Promise<string> {
  const chain = await service.call('GET', `/api/key-chain/${keyChainId}/certificate`, { token });
  expect(chain.status, chain.text).toBe(200);
  return (chain.text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).at(-1) as string;
}

async function setStatus(service: TestService, token: string, sessionId: string, status: number) {
  const changed = await service.raw('POST', '/api/session/revoke', { token, body: { sessionId, status } });
  expect(changed.status, changed.text).toBe(200);
  expect(changed.body.updatedEntries).toBe(1);
}

async function clearStatusCache(service: TestService, token: string) {
  expect((await service.call('DELETE', '/api/cache/status-list', { token })).status).toBe(204);
}

function expectAccepted(result: Awaited<ReturnType<typeof present>>) {
  expect(result.reply.status, JSON.stringify(result.reply.body)).toBe(200);
  expect(result.state.status).toBe('completed');
}

function expectRejected(result: Awaited<ReturnType<typeof present>>, reason: RegExp) {
  expect(result.reply.status).toBe(400);
  expect(result.reply.body.error).toBe('invalid_request');
  expect(result.state.status).toBe('failed');
  expect(result.state.errorReason).toMatch(reason);
}

beforeAll(async () => {
  svc = await startService();
});
afterAll(() => svc.stop());

describe('status of presented SD-JWT VCs', () => {
  it('accepts a valid credential, rejects it revoked and suspended, and accepts it reinstated', async () => {
    const token = await setUpTenant(svc, 'acme', [{ type: 'internal', keyChainId: 'default-attestation' }, STATUS_SIGNER]);
    const issued = await issue(svc, token);
    expect(issued.status.uri).toMatch(new RegExp(`^${svc.url}/issuers/acme/status-lists/`));
    const stats = async () => (await svc.call('GET', '/api/cache/stats', { token })).body.fetchedStatusList;
    const clearCache = () => clearStatusCache(svc, token);
    const revoke = (status: number) => setStatus(svc, token, issued.sessionId, status);

    expectAccepted(await present('acme', token, issued));
    expect(await stats()).toMatchObject({ entries: 1, misses: 1 });
    // A second presentation uses the cached token.
    expectAccepted(await present('acme', token, issued));
    expect(await stats()).toMatchObject({ entries: 1, hits: 1, misses: 1 });

    // Its own list is read afresh at every presentation: a change is seen by the next one, within the
    // token's ttl, without clearing the cache (which holds the verification of the token read before).
    await revoke(1);
    expectRejected(await present('acme', token, issued), /^status: revoked$/);
    expect(await stats()).toMatchObject({ entries: 1, hits: 1, misses: 2 });

    await revoke(2);
    expectRejected(await present('acme', token, issued), /^status: suspended$/);

    await revoke(0);
    expectAccepted(await present('acme', token, issued));
    // The status list cache of /api/cache covers the verified tokens too.
    await clearCache();
    expect((await stats()).entries).toBe(0);
  });

  it('rejects a credential whose status list signer no trust list of the tenant names', async () => {
    const token = await setUpTenant(svc, 'no-status-signer', [{ type: 'internal', keyChainId: 'default-attestation' }]);
    const issued = await issue(svc, token);
    expectRejected(await present('no-status-signer', token, issued), /^status: untrusted status list signer/);
  });

  it('rejects a credential whose status list cannot be fetched (fail closed)', async () => {
    // The credential comes from another service (trusted here by its attestation root) that then goes away.
    const remote = await startService();
    let issued: Issued;
    let root: string;
    try {
      const remoteToken = await setUpTenant(remote, 'remote', [{ type: 'internal', keyChainId: 'default-attestation' }, STATUS_SIGNER]);
      issued = await issue(remote, remoteToken);
      root = await rootCertificate(remote, remoteToken, 'default-attestation');
    } finally {
      await remote.stop();
    }
    const token = await setUpTenant(svc, 'relying', [
      { type: 'internal', keyChainId: 'default-attestation' },
      STATUS_SIGNER,
      { type: 'external', name: 'Remote issuer', certificates: [root] },
    ]);
    expect(issued.status.uri.startsWith(remote.url)).toBe(true);
    expectRejected(await present('relying', token, issued), /^status: the status list at .+ could not be fetched/);
  });
});

describe('StatusListChecker', () => {
  const outbound = new OutboundClient({ allowPrivate: true });
  let token: string;
  let issued: Issued;
  let trusted: string[];
  beforeAll(async () => {
    token = await setUpTenant(svc, 'checker', [{ type: 'internal', keyChainId: 'default-attestation' }, STATUS_SIGNER]);
    issued = await issue(svc, token);
    trusted = await svc.running.services.trustLists.trustedCertificates('checker');
  });
  const rejection = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (err: unknown) => (err instanceof PresentationRejected ? err.message : `not a rejection: ${String(err)}`),
    );

  it('caches a token until the earlier of its exp and ttl, per tenant', async () => {
    const cache = new StampedCache<any>();
    const checker = new StatusListChecker({ cache, reader: outbound });
    const now = new Date();
    await checker.check('checker', { status_list: issued.status }, { trustedCertificates: trusted, now });
    await checker.check('checker', { status_list: issued.status }, { trustedCertificates: trusted, now: new Date(now.getTime() + 30_000) });
    expect(cache.stats()).toMatchObject({ entries: 1, hits: 1, misses: 1 });
    // Past the ttl the cached token is not used: it is fetched again (and this one has expired by then).
    expect(
      await rejection(
        checker.check('checker', { status_list: issued.status }, { trustedCertificates: trusted, now: new Date(now.getTime() + 61_000) }),
      ),
    ).toMatch(/^status: the status list token has expired/);
    // Another tenant does not see this tenant's entry, nor does it trust the signer.
    expect(await rejection(checker.check('other', { status_list: issued.status }, { trustedCertificates: [], now }))).toMatch(/untrusted/);
    // Without a status list reference there is nothing to check.
    await checker.check('checker', undefined, { trustedCertificates: [], now });
    expect(
      await rejection(
        checker.check('checker', { status_list: { idx: -1, uri: issued.status.uri } }, { trustedCertificates: trusted, now }),
      ),
    ).toMatch(/malformed status_list/);
    expect(
      await rejection(
        checker.check('checker', { status_list: { idx: 1e9, uri: issued.status.uri } }, { trustedCertificates: trusted, now }),
      ),
    ).toMatch(/outside the status list/);
  });

  it('gives up after its timeout, and refuses other schemes and a token for another uri', async () => {
    const hanging: Server = createServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const { port } = hanging.address() as { port: number };
    const checker = new StatusListChecker({ timeoutMs: 300, reader: outbound });
    const context = { trustedCertificates: trusted, now: new Date() };
    try {
      const started = Date.now();
      expect(await rejection(checker.check('checker', { status_list: { idx: 0, uri: `http://127.0.0.1:${port}/list` } }, context))).toMatch(
        /^status: the status list at .+ could not be fetched/,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
    expect(await rejection(checker.check('checker', { status_list: { idx: 0, uri: 'file:///etc/passwd' } }, context))).toMatch(
      /not an http\(s\) URL/,
    );
    // The same token under another address: its sub names the real one.
    const aliased = issued.status.uri.replace('127.0.0.1', 'localhost');
    expect(await rejection(checker.check('checker', { status_list: { idx: 0, uri: aliased } }, context))).toMatch(/sub is not/);
  });
});

describe('its own status lists, in production (PUBLIC_URL on loopback, which the outbound policy refuses)', () => {
  let production: TestService;
  beforeAll(async () => {
    production = await startService({ NODE_ENV: 'production' });
    expect(production.running.config.OUTBOUND_ALLOW_PRIVATE).toBe(false);
  });
  afterAll(() => production.stop());

  it('reads them in-process: a presentation verifies with its status checked, and is rejected once revoked', async () => {
    const token = await setUpTenant(production, 'acme', [{ type: 'internal', keyChainId: 'default-attestation' }, STATUS_SIGNER]);
    const issued = await issue(production, token);
    expect(issued.status.uri).toMatch(new RegExp(`^${production.url}/issuers/acme/status-lists/`));

    expectAccepted(await present('acme', token, issued, production));
    // The status was checked: the list was read once and is kept.
    expect((await production.call('GET', '/api/cache/stats', { token })).body.fetchedStatusList).toMatchObject({ entries: 1, misses: 1 });

    // Read afresh at the next presentation: no cache to clear.
    await setStatus(production, token, issued.sessionId, 1);
    expectRejected(await present('acme', token, issued, production), /^status: revoked$/);
  });

  it("reads another tenant's list as that tenant's, and a list that is gone fails as its 404 over HTTP does", async () => {
    const issuerToken = await setUpTenant(production, 'issuer', [{ type: 'internal', keyChainId: 'default-attestation' }, STATUS_SIGNER]);
    const issued = await issue(production, issuerToken);
    const certificates = [
      await rootCertificate(production, issuerToken, 'default-attestation'),
      await rootCertificate(production, issuerToken, 'default-statusList'),
    ];
    const token = await setUpTenant(production, 'relying', [{ type: 'external', name: 'Issuer tenant', certificates }]);
    expectAccepted(await present('relying', token, issued, production));

    const removed = await production.call('DELETE', '/api/tenant/issuer', { token: await production.rootToken() });
    expect(removed.status, removed.text).toBe(204);
    expect((await fetch(issued.status.uri)).status).toBe(404);
    const gone = await present('relying', token, issued, production);
    expectRejected(gone, /answered HTTP 404$/);
    expect(gone.state.errorReason).toBe(`status: the status list at ${issued.status.uri} answered HTTP 404`);
  });
});

describe('OwnUrlsFirst', () => {
  let token: string;
  let issued: Issued;
  let own: OwnUrlsFirst;
  beforeAll(async () => {
    token = await setUpTenant(svc, 'own-urls', [{ type: 'internal', keyChainId: 'default-attestation' }, STATUS_SIGNER]);
    issued = await issue(svc, token);
    // Behind it an outbound client that refuses loopback, where this service is: only what it answers itself gets through.
    own = new OwnUrlsFirst(svc.url, new OutboundClient({ allowPrivate: false }), [ownStatusListTokens(svc.running.services.statusLists)]);
  });

  it('answers a status list URL of this service with the status, content type and bytes of its HTTP route', async () => {
    for (const accept of ['application/statuslist+jwt', 'application/statuslist+cwt', undefined]) {
      const headers: Record<string, string> = accept ? { accept } : {};
      const overHttp = await fetch(issued.status.uri, { headers });
      const inProcess = await own.request(issued.status.uri, { headers });
      expect(inProcess.status).toBe(200);
      expect(overHttp.status).toBe(200);
      expect(inProcess.headers['content-type']).toBe(overHttp.headers.get('content-type'));
      expect(inProcess.body.equals(Buffer.from(await overHttp.arrayBuffer()))).toBe(true);
    }
  });

  it("answers 404 for a list that does not exist, also for another tenant's list under this tenant's path, as HTTP does", async () => {
    const listId = issued.status.uri.split('/').at(-1) as string;
    for (const uri of [`${svc.url}/issuers/own-urls/status-lists/no-such-list`, `${svc.url}/issuers/acme/status-lists/${listId}`]) {
      const overHttp = await fetch(uri);
      const inProcess = await own.request(uri);
      expect([inProcess.status, overHttp.status]).toEqual([404, 404]);
      expect(JSON.parse(inProcess.body.toString())).toEqual(await overHttp.json());
    }
  });

  it('sends every other URL to the outbound client: other routes and origins, and other methods', async () => {
    const listPath = new URL(issued.status.uri).pathname;
    const other = new URL(svc.url);
    other.port = String(Number(other.port) + 1);
    for (const [uri, method] of [
      [`${svc.url}/health`, 'GET'],
      [`${svc.url}/issuers/own-urls/status-lists`, 'GET'],
      [`${other.origin}${listPath}`, 'GET'],
      [issued.status.uri.replace('127.0.0.1', 'localhost'), 'GET'],
      [issued.status.uri, 'POST'],
    ] as const) {
      await expect(own.request(uri, { method }), uri).rejects.toThrow(OutboundRefused);
    }
  });
});
