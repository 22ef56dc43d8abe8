// Starts the real service (the same start() as `npm start`) on a free port over a fresh database,
// and offers the few steps almost every test needs: tokens, tenants, clients.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { Kysely } from 'kysely';
import { ROLES, type Role } from '../../src/platform/auth/roles.js';
import type { Database } from '../../src/platform/db/schema.js';
import { StartUpError } from '../../src/platform/lifecycle/start-up-errors.js';
import { type RunningService, start } from '../../src/start-up/server.js';
import type { KnownPath, Method, Operation, RequestBodyOf, SuccessBodyOf } from './api-types.js';
import { TestClock } from './clock.js';
import { engine, freshDatabase, type TestDatabase } from './database.js';
import { type Reply, type RequestOptions, request } from './http.js';

export const ROOT_ID = 'root';

export interface TestService {
  url: string;
  rootSecret: string;
  /** The database and secrets of this service, for starting another instance beside it. */
  shared: SharedSetup;
  running: RunningService;
  /** The time of the services that expire things: a test moves it forward instead of waiting. */
  clock: TestClock;
  /** Direct access to the service's database, for asserting what is (and is not) stored. */
  db: Kysely<Database>;
  /**
   * A request to a path and method of the OpenAPI document (clients/typescript/schema.ts): the body
   * it takes and the body of its success answer are typed. On a failure the body is a problem
   * (test/support/problems.ts reads it). A path the document does not have does not compile.
   */
  call<M extends Method, P extends string>(method: M, path: ApiPath<P, M>, options?: ApiOptions<P, M>): Promise<ApiReply<P, M>>;
  /**
   * The untyped escape hatch: any method, path and body, for a request the document does not
   * describe (a body it deliberately refuses, a path outside it).
   */
  raw(method: string, path: string, options?: RequestOptions): Promise<Reply<any>>;
  token(clientId: string, secret: string): Promise<string>;
  rootToken(): Promise<string>;
  /** Creates a tenant with an admin client holding `roles`; returns the admin's token. */
  tenant(id: string, roles?: Role[]): Promise<{ token: string; clientId: string; secret: string }>;
  /** Creates a client in the caller's tenant and returns its token. */
  client(adminToken: string, clientId: string, roles: Role[]): Promise<string>;
  stop(): Promise<void>;
}

/** Every role a client of a tenant can hold. */
export const ALL_TENANT_ROLES: Role[] = ROLES.filter((role) => role !== 'tenants:manage');

/** A path the document has for this method (else the compiler says which is missing). */
export type ApiPath<P extends string, M extends Method> = P extends KnownPath<P, M> ? P : KnownPath<P, M>;
export type ApiOptions<P extends string, M extends Method> = Omit<RequestOptions, 'body'> & { body?: RequestBodyOf<Operation<P, M>> };
export type ApiReply<P extends string, M extends Method> = Reply<SuccessBodyOf<Operation<P, M>>>;

export interface SharedSetup {
  env: Record<string, string>;
  rootSecret: string;
}

export interface StartOptions {
  /**
   * Start another instance on the database of a running service, with its master secret and root
   * client (as a second instance behind a load balancer). Stopping it leaves the database in place.
   */
  besides?: Pick<TestService, 'shared'>;
}

/** Two instances on one database, the second started besides the first (as behind a load balancer). */
export async function startTwoInstances(): Promise<[TestService, TestService]> {
  const a = await startService();
  return [a, await startService({}, { besides: a })];
}

/** Stops instances of one database, the last started first (the first one's stop drops the database). */
export async function stopInstances(...started: (TestService | undefined)[]): Promise<void> {
  for (const svc of started.reverse()) await svc?.stop();
}

/**
 * A second instance where instances can share a database (PostgreSQL: started beside `svc`, with
 * `env`), else `svc` itself (SQLite's file belongs to one process). Stop it with stopSecond.
 */
export async function secondInstance(svc: TestService, env: Record<string, string> = {}): Promise<TestService> {
  return engine === 'postgres' ? startService(env, { besides: svc }) : svc;
}

/** Stops what secondInstance started (nothing when it handed back `svc`). */
export async function stopSecond(svc: TestService, second: TestService): Promise<void> {
  if (second !== svc) await second.stop();
}

export async function startService(env: Record<string, string> = {}, options: StartOptions = {}): Promise<TestService> {
  const database: TestDatabase = options.besides ? { env: {}, drop: async () => {} } : await freshDatabase();
  const rootSecret = options.besides?.shared.rootSecret ?? randomBytes(24).toString('base64url');
  const setup = options.besides?.shared.env ?? {
    MASTER_SECRET: randomBytes(32).toString('base64url'),
    AUTH_CLIENT_ID: ROOT_ID,
    AUTH_CLIENT_SECRET: rootSecret,
    ...database.env,
  };
  // The port is chosen first so that PUBLIC_URL (issuer identifiers, wallet URLs) names the real address.
  const port = env.PORT ?? String(await freePort());
  const clock = new TestClock();
  const running = await start(
    {
      NODE_ENV: 'test',
      PORT: port,
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      TOKEN_FAILED_ATTEMPTS_LIMIT: '1000',
      // Tests open many wallet-initiated flows from one address; the limit's own tests set it low.
      WALLET_INITIATED_LIMIT_PER_ADDRESS: '1000',
      ...setup,
      ...env,
    },
    () => {},
    { clock },
  );
  const raw = (method: string, path: string, options?: RequestOptions) => request(running.url, method, path, options);
  // The types are the document's; what runs is the same request as raw's.
  const call = raw as TestService['call'];
  const token = async (clientId: string, secret: string) => {
    const reply = await call('POST', '/api/oauth2/token', {
      body: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret },
    });
    if (reply.status !== 200) throw new Error(`token for ${clientId}: ${reply.status} ${reply.text}`);
    return reply.body.access_token;
  };
  let root: string | undefined;
  const rootToken = async () => (root ??= await token(ROOT_ID, rootSecret));
  return {
    url: running.url,
    rootSecret,
    shared: { env: setup, rootSecret },
    running,
    clock,
    db: running.db.kysely,
    call,
    raw,
    token,
    rootToken,
    async tenant(id, roles = ALL_TENANT_ROLES) {
      const reply = await call('POST', '/api/tenant', { token: await rootToken(), body: { id, name: `Tenant ${id}`, roles } });
      if (reply.status !== 201) throw new Error(`tenant ${id}: ${reply.status} ${reply.text}`);
      if (!reply.body.client) throw new Error(`tenant ${id}: no admin client in ${reply.text}`);
      const { clientId, secret } = reply.body.client;
      return { token: await token(clientId, secret), clientId, secret };
    },
    async client(adminToken, clientId, roles) {
      const reply = await call('POST', '/api/client', { token: adminToken, body: { clientId, roles } });
      if (reply.status !== 201) throw new Error(`client ${clientId}: ${reply.status} ${reply.text}`);
      return token(clientId, reply.body.secret);
    },
    async stop() {
      await running.close();
      await database.drop();
    },
  };
}

/** Starts the service with `env` expecting it to refuse: the StartUpError it stopped with (a start that succeeds fails the test). */
export async function startFailure(env: Record<string, string | undefined>): Promise<StartUpError> {
  const failure = await start(env, () => {}).then(
    async (running) => {
      await running.close();
      throw new Error('started');
    },
    (err: unknown) => err,
  );
  if (!(failure instanceof StartUpError)) throw failure;
  return failure;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
