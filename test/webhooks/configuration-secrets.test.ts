// The signing secret of a presentation configuration's (deprecated) inline webhook: answered once
// when a write gives the webhook a new one, never by GET or the list; the presentation.completed
// webhook is signed with it (checked with the standardwebhooks package, independently of the
// service's own code); rotation keeps the old one signing during its grace period; a webhook endpoint
// put in the inline webhook's place signs with the endpoint's own secret.
import type { JWK } from 'jose';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeFolders, writeFolder } from '../config-files/support.js';
import { PID, PID_ADULT_QUERY as QUERY } from '../support/fixtures.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';
import { type Receiver, signedHeaders, startReceiver, webhookEndpoint } from './support.js';

const PATH = '/api/verifier/config';
const rotatePath = (id: string) => `${PATH}/${id}/rotate-webhook-secret` as const;

let svc: TestService;
let receiver: Receiver;
let token: string;
let credential: string;
let holder: JWK;

beforeAll(async () => {
  svc = await startService({ WEBHOOK_RETRY_DELAYS_MS: '50,100', WEBHOOK_POLL_INTERVAL_MS: '100' });
  receiver = await startReceiver();
  token = (await svc.tenant('acme')).token;
  expect((await svc.call('POST', '/api/issuer/credentials', { token, body: PID })).status).toBe(201);
  const trust = await svc.call('POST', '/api/trust-list', {
    token,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(trust.status, trust.text).toBe(201);
  ({ credential, holder } = await issueCredential(svc, token, 'pid', {
    given_name: 'Erika',
    family_name: 'Mustermann',
    age_over_18: true,
  }));
});
afterAll(async () => {
  await receiver.close();
  await svc.stop();
  removeFolders();
});

/** A configuration whose inline webhook goes to the receiver (with an auth header); the answer. */
async function configured(id: string, url = receiver.url) {
  const made = await svc.call('POST', PATH, {
    token,
    body: { id, dcql_query: QUERY, webhook: { url, auth: { type: 'header', header: { name: 'X-Key', value: 'k' } } } },
  });
  expect(made.status, made.text).toBe(201);
  return made.body as Record<string, unknown>;
}

/** A presentation request made from `requestId` and answered by the wallet: its session id. */
async function completed(requestId: string): Promise<string> {
  const made = await svc.call('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId } });
  expect(made.status, made.text).toBe(201);
  const resolved = await resolveRequest(String(made.body.uri));
  const vpToken = { pid: [await presentSdJwt(credential, holder, resolved, ['given_name', 'age_over_18'])] };
  const answered = await submit(resolved, vpToken);
  expect(answered.status, JSON.stringify(answered.body)).toBe(200);
  return String(made.body.session);
}

/** The one request the receiver got for `sessionId`, once it arrived. */
async function hitOf(sessionId: string) {
  const of = () => receiver.hits.filter((hit) => JSON.parse(hit.body).sessionId === sessionId);
  await expect.poll(() => of().length, { timeout: 10_000 }).toBe(1);
  const [hit] = of();
  if (!hit) throw new Error('no request');
  return hit;
}

const secretRow = (id: string) =>
  svc.db
    .selectFrom('webhook_secrets')
    .selectAll()
    .where('tenant_id', '=', 'acme')
    .where('owner', '=', `presentation-configuration:${id}`)
    .executeTakeFirst();

describe("a presentation configuration's inline webhook", () => {
  it('is signed with the secret answered at creation, which GET and the list never show', async () => {
    const made = await configured('hooked');
    const secret = String(made.webhookSigningSecret);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    for (const shown of [await svc.call('GET', `${PATH}/hooked`, { token }), await svc.call('GET', PATH, { token })]) {
      expect(shown.status).toBe(200);
      expect(shown.text).not.toContain('whsec_');
      expect(shown.text).not.toContain('webhookSigningSecret');
    }

    const sessionId = await completed('hooked');
    const hit = await hitOf(sessionId);
    expect(hit.headers['x-key']).toBe('k');
    expect(new Webhook(secret).verify(hit.body, signedHeaders(hit))).toMatchObject({
      type: 'presentation.completed',
      sessionId,
      tenantId: 'acme',
      requestId: 'hooked',
    });
  });

  it('keeps its secret when saved again at the same URL, and gets a new one (answered once) for a new URL', async () => {
    const first = String((await configured('moving')).webhookSigningSecret);
    const patched = await svc.call('PATCH', `${PATH}/moving`, { token, body: { description: 'same receiver' } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.webhookSigningSecret).toBeUndefined();
    const replaced = await svc.call('POST', PATH, {
      token,
      body: {
        id: 'moving',
        dcql_query: QUERY,
        webhook: { url: receiver.url, auth: { type: 'header', header: { name: 'X-Key', value: '****' } } },
      },
    });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.webhookSigningSecret).toBeUndefined();
    const kept = await hitOf(await completed('moving'));
    expect(new Webhook(first).verify(kept.body, signedHeaders(kept))).toMatchObject({ requestId: 'moving' });

    const moved = await svc.call('PATCH', `${PATH}/moving`, {
      token,
      body: { webhook: { url: `${receiver.url}/v2`, auth: { type: 'none' } } },
    });
    expect(moved.status, moved.text).toBe(200);
    const second = String(moved.body.webhookSigningSecret);
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    const hit = await hitOf(await completed('moving'));
    expect(new Webhook(second).verify(hit.body, signedHeaders(hit))).toMatchObject({ requestId: 'moving' });
    expect(() => new Webhook(first).verify(hit.body, signedHeaders(hit))).toThrow();
  });

  it('rotate-webhook-secret answers a new secret; during the grace period both sign', async () => {
    const first = String((await configured('rotating')).webhookSigningSecret);
    const rotated = await svc.call('POST', rotatePath('rotating'), { token });
    expect(rotated.status, rotated.text).toBe(200);
    const second = String(rotated.body.webhookSigningSecret);
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    expect((await svc.call('GET', `${PATH}/rotating`, { token })).text).not.toContain('whsec_');

    const hit = await hitOf(await completed('rotating'));
    expect(String(hit.headers['webhook-signature']).split(' ')).toHaveLength(2);
    // Each secret alone verifies: a receiver that knows only the old or only the new one accepts it.
    expect(new Webhook(first).verify(hit.body, signedHeaders(hit))).toMatchObject({ requestId: 'rotating' });
    expect(new Webhook(second).verify(hit.body, signedHeaders(hit))).toMatchObject({ requestId: 'rotating' });
  });

  it('stored before signing existed, is sent unsigned until rotate-webhook-secret gives it a secret', async () => {
    await configured('legacy');
    await svc.db.deleteFrom('webhook_secrets').where('owner', '=', 'presentation-configuration:legacy').execute();
    const unsigned = await hitOf(await completed('legacy'));
    expect(unsigned.headers['webhook-signature']).toBeUndefined();
    expect(unsigned.headers['webhook-id']).toMatch(/^msg_/);

    const rotated = await svc.call('POST', rotatePath('legacy'), { token });
    expect(rotated.status, rotated.text).toBe(200);
    const hit = await hitOf(await completed('legacy'));
    expect(new Webhook(String(rotated.body.webhookSigningSecret)).verify(hit.body, signedHeaders(hit))).toMatchObject({
      requestId: 'legacy',
    });
  });

  it('replaced by a webhook endpoint, loses its secret: the endpoint signs with its own', async () => {
    const own = String((await configured('switching')).webhookSigningSecret);
    const endpointSecret = await webhookEndpoint(svc, token, 'crm', receiver.url);
    const switched = await svc.call('PATCH', `${PATH}/switching`, { token, body: { webhook: null, webhookEndpointId: 'crm' } });
    expect(switched.status, switched.text).toBe(200);
    expect(switched.body.webhookSigningSecret).toBeUndefined();
    expect(await secretRow('switching')).toBeUndefined();

    const hit = await hitOf(await completed('switching'));
    expect(hit.headers.authorization).toBe('Bearer hook');
    expect(new Webhook(endpointSecret).verify(hit.body, signedHeaders(hit))).toMatchObject({ requestId: 'switching' });
    expect(() => new Webhook(own).verify(hit.body, signedHeaders(hit))).toThrow();

    // Nothing of this configuration's is signed with an inline secret any more: rotating one is a conflict that says why.
    const refused = await svc.call('POST', rotatePath('switching'), { token });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.text).toContain("webhook endpoint 'crm' signs with its own secret");
  });

  it('loses its secret when removed, and with its configuration', async () => {
    await configured('removed');
    expect(await secretRow('removed')).toBeDefined();
    const cleared = await svc.call('PATCH', `${PATH}/removed`, { token, body: { webhook: null } });
    expect(cleared.status, cleared.text).toBe(200);
    expect(await secretRow('removed')).toBeUndefined();
    const refused = await svc.call('POST', rotatePath('removed'), { token });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('it sends no webhook');

    await configured('deleted');
    expect(await secretRow('deleted')).toBeDefined();
    expect((await svc.call('DELETE', `${PATH}/deleted`, { token })).status).toBe(204);
    expect(await secretRow('deleted')).toBeUndefined();
  });

  it("rotate-webhook-secret: 404 for an unknown configuration or another tenant's, 403 without presentation:manage", async () => {
    expect((await svc.call('POST', rotatePath('missing'), { token })).status).toBe(404);
    const other = await svc.tenant('other');
    expect((await svc.call('POST', rotatePath('hooked'), { token: other.token })).status).toBe(404);
    const requestOnly = await svc.client(token, 'request-only', ['presentation:request']);
    expect((await svc.call('POST', rotatePath('hooked'), { token: requestOnly })).status).toBe(403);
    // Neither changed the secret: the one answered at creation still signs alone.
    const row = await secretRow('hooked');
    expect(row?.previous_secret).toBeNull();
  });
});

describe('a configuration file with an inline webhook', () => {
  it('gets a secret nobody has seen, kept by a repeated import, until rotate-webhook-secret answers one', async () => {
    const secret = 'importer-secret-0123456789';
    const dir = writeFolder({
      'imported/tenant.json': { name: 'Imported' },
      'imported/clients/imported-admin.json': { roles: ['presentation:manage'], secret: { env: 'SVC_IMPORT_ADMIN_SECRET' } },
      'imported/presentation-configs/filed.json': { dcql_query: QUERY, webhook: { url: receiver.url } },
    });
    const stored = () =>
      svc.db
        .selectFrom('webhook_secrets')
        .selectAll()
        .where('tenant_id', '=', 'imported')
        .where('owner', '=', 'presentation-configuration:filed')
        .executeTakeFirst();
    const importOnce = async () => (await startService({ CONFIG_IMPORT: dir, SVC_IMPORT_ADMIN_SECRET: secret }, { besides: svc })).stop();
    await importOnce();
    const first = await stored();
    expect(first?.secret).toEqual(expect.any(String));
    await importOnce();
    expect((await stored())?.secret).toBe(first?.secret);

    const admin = await svc.token('imported-admin', secret);
    const rotated = await svc.call('POST', rotatePath('filed'), { token: admin });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.webhookSigningSecret).toMatch(/^whsec_/);
    // The unseen secret signs only through the grace period, beside the one now known.
    expect((await stored())?.previous_secret).toBe(first?.secret);
  });
});
