import { createServer, type Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AxeFinding,
  browserAvailable,
  DESKTOP,
  logInToConsole,
  PHONE,
  seriousViolations,
  startConsole,
  stopConsole,
} from '../support/browser.js';
import { type RegistrarFake, startRegistrarFake } from '../support/registrar-fake.js';
import type { TestService } from '../support/service.js';
import { receiveCredentials } from '../support/wallet.js';

const VIEWPORTS = { desktop: DESKTOP, phone: PHONE };
let svc: TestService;
let browser: Browser;
let tenant: Awaited<ReturnType<TestService['tenant']>>;
let sessionId: string;
let deferredSessionId: string;
let provider: Server;
let registrar: RegistrarFake;

beforeAll(async () => {
  if (!browserAvailable) return;
  ({ svc, browser } = await startConsole());
  // Something on every page: a credential configuration, a session that issued from it, a user.
  tenant = await svc.tenant('axe');
  const config = await svc.call('POST', '/api/issuer/credentials', {
    token: tenant.token,
    body: {
      id: 'pid',
      config: { format: 'dc+sd-jwt' },
      vct: 'urn:eudi:pid:1',
      statusManagement: true,
      fields: [
        { path: ['given_name'], type: 'string' },
        { path: ['family_name'], type: 'string' },
      ],
    },
  });
  expect(config.status, config.text).toBe(201);
  const offer = await svc.call('POST', '/api/issuer/offer', {
    token: tenant.token,
    body: { response_type: 'uri', flow: 'pre_authorized_code', credentialConfigurationIds: ['pid'] },
  });
  expect(offer.status, offer.text).toBe(201);
  sessionId = offer.body.session;
  const user = await svc.call('POST', '/api/user', { token: tenant.token, body: { username: 'ada', roles: ['issuance:offer'] } });
  expect(user.status, user.text).toBe(201);
  const presentation = await svc.call('POST', '/api/verifier/config', {
    token: tenant.token,
    body: { id: 'pid-check', dcql_query: { credentials: [{ id: 'pid', format: 'dc+sd-jwt', claims: [{ path: ['given_name'] }] }] } },
  });
  expect(presentation.status, presentation.text).toBe(201);
  // A session whose credential waits for its claims: the attribute provider is never ready.
  provider = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(202, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  const registry = await svc.call('POST', '/api/issuer/attribute-providers', {
    token: tenant.token,
    body: {
      id: 'registry',
      name: 'Registry',
      url: `http://127.0.0.1:${(provider.address() as { port: number }).port}`,
      auth: { type: 'none' },
    },
  });
  expect(registry.status, registry.text).toBe(201);
  const deferred = await svc.call('POST', '/api/issuer/offer', {
    token: tenant.token,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: ['pid'],
      credentialClaims: { pid: { type: 'attributeProvider', attributeProviderId: 'registry' } },
    },
  });
  expect(deferred.status, deferred.text).toBe(201);
  expect((await receiveCredentials(deferred.body.uri)).response.credentialResponse.transaction_id).toEqual(expect.any(String));
  deferredSessionId = deferred.body.session;
  // A registrar, and schema metadata published there from the credential configuration.
  const account = { username: 'axe', password: 'registrar password', clientId: 'axe' };
  registrar = await startRegistrarFake(account);
  const linked = await svc.call('POST', '/api/registrar/config', {
    token: tenant.token,
    body: { registrarUrl: registrar.url, oidcUrl: registrar.oidcUrl, ...account },
  });
  expect(linked.status, linked.text).toBe(200);
  const published = await svc.call('POST', '/api/schema-metadata/publish', {
    token: tenant.token,
    body: { credentialConfigId: 'pid', config: { version: '1.0.0', attestationLoS: 'iso_18045_moderate', bindingType: 'key' } },
  });
  expect(published.status, published.text).toBe(201);
}, 120_000);
afterAll(async () => {
  await registrar?.stop();
  await stopConsole(svc, browser);
  await new Promise<void>((resolve) => (provider ? provider.close(() => resolve()) : resolve()));
});

const logIn = (page: Page, clientId: string, secret: string) => logInToConsole(page, svc.url, clientId, secret);

/** Goes to a route and waits for its heading and for its table or form to have loaded. */
async function visit(page: Page, route: string, heading: string, ready: string) {
  await page.goto(`${svc.url}/console#/${route}`);
  await page.getByRole('heading', { name: heading, level: 2 }).waitFor();
  await page.getByText(ready, { exact: true }).first().waitFor();
}

describe.skipIf(!browserAvailable)('web console accessibility (axe-core)', () => {
  for (const [width, viewport] of Object.entries(VIEWPORTS)) {
    // A walk through every main page with axe on each: slow on a shared machine (the limit is not a timing check).
    it(`has no serious or critical axe violation on its main pages at ${width} width`, async () => {
      const context = await browser.newContext({ viewport, bypassCSP: true });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      const findings: AxeFinding[] = [];
      try {
        await page.goto(`${svc.url}/console`);
        await page.getByLabel('Client id').waitFor();
        findings.push(...(await seriousViolations(page, 'login')));

        await logIn(page, 'root', svc.rootSecret);
        await visit(page, 'tenants', 'Tenants', 'axe');
        findings.push(...(await seriousViolations(page, 'tenants')));
        await page.getByRole('button', { name: 'Log out' }).click();

        await logIn(page, tenant.clientId, tenant.secret);
        const pages: [route: string, heading: string, ready: string][] = [
          ['offers', 'Issue a credential', 'Create offer'],
          ['sessions', 'Sessions', sessionId],
          [`sessions/${sessionId}`, `Session ${sessionId}`, 'issuance'],
          ['credential-configs', 'Credential configurations', 'pid'],
          ['key-chains', 'Key chains', 'default-attestation'],
          ['users', 'Users', 'ada'],
          ['audit', 'Audit log', 'When'],
          ['registrar', 'Registrar', 'Obtain an access certificate'],
          ['schema-metadata', 'Schema metadata', '1.0.0'],
          ['caches', 'Caches', 'Status lists this service signs'],
          ['conformance', 'HAIP 1.0 conformance', 'Not met'],
        ];
        for (const [route, heading, ready] of pages) {
          await visit(page, route, heading, ready);
          findings.push(...(await seriousViolations(page, route)));
        }
        // The states that open over or inside a page: a field the API refused, the one-time secret
        // dialog, the JSON view, a confirmation, a certificate chain unfolded, a filtered audit log.
        await visit(page, 'users', 'Users', 'ada');
        await page.getByLabel('User name').fill(`grace-${width}`);
        await page.getByLabel('Email').fill('not an address');
        await page.getByRole('button', { name: 'Create', exact: true }).click();
        await expect.poll(() => page.getByLabel('Email').getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
        findings.push(...(await seriousViolations(page, 'users: field refused')));
        await page.getByLabel('Email').fill(`grace-${width}@example.com`);
        await page.getByRole('button', { name: 'Create', exact: true }).click();
        await page.getByRole('dialog').waitFor();
        findings.push(...(await seriousViolations(page, 'users: one-time secret dialog')));
        await page.getByRole('dialog').getByRole('button', { name: 'Done' }).click();
        await page.getByRole('button', { name: 'Edit as JSON' }).click();
        await page.getByLabel('Body (JSON)').waitFor();
        findings.push(...(await seriousViolations(page, 'users: JSON view')));
        await visit(page, 'key-chains', 'Key chains', 'default-attestation');
        const attestation = page.getByRole('row').filter({ hasText: 'default-attestation' });
        await attestation.getByText(/2 certificates/).click();
        await attestation.getByRole('button', { name: 'Rotate' }).click();
        await page.getByRole('dialog', { name: 'Confirm' }).waitFor();
        findings.push(...(await seriousViolations(page, 'key-chains: confirmation, chain unfolded')));
        await page.getByRole('dialog', { name: 'Confirm' }).getByRole('button', { name: 'Cancel' }).click();
        await visit(page, 'audit', 'Audit log', 'When');
        await page.getByLabel('Object kind').selectOption('user');
        findings.push(...(await seriousViolations(page, 'audit: filtered')));

        // An offer made: its link and QR code, and the session it watches.
        await visit(page, 'offers', 'Issue a credential', 'Create offer');
        await page.getByRole('button', { name: 'Create offer' }).click();
        await page.getByTestId('offer-uri').or(page.getByRole('alert')).first().waitFor();
        expect(await page.getByRole('alert').allTextContents()).toEqual([]);
        findings.push(...(await seriousViolations(page, 'offer made')));
        // A refused transaction code on its field; an offer for the Digital Credentials API.
        await page.getByLabel('Transaction code', { exact: true }).fill('1'.repeat(65));
        await page.getByRole('button', { name: 'Create offer' }).click();
        await expect.poll(() => page.getByLabel('Transaction code', { exact: true }).getAttribute('aria-invalid')).toBe('true');
        findings.push(...(await seriousViolations(page, 'offer: field refused')));
        await page.getByRole('button', { name: 'Reset to template' }).click();
        await page.getByLabel('Delivery', { exact: true }).selectOption('dc-api');
        await page.getByRole('button', { name: 'Create offer' }).click();
        await page.getByTestId('dc-api-request').waitFor();
        findings.push(...(await seriousViolations(page, 'offer for the DC API')));

        // A presentation request, as a form and made.
        await visit(page, 'presentations', 'Request a presentation', 'Create request');
        findings.push(...(await seriousViolations(page, 'presentations')));
        await page.getByRole('button', { name: 'Create request' }).click();
        await page.getByTestId('request-uri').waitFor();
        findings.push(...(await seriousViolations(page, 'presentation request made')));

        // A deferred credential waiting for its claims, and the confirmation of its completion.
        await visit(page, `sessions/${deferredSessionId}`, `Session ${deferredSessionId}`, 'pending');
        findings.push(...(await seriousViolations(page, 'session with a deferred credential')));
        await page.getByRole('button', { name: 'Complete', exact: true }).click();
        await page.getByRole('dialog', { name: 'Confirm' }).waitFor();
        findings.push(...(await seriousViolations(page, 'deferred completion: confirmation')));
        await page.getByRole('dialog', { name: 'Confirm' }).getByRole('button', { name: 'Cancel' }).click();
      } finally {
        await context.close();
      }
      expect(findings).toEqual([]);
      expect(errors).toEqual([]);
    }, 240_000);
  }
});
