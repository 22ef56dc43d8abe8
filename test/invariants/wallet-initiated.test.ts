// Issue 37: the bound on wallet-initiated sessions holds when one address sends many requests at once,
// over two instances of one PostgreSQL database (one instance on SQLite): each request is admitted by
// one conditional upsert of its window's row, so exactly the limit open sessions, and the others get 429.
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/service.js';
import { pkce, WALLET_REDIRECT_URI } from '../support/wallet.js';
import { type Instances, instancesOf, race, tally } from './support.js';

const LIMITS = { TRUST_PROXY: 'true', WALLET_INITIATED_LIMIT_PER_ADDRESS: '5', WALLET_INITIATED_WINDOW: '60' };
let svc: TestService;
let instances: Instances;

beforeAll(async () => {
  svc = await startService(LIMITS);
  const { token } = await svc.tenant('acme');
  const integrator = await generateKeyPair('ES256', { extractable: true });
  const membership = {
    id: 'membership',
    config: { format: 'dc+sd-jwt', scope: 'membership_scope' },
    vct: 'urn:example:membership',
    fields: [{ path: ['member_level'], type: 'string', mandatory: true }],
    iaeActions: [{ type: 'redirect-to-web', url: 'https://integrator.example/join', callbackKey: await exportJWK(integrator.publicKey) }],
  };
  const created = await svc.raw('POST', '/api/issuer/credentials', { token, body: membership });
  expect(created.status, created.text).toBe(201);
  instances = await instancesOf(svc, LIMITS);
});
afterAll(async () => {
  await instances.stop();
  await svc.stop();
});

describe('bounded under concurrency: wallet-initiated sessions', () => {
  it('32 PARs without issuer_state from one address at once open exactly 5 sessions; 27 get 429', async () => {
    const form = {
      client_id: 'metadata-wallet',
      response_type: 'code',
      redirect_uri: WALLET_REDIRECT_URI,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      scope: 'membership_scope',
    };
    const replies = await race(instances.all, 32, (instance) =>
      instance.raw('POST', '/issuers/acme/par', { form, headers: { 'x-forwarded-for': '198.51.100.7' } }),
    );
    expect(tally(replies)).toEqual({ '201': 5, '429 invalid_request': 27 });
    const sessions = await svc.db.selectFrom('sessions').select('id').where('tenant_id', '=', 'acme').execute();
    expect(sessions).toHaveLength(5);
  });
});
