// Two instances on one PostgreSQL database: each keeps the configurations it read (CONFIG_CACHE_MS,
// PRESENTATION_CONFIG_CACHE_MS),
// and a change made through one reaches the other's cache over the shared event bus, well within
// that bound, and at once on the instance that made it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_CACHE_MS } from '../../src/credential-configs/service.js';
import { PRESENTATION_CONFIG_CACHE_MS } from '../../src/presentation-configs/service.js';
import { engine } from '../support/database.js';
import { startTwoInstances, stopInstances, type TestService } from '../support/service.js';

/** A configuration kind's calls on the configuration 'pid', typed by the OpenAPI document. */
interface Kind {
  kind: string;
  cacheMs: number;
  create(svc: TestService, token: string): Promise<{ status: number }>;
  read(svc: TestService, token: string): Promise<{ status: number; body: { description?: string | null } }>;
  update(svc: TestService, token: string, description: string): Promise<{ status: number }>;
  remove(svc: TestService, token: string): Promise<{ status: number }>;
}

const kinds: Kind[] = [
  {
    kind: 'credential configuration',
    cacheMs: CONFIG_CACHE_MS,
    create: (svc, token) =>
      svc.call('POST', '/api/issuer/credentials', {
        token,
        body: { id: 'pid', config: { format: 'dc+sd-jwt' }, vct: 'urn:eudi:pid:1', fields: [] },
      }),
    read: (svc, token) => svc.call('GET', '/api/issuer/credentials/pid', { token }),
    update: (svc, token, description) => svc.call('PATCH', '/api/issuer/credentials/pid', { token, body: { description } }),
    remove: (svc, token) => svc.call('DELETE', '/api/issuer/credentials/pid', { token }),
  },
  {
    kind: 'presentation configuration',
    cacheMs: PRESENTATION_CONFIG_CACHE_MS,
    create: (svc, token) =>
      svc.call('POST', '/api/verifier/config', {
        token,
        body: { id: 'pid', dcql_query: { credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] } }] } },
      }),
    read: (svc, token) => svc.call('GET', '/api/verifier/config/pid', { token }),
    update: (svc, token, description) => svc.call('PATCH', '/api/verifier/config/pid', { token, body: { description } }),
    remove: (svc, token) => svc.call('DELETE', '/api/verifier/config/pid', { token }),
  },
];

describe.skipIf(engine !== 'postgres').each(kinds)('$kind, cached across instances', ({ cacheMs, create, read, update, remove }) => {
  let a: TestService;
  let b: TestService;
  let token: string;
  beforeAll(async () => {
    [a, b] = await startTwoInstances();
    token = (await a.tenant('acme')).token;
    expect((await create(a, token)).status).toBe(201);
  });
  afterAll(() => stopInstances(a, b));

  /**
   * Reads the configuration on B (so that B has just cached it), makes `change` through A, then polls
   * B until `probe` holds: the milliseconds from B's read. Without the bus, B would keep its copy for
   * `cacheMs` from that read.
   */
  const seenOnB = async (change: () => Promise<void>, probe: () => Promise<boolean>) => {
    expect((await read(b, token)).status).toBe(200);
    const started = Date.now();
    await change();
    while (!(await probe())) {
      if (Date.now() - started > cacheMs * 5) throw new Error('instance B never saw the change');
      await new Promise((r) => setTimeout(r, 10));
    }
    return Date.now() - started;
  };

  it('an update and a deletion through A are seen on B before its cached copy would expire', async () => {
    const updated = await seenOnB(
      async () => {
        expect((await update(a, token, 'changed')).status).toBe(200);
        // A made the change: it answers with it at once.
        expect((await read(a, token)).body.description).toBe('changed');
      },
      async () => (await read(b, token)).body.description === 'changed',
    );
    expect(updated).toBeLessThan(cacheMs * 0.8);

    const deleted = await seenOnB(
      async () => expect((await remove(a, token)).status).toBe(204),
      async () => (await read(b, token)).status === 404,
    );
    expect(deleted).toBeLessThan(cacheMs * 0.8);
  });
});
