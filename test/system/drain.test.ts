// Stopping the compiled service with a signal, as an orchestrator does: readiness goes to 503 at
// once, the listener closes after SHUTDOWN_DELAY_SECONDS, the request in flight (held at a slow
// attribute provider) still gets its credential, idle connections and event streams end cleanly, and
// the process exits 0; past SHUTDOWN_GRACE_SECONDS what is still open is cut; a second signal exits
// at once.
import { get, Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CompiledService, type Deployment, deployment, type HeldProvider, heldProvider, PID } from '../support/compiled.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { holderKey, receiveCredentials } from '../support/wallet.js';

let database: TestDatabase;
let provider: HeldProvider;
let service: Deployment;
beforeAll(async () => {
  database = await freshDatabase();
  provider = await heldProvider({ given_name: 'Erika' });
  service = await deployment(database.env);
});
afterAll(async () => {
  await provider.close();
  await database.drop();
});

/** A started service with the configuration, the slow attribute provider and an offer made; the admin's token. */
async function withOffer(running: CompiledService, tenantId: string) {
  const admin = await service.tenant(running, tenantId);
  const token = await service.tokenOf(running, admin.clientId, admin.secret);
  const create = async (path: string, body: unknown) => {
    const reply = await running.call('POST', path, { token, body });
    expect(reply.status, reply.text).toBe(201);
  };
  await create('/api/issuer/credentials', PID);
  await create('/api/issuer/attribute-providers', { id: 'slow', name: 'Slow registry', url: provider.url, auth: { type: 'none' } });
  const offer = await running.call('POST', '/api/issuer/offer', {
    token,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: ['pid'],
      credentialClaims: { pid: { type: 'attributeProvider', attributeProviderId: 'slow' } },
    },
  });
  expect(offer.status, offer.text).toBe(201);
  return { token, offer: offer.body as { uri: string; session: string } };
}

/** Polls until `check` holds (each try a real request); fails the test after `tries`. */
async function eventually(check: () => Promise<boolean>, what: string, tries = 100) {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`never: ${what}`);
}

/** True when a new TCP connection to the port is refused (the listener is closed). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** An event stream read to its end: 'clean' when the server ended the body properly, 'cut' when the connection broke. */
function streamEnd(url: string): Promise<{ response: IncomingMessage; end: Promise<'clean' | 'cut'> }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { accept: 'text/event-stream' } }, (response) => {
      response.resume();
      const end = new Promise<'clean' | 'cut'>((done) => {
        response.once('end', () => done('clean'));
        response.once('aborted', () => done('cut'));
        response.once('error', () => done('cut'));
      });
      resolve({ response, end });
    }).on('error', reject);
  });
}

describe('SIGTERM', () => {
  it('drains: readiness 503 at once, the listener closes after the delay, the request in flight completes, streams end cleanly, exit 0', async () => {
    const running = await service.start({ SHUTDOWN_DELAY_SECONDS: '2', SSE_HEARTBEAT_SECONDS: '60' });
    const { token, offer } = await withOffer(running, 'drain');
    expect((await running.call('GET', '/health/ready')).status).toBe(200);

    const stream = await streamEnd(`${running.base}/api/session/${offer.session}/events?token=${token}`);
    expect(stream.response.statusCode).toBe(200);
    // An idle kept-alive connection: closed by the server when its listener closes, not at its keep-alive timeout.
    const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
    const idle = await new Promise<{ closed: Promise<void> }>((resolve, reject) => {
      get(`${running.base}/health`, { agent }, (response) => {
        const socket = response.socket;
        // Held in an object: a promise resolved with a promise would wait for it.
        response.resume().on('end', () => resolve({ closed: new Promise((closed) => socket.once('close', () => closed())) }));
      }).on('error', reject);
    });

    const key = await holderKey();
    const receiving = receiveCredentials(offer.uri, { keys: [key] });
    await provider.received();
    running.started.child.kill('SIGTERM');

    // During the delay: still listening, but not ready, and saying why.
    await eventually(async () => (await running.call('GET', '/health/ready')).status === 503, 'readiness 503');
    const ready = await running.call('GET', '/health/ready');
    expect(ready.body).toEqual({ status: 'draining' });
    expect((await running.call('GET', '/health')).status).toBe(200);

    // After it: new connections are refused; the idle one and the event stream are ended by the server.
    await eventually(() => refused(running.started.port), 'listener closed');
    await idle.closed;
    expect(await stream.end).toBe('clean');

    // The request held at the attribute provider all this while still gets its credential.
    provider.release();
    const { response } = await receiving;
    expect(response.credentialResponse.credentials).toHaveLength(1);
    expect(await running.exited).toBe(0);
    expect(running.started.output()).toMatch(/"msg":"stopped"/);
    agent.destroy();
  });
});

describe('past the grace', () => {
  it('cuts the connection still open, says so, and exits 0', async () => {
    provider.hold();
    const running = await service.start({ SHUTDOWN_GRACE_SECONDS: '2' });
    const { offer } = await withOffer(running, 'grace');
    const before = provider.count();
    const receiving = receiveCredentials(offer.uri).then(
      () => 'answered',
      () => 'cut',
    );
    await provider.received(before + 1);
    running.started.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    expect(await receiving).toBe('cut');
    expect(running.started.output()).toMatch(/grace over, cutting the connections still open/);
  });
});

describe('a second signal', () => {
  it('exits at once, with the code of a process the signal ended (143 for SIGTERM)', async () => {
    const running = await service.start();
    const { offer } = await withOffer(running, 'twice');
    const before = provider.count();
    const receiving = receiveCredentials(offer.uri).catch(() => undefined);
    await provider.received(before + 1);
    running.started.child.kill('SIGTERM');
    await eventually(async () => running.started.output().includes('shutting down: draining'), 'draining logged');
    running.started.child.kill('SIGTERM');
    expect(await running.exited).toBe(143);
    expect(running.started.output()).toMatch(/second signal while draining: exiting at once/);
    await receiving;
  });
});
