// The compiled service as a child process on a given database, restartable on the same database and
// secrets (as an orchestrator restarts a pod), with the few calls the tests of stopping and crashing
// need: tokens, a tenant, a held attribute provider.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { PID_VCT } from './fixtures.js';
import { type Reply, type RequestOptions, request } from './http.js';
import { run, type Started } from './process.js';
import { ALL_TENANT_ROLES, freePort, ROOT_ID } from './service.js';

export interface CompiledService {
  started: Started;
  base: string;
  call(method: string, path: string, options?: RequestOptions): Promise<Reply<any>>;
  /** Resolves with the process's exit code (or the signal that ended it) once it has exited. */
  exited: Promise<number | NodeJS.Signals | null>;
}

export interface Deployment {
  /** Starts (again) on the same database, port and secrets. */
  start(extraEnv?: Record<string, string>): Promise<CompiledService>;
  tokenOf(service: CompiledService, clientId: string, secret: string): Promise<string>;
  /** Creates tenant `id` with every role; returns its admin client. */
  tenant(service: CompiledService, id: string): Promise<{ clientId: string; secret: string }>;
}

export async function deployment(databaseEnv: Record<string, string>, env: Record<string, string> = {}): Promise<Deployment> {
  const port = await freePort();
  const rootSecret = randomBytes(24).toString('base64url');
  const fixed = {
    ...databaseEnv,
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    MASTER_SECRET: randomBytes(32).toString('base64url'),
    AUTH_CLIENT_ID: ROOT_ID,
    AUTH_CLIENT_SECRET: rootSecret,
    WALLET_INITIATED_LIMIT_PER_ADDRESS: '10000',
    ...env,
  };
  const tokenOf = async (service: CompiledService, clientId: string, secret: string) => {
    const reply = await service.call('POST', '/api/oauth2/token', {
      body: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret },
    });
    if (reply.status !== 200) throw new Error(`token for ${clientId}: ${reply.status} ${reply.text}`);
    return reply.body.access_token as string;
  };
  return {
    async start(extraEnv = {}) {
      const started = await run({ ...fixed, ...extraEnv });
      const base = `http://127.0.0.1:${started.port}`;
      const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
        started.child.removeAllListeners('exit');
        started.child.on('exit', (code, signal) => resolve(code ?? signal));
      });
      return { started, base, exited, call: (method, path, options) => request(base, method, path, options) };
    },
    tokenOf,
    async tenant(service, id) {
      const created = await service.call('POST', '/api/tenant', {
        token: await tokenOf(service, ROOT_ID, rootSecret),
        body: { id, name: `Tenant ${id}`, roles: ALL_TENANT_ROLES },
      });
      if (created.status !== 201) throw new Error(`tenant ${id}: ${created.status} ${created.text}`);
      return created.body.client as { clientId: string; secret: string };
    },
  };
}

export interface HeldProvider {
  url: string;
  /** Resolves when the provider has received its `n`-th request (1: the first). */
  received(n?: number): Promise<void>;
  /** How many requests it has received so far. */
  count(): number;
  /** Answers every request held so far, and every later one at once. */
  release(): void;
  /** Holds the requests from now on again. */
  hold(): void;
  close(): Promise<void>;
}

/**
 * An attribute provider that holds each request until the test releases it: a slow request whose
 * end the test decides, instead of a timer guessing how long the steps around it take.
 */
export async function heldProvider(claims: Record<string, unknown>): Promise<HeldProvider> {
  const held: (() => void)[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let count = 0;
  let released = false;
  const server: Server = createServer((req, res) => {
    req.resume().on('end', () => {
      const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ claims }));
      count++;
      for (const waiter of waiters.filter((w) => w.n <= count)) waiter.resolve();
      if (released) answer();
      else held.push(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/claims`,
    received: (n = 1) => new Promise((resolve) => (count >= n ? resolve() : waiters.push({ n, resolve }))),
    count: () => count,
    release() {
      released = true;
      for (const answer of held.splice(0)) answer();
    },
    hold() {
      released = false;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The SD-JWT VC configuration with status entries that the compiled-process tests issue. */
export const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt' },
  vct: PID_VCT,
  statusManagement: true,
  fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
};
