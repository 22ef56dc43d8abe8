// Invariants under concurrency (issue 24) of verification and of what issuance and the jobs share
// with it: a presentation session takes one response, status list indexes are handed out once and
// a full list is followed by one new list, and a due key chain is rotated once by the scheduled job.
// Each race runs on both instances of one PostgreSQL database (one instance on SQLite), and states
// exactly how many requests won.
import { createServer, type Server } from 'node:http';
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scheduler } from '../../src/platform/jobs/scheduler.js';
import { PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import {
  type DcApiRequest,
  dcApiResponse,
  presentSdJwt,
  type ResolvedRequest,
  resolveDcApiRequest,
  resolveRequest,
  responseForm,
} from '../support/presenter.js';
import { problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey, issueCredential, keyProof } from '../support/wallet.js';
import { countOf, type Instances, instancesOf, race, tally } from './support.js';

let svc: TestService;
let instances: Instances;
/** Every status change to completed, by session id, as the instance that made it saw it. */
const completions: string[] = [];

// The scheduler's own rounds never come during the tests: they drive the rotation job themselves.
const QUIET_JOBS = { JOB_INTERVAL_SECONDS: '86400' };

beforeAll(async () => {
  svc = await startService({ ...QUIET_JOBS, STATUS_MAX_LISTS_PER_TENANT: '3' });
  instances = await instancesOf(svc, { ...QUIET_JOBS, STATUS_MAX_LISTS_PER_TENANT: '3' });
  for (const instance of instances.all)
    instance.running.services.sessions.onStatusChange((state) => {
      if (state.status === 'completed') completions.push(state.id);
    });
});
afterAll(async () => {
  await instances?.stop();
  await svc?.stop();
});

describe('a presentation session takes one response', () => {
  const RESPONSES = 24;
  const ORIGIN = 'https://shop.example.com';
  let admin: string;
  /** One credential per response, each with its own given name, so the stored result names its response. */
  let held: { credential: string; holder: JWK }[];
  let hooks: Server;
  let hookUrl: string;
  const delivered: { sessionId: string; credentials: { claims: Record<string, unknown> }[] }[] = [];

  beforeAll(async () => {
    admin = (await svc.tenant('verifier')).token;
    expect((await svc.call('POST', '/api/issuer/credentials', { token: admin, body: PID })).status).toBe(201);
    const trust = await svc.call('POST', '/api/trust-list', {
      token: admin,
      body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
    });
    expect(trust.status, trust.text).toBe(201);
    for (const body of [
      { id: 'adult', dcql_query: PID_ADULT_QUERY, redirectUri: 'https://shop.example.com/done/{sessionId}' },
      { id: 'adult-dc', dcql_query: PID_ADULT_QUERY },
    ]) {
      const config = await svc.call('POST', '/api/verifier/config', { token: admin, body });
      expect(config.status, config.text).toBe(201);
    }
    held = await Promise.all(
      Array.from({ length: RESPONSES }, (_, i) =>
        issueCredential(svc, admin, 'pid', { given_name: `Holder ${i}`, family_name: 'Mustermann', age_over_18: true }),
      ),
    );
    hooks = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        delivered.push(JSON.parse(body));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(hooks.address() as { port: number }).port}/presentations`;
  });
  afterAll(() => new Promise<void>((resolve) => (hooks ? hooks.close(() => resolve()) : resolve())));

  const present = (resolved: ResolvedRequest, i: number) =>
    presentSdJwt(held[i]?.credential as string, held[i]?.holder as JWK, resolved, ['given_name', 'age_over_18']);

  /**
   * Exactly one reply 200 and the others invalid_request saying the request was answered; the
   * session holds the winner's credentials; one completion was published, logged and delivered.
   * Returns the winner's reply.
   */
  async function expectOneWinner(
    sessionId: string,
    replies: { status: number; body: any; text: string }[],
    release: (winner: { body: any }) => Promise<void> = async () => {},
  ) {
    expect(tally(replies)).toEqual({ '200': 1, '400 invalid_request': RESPONSES - 1 });
    const winner = replies.findIndex((reply) => reply.status === 200);
    for (const loser of replies.filter((reply) => reply.status !== 200))
      expect(loser.body.error_description, loser.text).toMatch(/already answered/);

    const done = await svc.running.services.sessions.get('verifier', sessionId);
    expect(done).toMatchObject({ status: 'completed', consumed: true, errorReason: null });
    expect(done.private?.credentials).toEqual([
      expect.objectContaining({ queryId: 'pid', claims: { given_name: `Holder ${winner}`, age_over_18: true } }),
    ]);
    expect(countOf(completions)[sessionId]).toBe(1);
    const messages = async () =>
      (await svc.db.selectFrom('session_logs').select('message').where('session_id', '=', sessionId).execute()).map((log) => log.message);
    expect(countOf(await messages())['presentation verified']).toBe(1);
    // The losers found the session answered: they leave its log without a rejection.
    expect(countOf(await messages())['presentation rejected']).toBeUndefined();
    // A session answered through a redirect sends its webhook when its response code releases the result.
    await release(replies[winner] as { body: any });
    const webhookDeliveries = async () => countOf(await messages())['webhook delivered'] ?? 0;
    await expect.poll(webhookDeliveries, { timeout: 5000 }).toBe(1);
    // A second delivery would have started with a second completion, before the replies came back.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await webhookDeliveries()).toBe(1);
    const hooked = delivered.filter((d) => d.sessionId === sessionId);
    expect(hooked).toHaveLength(1);
    expect(hooked[0]?.credentials).toEqual([expect.objectContaining({ claims: { given_name: `Holder ${winner}`, age_over_18: true } })]);
    return replies[winner] as { status: number; body: any };
  }

  for (const [clientIdPrefix, responseMode] of [
    ['x509_hash', 'direct_post.jwt'],
    ['x509_san_dns', 'direct_post'],
  ] as const) {
    it(`${RESPONSES} valid ${responseMode} responses at once: one accepted with its redirect_uri, the others refused`, async () => {
      const offer = await svc.raw('POST', '/api/verifier/offer', {
        token: admin,
        body: { response_type: 'uri', requestId: 'adult', clientIdPrefix, responseMode, webhook: { url: hookUrl } },
      });
      expect(offer.status, offer.text).toBe(201);
      const resolved = await resolveRequest(offer.body.uri);
      const forms = await Promise.all(
        Array.from({ length: RESPONSES }, async (_, i) => responseForm(resolved, { pid: [await present(resolved, i)] })),
      );
      const path = new URL(resolved.responseUri).pathname;

      const replies = await race(instances.all, RESPONSES, (instance, i) => instance.raw('POST', path, { form: forms[i] }));

      const winner = await expectOneWinner(offer.body.session, replies, async ({ body }) => {
        expect(body.redirect_uri).toMatch(new RegExp(`^https://shop.example.com/done/${offer.body.session}\\?response_code=`));
        const response_code = new URL(body.redirect_uri).searchParams.get('response_code');
        const released = await svc.raw('POST', '/api/verifier/result', {
          token: admin,
          body: { session: offer.body.session, response_code },
        });
        expect(released.status, released.text).toBe(200);
      });
      expect(winner.body.redirect_uri).toBeDefined();
    });
  }

  it(`${RESPONSES} valid DC API responses at once (dc-api-response): one accepted, the others refused`, async () => {
    const offer = await svc.raw('POST', '/api/verifier/offer', {
      token: admin,
      body: { response_type: 'dc-api', requestId: 'adult-dc', expected_origin: ORIGIN, webhook: { url: hookUrl } },
    });
    expect(offer.status, offer.text).toBe(201);
    const resolved = await resolveDcApiRequest(offer.body.dcApiRequest as DcApiRequest, ORIGIN);
    const bodies = await Promise.all(
      Array.from({ length: RESPONSES }, async (_, i) => ({
        response: (await dcApiResponse(resolved, { pid: [await present(resolved, i)] })).response,
        origin: ORIGIN,
      })),
    );
    const path = new URL(offer.body.responseUri).pathname;

    const replies = await race(instances.all, RESPONSES, (instance, i) => instance.raw('POST', path, { body: bodies[i] }));

    const winner = await expectOneWinner(offer.body.session, replies);
    expect(winner.body).toEqual({});
  });
});

describe('status list indexes are handed out once', () => {
  const BURST = 32;
  const CAPACITY = 100;
  const TENANT = 'issuer';
  const GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
  let admin: string;

  beforeAll(async () => {
    admin = (await svc.tenant(TENANT)).token;
    const config = await svc.call('PUT', '/api/status-list-config', { token: admin, body: { capacity: CAPACITY } });
    expect(config.status, config.text).toBe(200);
    const pid = await svc.call('POST', '/api/issuer/credentials', { token: admin, body: { ...PID, statusManagement: true } });
    expect(pid.status, pid.text).toBe(201);
  });

  /** A redeemed pre-authorized offer and a proof for its credential request: all but the request itself. */
  async function readyToIssue() {
    const offer = await svc.raw('POST', '/api/issuer/offer', {
      token: admin,
      body: {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['pid'],
        credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann' } } },
      },
    });
    expect(offer.status, offer.text).toBe(201);
    const code = offer.body.credentialOffer.grants[GRANT]['pre-authorized_code'];
    const token = await svc.raw('POST', `/issuers/${TENANT}/token`, { form: { grant_type: GRANT, 'pre-authorized_code': code } });
    expect(token.status, token.text).toBe(200);
    const nonce = (await svc.raw('POST', `/issuers/${TENANT}/nonce`)).body.c_nonce as string;
    const key = await holderKey();
    const proof = await keyProof(key, `${svc.url}/issuers/${TENANT}`, nonce);
    return { accessToken: token.body.access_token as string, body: { credential_configuration_id: 'pid', proofs: { jwt: [proof] } } };
  }

  /** BURST credential requests at once; every one issued. Returns the status entry each credential names. */
  async function issueBurst() {
    const ready = await Promise.all(Array.from({ length: BURST }, readyToIssue));
    const replies = await race(instances.all, BURST, (instance, i) => {
      const { accessToken, body } = ready[i] as Awaited<ReturnType<typeof readyToIssue>>;
      return instance.raw('POST', `/issuers/${TENANT}/credential`, { token: accessToken, body });
    });
    expect(tally(replies)).toEqual({ '200': BURST });
    return replies.map((reply) => {
      const credential = reply.body.credentials[0].credential as string;
      const payload = JSON.parse(Buffer.from((credential.split('~')[0] as string).split('.')[1] as string, 'base64url').toString());
      const { idx, uri } = payload.status.status_list as { idx: number; uri: string };
      return { listId: decodeURIComponent(uri.slice(uri.lastIndexOf('/') + 1)), idx };
    });
  }

  const lists = () =>
    svc.db
      .selectFrom('status_lists')
      .select(['id', 'used_entries', 'capacity'])
      .where('tenant_id', '=', TENANT)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  const entries = () => svc.db.selectFrom('status_entries').select(['list_id', 'idx']).where('tenant_id', '=', TENANT).execute();
  const key = (entry: { listId: string; idx: number }) => `${entry.listId}#${entry.idx}`;

  /** Every list counts as used exactly the entries it holds, and its audit shows one creation. */
  async function expectConsistent() {
    const stored = await entries();
    const held = countOf(stored.map((entry) => entry.list_id));
    for (const list of await lists()) expect(list.used_entries).toBe(held[list.id] ?? 0);
    const created = await svc.db
      .selectFrom('audit_log')
      .select('after')
      .where('tenant_id', '=', TENANT)
      .where('action_type', '=', 'status_list.created')
      .execute();
    expect(created).toHaveLength((await lists()).length);
  }

  it(`${BURST} issuances at once on a tenant without lists: one list opened, ${BURST} distinct indexes`, async () => {
    const issued = await issueBurst();

    const opened = await lists();
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({ used_entries: BURST, capacity: CAPACITY });
    expect(new Set(issued.map(key)).size).toBe(BURST);
    expect(new Set((await entries()).map((e) => key({ listId: e.list_id, idx: e.idx })))).toEqual(new Set(issued.map(key)));
    await expectConsistent();
  });

  it(`${BURST} issuances at once when the list has ${BURST / 2} entries left: it fills, and one new list is opened`, async () => {
    // The list is brought to CAPACITY - BURST/2 entries through the service's allocation (the same
    // path issuance takes; no HTTP request takes entries without issuing a credential).
    const [first] = await lists();
    const left = BURST / 2;
    await svc.running.services.statusLists.allocate(TENANT, {
      credentialConfigurationId: 'pid',
      count: CAPACITY - left - (first?.used_entries ?? 0),
    });
    const before = new Set((await entries()).map((e) => key({ listId: e.list_id, idx: e.idx })));

    const issued = await issueBurst();

    const after = await lists();
    expect(after).toHaveLength(2);
    expect(after[0]).toMatchObject({ id: first?.id, used_entries: CAPACITY });
    expect(after[1]).toMatchObject({ used_entries: BURST - left });
    expect(countOf(issued.map((entry) => entry.listId))).toEqual({ [first?.id as string]: left, [after[1]?.id as string]: BURST - left });
    expect(new Set(issued.map(key)).size).toBe(BURST);
    for (const entry of issued) expect(before.has(key(entry))).toBe(false);
    expect(await entries()).toHaveLength(CAPACITY + BURST - left);
    await expectConsistent();
  });

  it('lists created through the API at once stop at STATUS_MAX_LISTS_PER_TENANT (3)', async () => {
    const { token } = await svc.tenant('list-limit');
    const replies = await race(instances.all, 12, (instance) =>
      instance.call('POST', '/api/status-lists', { token, body: { capacity: 1000 } }),
    );
    expect(tally(replies)).toEqual({ '201': 3, '409': 9 });
    for (const refused of replies.filter((reply) => reply.status === 409))
      expect(problemOf(refused).detail).toContain('STATUS_MAX_LISTS_PER_TENANT');
    const stored = await svc.db.selectFrom('status_lists').select('id').where('tenant_id', '=', 'list-limit').execute();
    expect(stored).toHaveLength(3);
  });
});

describe('the key rotation job rotates a due chain once', () => {
  const TENANT = 'rotation';
  let admin: string;

  beforeAll(async () => {
    admin = (await svc.tenant(TENANT)).token;
  });

  /** A standalone chain rotated every day, made two days old: due at the job's next run. Its row before. */
  async function dueChain(id: string) {
    const created = await svc.call('POST', '/api/key-chain', {
      token: admin,
      body: { id, usageType: 'access', type: 'standalone', rotationEnabled: true, rotationIntervalDays: 1 },
    });
    expect(created.status, created.text).toBe(201);
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000).toISOString();
    await svc.db
      .updateTable('key_chains')
      .set({ created_at: twoDaysAgo, updated_at: twoDaysAgo })
      .where('tenant_id', '=', TENANT)
      .where('id', '=', id)
      .execute();
    return chainRow(id);
  }
  const chainRow = (id: string) =>
    svc.db
      .selectFrom('key_chains')
      .select(['active_jwk', 'previous_jwk', 'last_rotated_at'])
      .where('tenant_id', '=', TENANT)
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  /** The chain now holds a new key and, as previous key, the one it had: rotated once, not twice; one audit entry. */
  async function expectRotatedOnce(id: string, before: Awaited<ReturnType<typeof chainRow>>) {
    const after = await chainRow(id);
    expect(after.active_jwk).not.toBe(before.active_jwk);
    expect(after.previous_jwk).toBe(before.active_jwk);
    expect(after.last_rotated_at).not.toBeNull();
    const audit = await svc.db
      .selectFrom('audit_log')
      .select(['after', 'actor_id'])
      .where('tenant_id', '=', TENANT)
      .where('action_type', '=', 'key_chain.rotated')
      .execute();
    const entries = audit.filter((entry) => JSON.parse(String(entry.after)).id === id);
    expect(entries).toHaveLength(1);
    expect(entries[0]?.actor_id).toBe('system:scheduler');
  }

  it("two instances' rounds at the same moment: one takes the job's lease and rotates", async () => {
    const before = await dueChain('leased');
    // The job's rounds as the instances run them (Scheduler.tick, what the timer calls): on SQLite,
    // with one instance, a second scheduler on the same database stands for the second instance.
    const schedulers = instances.all.map((instance) => instance.running.services.scheduler);
    if (schedulers.length === 1) {
      const second = new Scheduler(svc.db, 86_400, { error: () => {} });
      second.add({ name: 'key-rotation', run: () => svc.running.services.keyChains.rotateDue() });
      schedulers.push(second);
    }
    await svc.db.deleteFrom('job_leases').execute();

    await Promise.all(schedulers.map((scheduler) => scheduler.tick()));

    const leases = await svc.db.selectFrom('job_leases').selectAll().where('name', '=', 'key-rotation').execute();
    expect(leases).toHaveLength(1);
    await expectRotatedOnce('leased', before);
  });

  it('two runs of the job that overlap (one outlasting its lease, or run by hand): the chain is rotated once, neither fails', async () => {
    const before = await dueChain('overlapping');
    const runs = instances.all.length === 1 ? [svc, svc] : instances.all;

    await Promise.all(runs.map((instance) => instance.running.services.keyChains.rotateDue()));

    await expectRotatedOnce('overlapping', before);
  });
});
