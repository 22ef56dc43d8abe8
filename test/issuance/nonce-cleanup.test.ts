import { afterAll, beforeAll, expect, it } from 'vitest';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startService({ JOB_INTERVAL_SECONDS: '1' });
  await svc.tenant('acme');
});
afterAll(() => svc.stop());

it('purges expired nonces on schedule and keeps fresh ones', async () => {
  await svc.call('POST', '/issuers/acme/nonce');
  await svc.call('POST', '/issuers/acme/nonce');
  const [stale] = await svc.db.selectFrom('nonces').select('hash').execute();
  await svc.db
    .updateTable('nonces')
    .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
    .where('hash', '=', stale?.hash as string)
    .execute();
  await expect.poll(async () => (await svc.db.selectFrom('nonces').select('hash').execute()).length, { timeout: 5000 }).toBe(1);
});
