// The admin client's token renewal reads the provider's token answer with a schema: an answer
// without a usable access token is refused naming the field at fault; fields the renewal can do
// without are taken as absent when they have the wrong type.
import { describe, expect, it } from 'vitest';
import { AdminToken } from '../../src/identity-provider/admin-token.js';
import type { OutboundClient } from '../../src/platform/outbound/client.js';
import { TestClock } from '../support/clock.js';

/** A token endpoint that answers each request with the next body, 200. */
function tokenEndpoint(...bodies: unknown[]) {
  const forms: string[] = [];
  const outbound: Pick<OutboundClient, 'request'> = {
    request: async (_url, init) => {
      forms.push(init?.body ?? '');
      return { status: 200, ok: true, headers: {}, body: Buffer.from(JSON.stringify(bodies.shift())) };
    },
  };
  return { outbound, forms };
}

const credentials = { clientId: 'svc-admin', secret: 'secret' };

describe('admin token renewal', () => {
  it('refuses a 200 answer without an access token, naming the field', async () => {
    const { outbound } = tokenEndpoint({ token_type: 'Bearer' });
    const token = new AdminToken(outbound, 'https://op.example/token', credentials, { access_token: 'first' }, new TestClock());
    await expect(token.renew('first')).rejects.toThrow("the admin client 'svc-admin' got no token (access_token: ");
  });

  it('takes an expires_in or refresh_token of the wrong type as absent', async () => {
    const { outbound, forms } = tokenEndpoint({ access_token: 'second', expires_in: '300', refresh_token: 42 }, { access_token: 'third' });
    const token = new AdminToken(outbound, 'https://op.example/token', credentials, { access_token: 'first' }, new TestClock());
    expect(await token.renew('first')).toBe('second');
    // No refresh token was kept: the next renewal uses client credentials again.
    expect(await token.renew('second')).toBe('third');
    expect(forms).toEqual(['grant_type=client_credentials', 'grant_type=client_credentials']);
  });
});
