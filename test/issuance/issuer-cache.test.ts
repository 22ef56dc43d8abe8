// Two instances on one PostgreSQL database: each keeps the issuers it read (ISSUER_DIRECTORY_CACHE_MS,
// minutes), and a change made through one (issuer settings saved, the tenant deleted) reaches the
// other's copy over the shared event bus within moments; the instance that made it sees it at once.
// An instance whose listening connection was lost forgets every issuer once it is back.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISSUER_DIRECTORY_CACHE_MS } from '../../src/issuance/issuers.js';
import { engine } from '../support/database.js';
import { startTwoInstances, stopInstances, type TestService } from '../support/service.js';

/** Far below ISSUER_DIRECTORY_CACHE_MS: a change seen within it came by the bus, not by expiry. */
const BY_THE_BUS_MS = 3_000;

describe.skipIf(engine !== 'postgres')('the issuer cache across instances', () => {
  let a: TestService;
  let b: TestService;
  let token: string;
  beforeAll(async () => {
    [a, b] = await startTwoInstances();
    token = (await a.tenant('acme')).token;
  });
  afterAll(() => stopInstances(a, b));

  /** The authorization endpoint without a request_uri: it names the first thing wrong, the issuer settings' verdict first. */
  const authorizeError = async (svc: TestService, tenant = 'acme') => {
    const reply = await fetch(`${svc.url}/issuers/${tenant}/authorize?client_id=w`, { redirect: 'manual' });
    return { status: reply.status, body: (await reply.json()) as { error?: string; error_description?: string } };
  };
  const enabledAnswer = {
    status: 400,
    body: {
      error: 'invalid_request',
      error_description: 'request_uri is required: this server accepts only pushed authorization requests',
    },
  };

  /** Polls `probe` on B from now; the milliseconds until it held. */
  const seenOnB = async (probe: () => Promise<boolean>) => {
    const started = Date.now();
    while (!(await probe())) {
      if (Date.now() - started > BY_THE_BUS_MS) throw new Error('instance B never saw the change');
      await new Promise((r) => setTimeout(r, 10));
    }
    return Date.now() - started;
  };

  it('settings saved through A, then the tenant deleted through A, are seen on B long before its copy would expire', async () => {
    expect(ISSUER_DIRECTORY_CACHE_MS).toBeGreaterThan(BY_THE_BUS_MS * 10);
    // B reads (and keeps) the issuer with its built-in server enabled.
    expect(await authorizeError(b)).toEqual(enabledAnswer);
    const saved = await a.raw('PUT', '/api/issuer/config', { token, body: { builtinAuthorizationServerEnabled: false } });
    expect(saved.status).toBe(200);
    const disabled = {
      status: 400,
      body: { error: 'invalid_request', error_description: "this issuer's built-in authorization server is disabled" },
    };
    // A made the change: it answers with it at once.
    expect(await authorizeError(a)).toEqual(disabled);
    await seenOnB(async () => (await authorizeError(b)).body.error_description === disabled.body.error_description);
    expect(await authorizeError(b)).toEqual(disabled);

    const removed = await a.call('DELETE', '/api/tenant/acme', { token: await a.rootToken() });
    expect(removed.status).toBe(204);
    expect((await authorizeError(a)).status).toBe(404);
    await seenOnB(async () => (await authorizeError(b)).status === 404);
  });

  it('a change B could not hear (its listening connection lost) is seen once B listens again', async () => {
    const beta = (await a.tenant('beta')).token;
    expect((await a.raw('PUT', '/api/issuer/config', { token: beta, body: {} })).status).toBe(200);
    expect(await authorizeError(b, 'beta')).toEqual(enabledAnswer);
    // Written behind the services' backs: no event announces it.
    const row = await a.db.selectFrom('issuer_settings').select('document').where('tenant_id', '=', 'beta').executeTakeFirstOrThrow();
    const document = JSON.stringify({ ...JSON.parse(row.document), builtinAuthorizationServerEnabled: false });
    await a.db.updateTable('issuer_settings').set({ document }).where('tenant_id', '=', 'beta').execute();
    await new Promise((r) => setTimeout(r, 200));
    expect(await authorizeError(b, 'beta')).toEqual(enabledAnswer);

    await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'svc-events' and datname = current_database()`.execute(
      a.db,
    );
    await seenOnB(
      async () => (await authorizeError(b, 'beta')).body.error_description === "this issuer's built-in authorization server is disabled",
    );
  });
});
