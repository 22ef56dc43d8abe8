// kill -9 loses nothing: the compiled service, under parallel SD-JWT VC issuance (with status list
// entries) and presentations, is killed with SIGKILL at random moments, three times, and restarted
// on the same database each time. Then: every credential a wallet received has its issued-credential
// record and its status entry, no status list index was handed out twice, every presentation
// answered 200 left a completed session, every status change has its webhook event in the outbox
// (and what the outbox says was delivered did reach the receiver), flows started after the restart
// complete, and no session is left where it can neither complete nor expire (after a final expiry
// run, none is left open).
import { randomInt } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TERMINAL_STATUSES } from '../../src/sessions/model.js';
import { type CompiledService, type Deployment, deployment, PID } from '../support/compiled.js';
import { engine, freshDatabase, type TestDatabase } from '../support/database.js';
import { PID_VCT } from '../support/fixtures.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { holderKey, receiveCredentials } from '../support/wallet.js';

const PID_QUERY = {
  credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [PID_VCT] }, claims: [{ path: ['given_name'] }] }],
};
const KILLS = 3;
const WALLETS = 4;

interface Received {
  session: string;
  credential: string;
}
interface Presented {
  session: string;
  status: number;
}

// PostgreSQL only: it is where several instances share one database and where concurrent
// transactions race for the same status list slots; SQLite runs one instance whose writes are
// serialized, and what survives its kill is its own journal's business.
describe.skipIf(engine !== 'postgres')('kill -9', () => {
  let database: TestDatabase;
  let service: Deployment;
  let db: pg.Client;
  let credentials: { clientId: string; secret: string };
  let receiver: WebhookReceiver;
  const received: Received[] = [];
  const presented: Presented[] = [];

  beforeAll(async () => {
    database = await freshDatabase();
    service = await deployment(database.env);
    db = new pg.Client({ connectionString: database.env.DATABASE_URL });
    await db.connect();
    receiver = await webhookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await db?.end();
    await database?.drop();
  });

  it('loses no credential record or status entry, hands no index out twice, and leaves no session stuck', {
    timeout: 120_000,
  }, async () => {
    let running = await service.start();
    credentials = await service.tenant(running, 'acme');
    await setUp(running);

    for (let kill = 0; kill < KILLS; kill++) {
      const token = await tokenOf(running);
      const stop = { now: false };
      const wallets = Array.from({ length: WALLETS }, () => walletLoop(running, token, stop));
      // Somewhere inside the flows (whatever the machine's speed, once they are under way): offers,
      // token requests, credential requests and presentations are all in flight.
      const before = received.length;
      await progress(() => received.length >= before + 2);
      await new Promise((resolve) => setTimeout(resolve, randomInt(0, 1000)));
      stop.now = true;
      running.started.child.kill('SIGKILL');
      expect(await running.exited).toBe('SIGKILL');
      await Promise.all(wallets);
      running = await service.start();
    }

    // Flows started after the last restart complete.
    const token = await tokenOf(running);
    const after = received.length;
    const afterPresented = presented.length;
    await Promise.all(Array.from({ length: 2 }, () => flow(running, token, { now: false })));
    expect(received.length).toBe(after + 2);
    expect(presented.slice(afterPresented).map((p) => p.status)).toEqual([200, 200]);
    expect(received.length).toBeGreaterThan(2);
    await checkEveryReceivedCredentialIsRecorded(db, received);
    await checkNoStatusIndexTwice(db, received);
    await checkAnsweredPresentationsCompleted(db, presented);
    await checkNoWebhookEventMissing(db, receiver);

    // Every session left open can still end: let time pass (their expiry moved to the past) and
    // have the restarted service's expiry job run.
    running.started.child.kill('SIGKILL');
    await running.exited;
    await db.query(`update sessions set expires_at = $1 where status not in ('completed', 'failed', 'expired')`, [
      new Date(Date.now() - 1000).toISOString(),
    ]);
    running = await service.start({ JOB_INTERVAL_SECONDS: '1' });
    await expect
      .poll(async () => (await db.query(`select id, status from sessions where status <> all($1)`, [TERMINAL_STATUSES])).rows, {
        timeout: 15_000,
        interval: 250,
      })
      .toEqual([]);
    running.started.child.kill('SIGKILL');
    await running.exited;
  });

  async function tokenOf(running: CompiledService) {
    return service.tokenOf(running, credentials.clientId, credentials.secret);
  }

  async function setUp(running: CompiledService) {
    const token = await tokenOf(running);
    const create = async (path: string, body: unknown) => {
      const reply = await running.call('POST', path, { token, body });
      expect(reply.status, reply.text).toBe(201);
    };
    await create('/api/issuer/webhook-endpoints', { id: 'crm', name: 'CRM', url: receiver.url, auth: { type: 'none' } });
    await create('/api/issuer/credentials', PID);
    await create('/api/trust-list', {
      id: 'issuers',
      entities: [
        { type: 'internal', keyChainId: 'default-attestation' },
        { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
      ],
    });
    await create('/api/verifier/config', { id: 'pid-check', dcql_query: PID_QUERY, webhookEndpointId: 'crm' });
  }

  /** One wallet: issuance then presentation, again and again, until the service is killed under it. */
  async function walletLoop(running: CompiledService, token: string, stop: { now: boolean }) {
    while (!stop.now) {
      // A flow the kill cuts fails somewhere: what it was answered before is what is checked.
      await flow(running, token, stop).catch(() => undefined);
    }
  }

  async function flow(running: CompiledService, token: string, stop: { now: boolean }) {
    const offer = await running.call('POST', '/api/issuer/offer', {
      token,
      body: {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['pid'],
        credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika' } } },
        webhookEndpointId: 'crm',
      },
    });
    if (offer.status !== 201) throw new Error(`offer: ${offer.status}`);
    const key = await holderKey();
    const { response } = await receiveCredentials(offer.body.uri, { keys: [key] });
    const [issued] = (response.credentialResponse.credentials ?? []) as { credential: string }[];
    if (!issued) throw new Error('no credential');
    received.push({ session: offer.body.session, credential: issued.credential });
    if (stop.now) return;

    const request = await running.call('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId: 'pid-check' } });
    if (request.status !== 201) throw new Error(`verifier offer: ${request.status}`);
    const resolved = await resolveRequest(request.body.uri);
    const reply = await submit(resolved, { pid: [await presentSdJwt(issued.credential, key.privateJwk, resolved, ['given_name'])] });
    presented.push({ session: request.body.session, status: reply.status });
  }
});

/** Waits until `done` holds, at most 20 s (a kill then comes at whatever point the flows have reached). */
async function progress(done: () => boolean) {
  for (let waited = 0; !done() && waited < 20_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** The `status.status_list` claim of an SD-JWT VC (its issuer-signed JWT's payload). */
function statusOf(credential: string): { idx: number; uri: string } {
  const jwt = credential.split('~')[0] ?? '';
  const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString());
  return payload.status.status_list;
}

async function checkEveryReceivedCredentialIsRecorded(db: pg.Client, received: Received[]) {
  for (const { session, credential } of received) {
    const issued = await db.query('select id from issued_credentials where session_id = $1', [session]);
    expect(issued.rows, `issued-credential record of session ${session}`).toHaveLength(1);
    const { idx, uri } = statusOf(credential);
    const entry = await db.query('select list_id from status_entries where session_id = $1 and idx = $2', [session, idx]);
    expect(entry.rows, `status entry ${idx} of session ${session}`).toHaveLength(1);
    expect(uri).toContain(entry.rows[0].list_id);
  }
}

async function checkNoStatusIndexTwice(db: pg.Client, received: Received[]) {
  const twice = await db.query('select list_id, idx from status_entries group by list_id, idx having count(*) > 1');
  expect(twice.rows).toEqual([]);
  // And no two credentials the wallets hold carry the same entry.
  const entries = received.map(({ credential }) => {
    const { idx, uri } = statusOf(credential);
    return `${uri}#${idx}`;
  });
  expect(new Set(entries).size).toBe(entries.length);
}

async function checkAnsweredPresentationsCompleted(db: pg.Client, presented: Presented[]) {
  for (const { session } of presented.filter((p) => p.status === 200)) {
    const row = await db.query('select status from sessions where id = $1', [session]);
    expect(row.rows[0]?.status, `presentation session ${session}`).toBe('completed');
  }
}

/**
 * No webhook event missing: the outbox row of a status change is written by the statement that makes
 * the change, so every issuance session that has moved has the event of the status it is in, every
 * completed presentation its `presentation.completed`, and every event the outbox marks delivered
 * reached the receiver under its webhook-id (events still pending are sent after the restart; one
 * whose attempt the kill cut waits out its lease first).
 */
async function checkNoWebhookEventMissing(db: pg.Client, receiver: WebhookReceiver) {
  const missing = await db.query(`
    select s.id, s.kind, s.status from sessions s
    where s.webhook_target is not null
      and ((s.kind = 'issuance' and s.status <> 'active') or (s.kind <> 'issuance' and s.status = 'completed'))
      and not exists (
        select 1 from webhook_deliveries d where d.session_id = s.id
          and (d.status = s.status or (s.kind <> 'issuance' and d.type = 'presentation.completed')))`);
  expect(missing.rows, 'sessions whose last status change has no webhook event').toEqual([]);
  const moved = await db.query(`select count(*)::int as n from sessions where webhook_target is not null and status <> 'active'`);
  expect(moved.rows[0].n).toBeGreaterThan(0);
  const delivered = await db.query(`select id from webhook_deliveries where state = 'delivered'`);
  expect(delivered.rows.length).toBeGreaterThan(0);
  expect(delivered.rows.map((row) => row.id).filter((id) => !receiver.ids.has(id))).toEqual([]);
}

interface WebhookReceiver {
  url: string;
  /** The webhook-id of every request received. */
  ids: Set<string>;
  close(): Promise<void>;
}

async function webhookReceiver(): Promise<WebhookReceiver> {
  const ids = new Set<string>();
  const server: Server = createServer((req, res) => {
    const id = req.headers['webhook-id'];
    if (typeof id === 'string') ids.add(id);
    req.resume().on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/events`,
    ids,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
