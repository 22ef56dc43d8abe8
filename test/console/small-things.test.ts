// The console's small things (issue 43), in a real browser: each test names the behaviour it keeps.
import 'reflect-metadata';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, DESKTOP, logInToConsole, PHONE, startConsole, stopConsole } from '../support/browser.js';
import type { TestService } from '../support/service.js';

let svc: TestService;
let browser: Browser;

beforeAll(async () => {
  if (!browserAvailable) return;
  ({ svc, browser } = await startConsole());
}, 120_000);
afterAll(() => stopConsole(svc, browser));

describe.skipIf(!browserAvailable)('web console: the small things', () => {
  it('loads without a failed request or a console error: the favicon is served, with a long cache', async () => {
    const page = await browser.newPage({ viewport: DESKTOP });
    const failures: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
    });
    page.on('requestfailed', (request) => failures.push(`failed ${request.url()}`));
    page.on('console', (message) => {
      if (message.type() === 'error') failures.push(`console: ${message.text()}`);
    });
    try {
      const tenant = await svc.tenant('favicon');
      await logInToConsole(page, svc.url, tenant.clientId, tenant.secret);
      expect(await page.locator('link[rel="icon"][href="/console/favicon.svg"]').count()).toBe(1);
      // Headless Chromium does not fetch icons itself: the page declares one, and it is there.
      const served = await fetch(`${svc.url}/console/favicon.svg`);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe('image/svg+xml');
      expect(served.headers.get('cache-control')).toMatch(/max-age=\d{6,}/);
      expect(served.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(await served.text()).toContain('<svg');
      expect(failures).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('keeps each audit action on one line, on a phone too: issuer_settings.updated is not broken at its underscore', async () => {
    const tenant = await svc.tenant('audit-actions');
    const updated = await svc.raw('PUT', '/api/issuer/config', { token: tenant.token, body: { display: [{ name: 'Issuer' }] } });
    expect(updated.status, updated.text).toBe(200);
    const page = await browser.newPage({ viewport: PHONE });
    try {
      await logInToConsole(page, svc.url, tenant.clientId, tenant.secret);
      await page.goto(`${svc.url}/console#/audit`);
      const action = page.getByRole('cell').locator('code', { hasText: 'issuer_settings.updated' });
      await action.waitFor();
      const lines = await action.evaluate((code) => ({
        boxes: code.getClientRects().length,
        whiteSpace: getComputedStyle(code).whiteSpace,
      }));
      expect(lines).toEqual({ boxes: 1, whiteSpace: 'nowrap' });
    } finally {
      await page.close();
    }
  }, 60_000);

  it("checks a section opened by its address against the client's roles, as the navigation does", async () => {
    const tenant = await svc.tenant('by-address');
    const created = await svc.call('POST', '/api/client', {
      token: tenant.token,
      body: { clientId: 'offers-only-ui', roles: ['issuance:offer'] },
    });
    expect(created.status, created.text).toBe(201);
    const page = await browser.newPage({ viewport: DESKTOP });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      await logInToConsole(page, svc.url, 'offers-only-ui', created.body.secret);
      await page.goto(`${svc.url}/console#/users`);
      await page.getByRole('heading', { name: 'Not allowed for your roles', level: 2 }).waitFor();
      expect(await page.getByRole('main').textContent()).toContain('users:manage');
      expect(await page.getByRole('navigation', { name: 'sections' }).getByRole('link', { name: 'Users' }).count()).toBe(0);
      // A section the roles open is shown as before.
      await page.goto(`${svc.url}/console#/offers`);
      await page.getByRole('heading', { name: 'Not allowed for your roles' }).waitFor({ state: 'detached' });
      expect(await page.getByRole('link', { name: 'Issue' }).getAttribute('aria-current')).toBe('page');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('offers Make default and Delete only on a key chain that is not the default', async () => {
    const tenant = await svc.tenant('key-chain-actions');
    const created = await svc.call('POST', '/api/key-chain', {
      token: tenant.token,
      body: { id: 'spare', usageType: 'attestation', type: 'internalChain' },
    });
    expect(created.status, created.text).toBe(201);
    const page = await browser.newPage({ viewport: DESKTOP });
    try {
      await logInToConsole(page, svc.url, tenant.clientId, tenant.secret);
      await page.goto(`${svc.url}/console#/key-chains`);
      await page.getByRole('cell', { name: 'spare', exact: true }).waitFor();
      const buttonsOf = (id: string) =>
        page
          .getByRole('row')
          .filter({ has: page.getByRole('cell', { name: id, exact: true }) })
          .getByRole('button')
          .allTextContents();
      expect(await buttonsOf('default-attestation')).not.toContain('Make default');
      expect(await buttonsOf('default-attestation')).not.toContain('Delete');
      expect(await buttonsOf('spare')).toEqual(expect.arrayContaining(['Edit', 'Rotate', 'Make default', 'Delete']));
    } finally {
      await page.close();
    }
  }, 60_000);

  it('explains, without an error, how to connect a registrar when the tenant has none', async () => {
    const tenant = await svc.tenant('no-registrar', ['registrar:manage', 'issuance:manage']);
    const page = await browser.newPage({ viewport: DESKTOP });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      await logInToConsole(page, svc.url, tenant.clientId, tenant.secret);
      await page.goto(`${svc.url}/console#/schema-metadata`);
      const explained = page.getByRole('region', { name: 'no registrar' });
      await explained.waitFor();
      expect(await explained.textContent()).toContain('POST /api/registrar/config');
      expect(await explained.getByRole('link', { name: 'Registrar' }).getAttribute('href')).toBe('#/registrar');
      // The catalog is there (empty), and nothing on the page is shown as an error.
      await page.getByRole('region', { name: "The registrar's catalog" }).waitFor();
      expect(await page.getByRole('alert').allTextContents()).toEqual([]);
      expect(await page.locator('.problem').count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);

  it("keeps every action of the key chains list within a phone's screen (375x667)", async () => {
    const tenant = await svc.tenant('key-chains-phone');
    const created = await svc.call('POST', '/api/key-chain', {
      token: tenant.token,
      body: { id: 'spare', usageType: 'attestation', type: 'internalChain' },
    });
    expect(created.status, created.text).toBe(201);
    const screen = { width: 375, height: 667 };
    const page = await browser.newPage({ viewport: screen });
    try {
      await logInToConsole(page, svc.url, tenant.clientId, tenant.secret);
      await page.goto(`${svc.url}/console#/key-chains`);
      await page.getByRole('cell', { name: 'spare', exact: true }).waitFor();
      const buttons = page.locator('td.actions-column button');
      expect(await buttons.count()).toBeGreaterThanOrEqual(4);
      // Where each button is, the table's box left unscrolled: sideways within the screen; downwards the page scrolls.
      const boxes = await buttons.evaluateAll((all) =>
        all.map((b) => {
          const box = b.getBoundingClientRect();
          return { label: b.getAttribute('aria-label'), left: box.left, right: box.right };
        }),
      );
      for (const box of boxes) {
        expect(box.left, `${box.label} starts on screen`).toBeGreaterThanOrEqual(0);
        expect(box.right, `${box.label} ends on screen`).toBeLessThanOrEqual(screen.width);
      }
    } finally {
      await page.close();
    }
  }, 60_000);

  it('creates from the same template twice: the second gets a fresh id (signer-2), not a 409', async () => {
    const tenant = await svc.tenant('fresh-ids');
    const page = await browser.newPage({ viewport: DESKTOP });
    try {
      await logInToConsole(page, svc.url, tenant.clientId, tenant.secret);
      await page.goto(`${svc.url}/console#/key-chains`);
      for (const id of ['signer', 'signer-2']) {
        await page.getByRole('button', { name: 'Create', exact: true }).click();
        await page.getByRole('cell', { name: id, exact: true }).waitFor();
        expect(await page.getByRole('alert').allTextContents()).toEqual([]);
      }
      const listed = await svc.call('GET', '/api/key-chain', { token: tenant.token });
      expect((listed.body as { id: string }[]).map((k) => k.id)).toEqual(expect.arrayContaining(['signer', 'signer-2']));
    } finally {
      await page.close();
    }
  }, 60_000);

  it('offers in the role pickers only the roles the signed-in tenant client may grant: its own', async () => {
    const tenant = await svc.tenant('granting');
    const granter = await svc.call('POST', '/api/client', {
      token: tenant.token,
      body: { clientId: 'granting-clients', roles: ['clients:manage', 'users:manage', 'issuance:offer'] },
    });
    expect(granter.status, granter.text).toBe(201);
    const page = await browser.newPage({ viewport: DESKTOP });
    const pickable = () => page.getByRole('group', { name: 'Roles', exact: true }).getByRole('checkbox');
    const labels = async () => await pickable().evaluateAll((boxes) => boxes.map((b) => b.parentElement?.textContent ?? ''));
    try {
      await logInToConsole(page, svc.url, 'granting-clients', granter.body.secret);
      await page.goto(`${svc.url}/console#/clients`);
      await pickable().first().waitFor();
      expect(await labels()).toEqual(['issuance:offer', 'clients:manage', 'users:manage']);
      await page.goto(`${svc.url}/console#/users`);
      await page.getByRole('heading', { name: 'Users', level: 2 }).waitFor();
      await pickable().first().waitFor();
      expect(await labels()).toEqual(['issuance:offer', 'clients:manage', 'users:manage']);
    } finally {
      await page.close();
    }
  }, 60_000);

  it("offers the service's own client every role: it may grant any", async () => {
    const page = await browser.newPage({ viewport: DESKTOP });
    try {
      await logInToConsole(page, svc.url, 'root', svc.rootSecret);
      await page.goto(`${svc.url}/console#/service-clients`);
      const pickable = page.getByRole('group', { name: 'Roles', exact: true }).getByRole('checkbox');
      await pickable.first().waitFor();
      expect(await pickable.count()).toBe(8);
    } finally {
      await page.close();
    }
  }, 60_000);
});
