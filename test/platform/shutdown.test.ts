// What stopping runs after the server has closed: the ordered phases of named steps any part joins
// (the webhook worker's stop among them).
import { describe, expect, it } from 'vitest';
import { ShutdownSteps } from '../../src/platform/lifecycle/shutdown.js';
import { heldProvider } from '../support/compiled.js';
import { PID_VCT } from '../support/fixtures.js';
import { startService } from '../support/service.js';
import { receiveCredentials } from '../support/wallet.js';

const silent = { warn: () => {}, error: () => {} };

describe('shutdown steps', () => {
  it('run phase by phase whatever order they were added in, and in the order added within a phase', async () => {
    const steps = new ShutdownSteps();
    const ran: string[] = [];
    const step = (name: string) => async () => {
      ran.push(name);
    };
    steps.add('disconnect', 'database', step('database'));
    steps.add('release', 'leases', step('leases'));
    steps.add('stop-work', 'scheduler', step('scheduler'));
    steps.add('stop-work', 'webhook worker', step('webhook worker'));
    await steps.run(silent);
    expect(ran).toEqual(['scheduler', 'webhook worker', 'leases', 'database']);
  });

  it('go on past a step that fails, and stop waiting for work at the deadline while still releasing and disconnecting', async () => {
    const steps = new ShutdownSteps();
    const ran: string[] = [];
    const logged: string[] = [];
    steps.add('stop-work', 'broken', async () => {
      throw new Error('broken');
    });
    steps.add('stop-work', 'never ends', () => new Promise<void>(() => {}));
    steps.add('release', 'leases', async () => {
      ran.push('leases');
    });
    steps.add('disconnect', 'database', async () => {
      ran.push('database');
    });
    steps.waitNoLongerThan(Date.now() + 50);
    await steps.run({
      error: (obj: object) => logged.push(`failed ${JSON.stringify(obj)}`),
      warn: (obj: object) => logged.push(`late ${JSON.stringify(obj)}`),
    });
    expect(ran).toEqual(['leases', 'database']);
    expect(logged).toEqual([expect.stringMatching(/^failed .*"step":"broken"/), 'late {"step":"never ends"}']);
  });
});

describe('stopping the service', () => {
  it('drains: waits for webhook deliveries under way before it closes the database', async () => {
    const receiver = await heldProvider({});
    const svc = await startService();
    try {
      const { token } = await svc.tenant('acme');
      const made = await svc.raw('POST', '/api/issuer/webhook-endpoints', {
        token,
        body: { id: 'crm', name: 'CRM', url: receiver.url, auth: { type: 'none' } },
      });
      expect(made.status, made.text).toBe(201);
      const config = await svc.raw('POST', '/api/issuer/credentials', {
        token,
        body: { id: 'pid', config: { format: 'dc+sd-jwt' }, vct: PID_VCT, fields: [{ path: ['given_name'], type: 'string' }] },
      });
      expect(config.status, config.text).toBe(201);
      const offer = await svc.raw('POST', '/api/issuer/offer', {
        token,
        body: {
          response_type: 'uri',
          flow: 'pre_authorized_code',
          credentialConfigurationIds: ['pid'],
          credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika' } } },
          webhookEndpointId: 'crm',
        },
      });
      expect(offer.status, offer.text).toBe(201);
      await receiveCredentials(offer.body.uri);
      // The first status change (a session's events go out in order) is being delivered, held at the receiver.
      await receiver.received(1);

      let closed = false;
      const closing = svc.running.drain().then(() => {
        closed = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(closed).toBe(false);
      receiver.release();
      await closing;
      expect(receiver.count()).toBeGreaterThanOrEqual(1);
    } finally {
      receiver.release();
      await svc.stop();
      await receiver.close();
    }
  });
});
