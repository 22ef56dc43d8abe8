import { afterAll, beforeAll, expect, it } from 'vitest';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
  await svc.tenant('acme');
});
afterAll(() => svc.stop());

it('purges expired nonces in a round of the scheduled jobs and keeps fresh ones', async () => {
  await svc.call('POST', '/issuers/acme/nonce');
  await svc.call('POST', '/issuers/acme/nonce');
  const [stale] = await svc.db.selectFrom('nonces').select('hash').execute();
  await svc.db
    .updateTable('nonces')
    .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
    .where('hash', '=', stale?.hash as string)
    .execute();
  await svc.running.services.scheduler.runNow('nonce-cleanup');
  expect((await svc.db.selectFrom('nonces').select('hash').execute()).length).toBe(1);
});
