// The console's home page and grouped navigation (issue 43), in a real browser at 1280 and 375 px:
// the tiles of a tenant that has things (counts checked against the API, a certificate expiring
// within 30 days highlighted, a failed webhook delivery linked to its session, the HAIP summary) and
// of an empty tenant (each empty part links to its next step); the navigation in groups, only those
// the roles open; the service's own home; an administrator in a tenant named in the header, and back.
import { webcrypto } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AxeFinding,
  browserAvailable,
  DESKTOP,
  logInToConsole,
  openPage,
  PHONE,
  screenshot,
  seriousViolations,
  startConsole,
  stopConsole,
} from '../support/browser.js';
import type { TestService } from '../support/service.js';
import { DAY_MS, testCertificate } from '../support/test-pki.js';
import { fetchedOffer, issuingTenant, type Receiver, startReceiver, webhookEndpoint } from '../webhooks/support.js';

// Webhook retries milliseconds apart and a one-second horizon: a delivery to a receiver answering
// 500 is failed within seconds.
const FAST_WEBHOOKS = { WEBHOOK_RETRY_DELAYS_MS: '50,100', WEBHOOK_POLL_INTERVAL_MS: '100', WEBHOOK_RETRY_HORIZON_SECONDS: '1' };
const POLL = { timeout: 10_000 };
const DCQL = {
  credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] }, claims: [{ path: ['given_name'] }] }],
};

let svc: TestService;
let browser: Browser;
let receiver: Receiver;
let full: { token: string; clientId: string; secret: string };
let failingSession: string;

beforeAll(async () => {
  if (!browserAvailable) return;
  ({ svc, browser } = await startConsole(FAST_WEBHOOKS));
  receiver = await startReceiver();
  receiver.answer = 500;
  full = await issuingTenant(svc, 'home-full');
  const { token } = full;
  const made = [
    await svc.call('POST', '/api/verifier/config', { token, body: { id: 'age', dcql_query: DCQL } }),
    await svc.call('POST', '/api/trust-list', {
      token,
      body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
    }),
    await importExpiringChain(token),
  ];
  for (const reply of made) expect(reply.status, reply.text).toBe(201);
  await webhookEndpoint(svc, token, 'crm', receiver.url);
  failingSession = await fetchedOffer(svc, token, 'home-full', 'crm');
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await stopConsole(svc, browser);
});

/** A key chain whose certificate expires in ten days: the key chains tile warns of it. */
async function importExpiringChain(token: string) {
  const leaf = await testCertificate('expiring-soon', { notAfter: new Date(Date.now() + 10 * DAY_MS) });
  const privateJwk = await webcrypto.subtle.exportKey('jwk', leaf.keys.privateKey);
  return svc.raw('POST', '/api/key-chain/import', {
    token,
    body: { id: 'expiring-soon', usageType: 'access', privateJwk, certificateChain: leaf.pem },
  });
}

/** A page logged in as `clientId` at the home page (the first view), collecting script errors. */
async function openHome(clientId: string, secret: string, viewport = DESKTOP) {
  const opened = await openPage(browser, { viewport, bypassCSP: true });
  const { page } = opened;
  await logInToConsole(page, svc.url, clientId, secret);
  await page.getByRole('heading', { name: 'Home', level: 2 }).waitFor();
  // Every tile has answered (or said why not).
  await expect.poll(() => page.locator('section[aria-busy="true"]').count(), POLL).toBe(0);
  return opened;
}

const tileOf = (page: Page, title: string) => page.getByRole('region', { name: title, exact: true });
const nav = (page: Page) => page.getByRole('navigation', { name: 'sections' });
/** The navigation's groups, each with the labels of its links. */
const groupsOf = (page: Page) =>
  nav(page)
    .getByRole('list')
    .evaluateAll((lists) =>
      lists.map((list) => ({
        group: list.getAttribute('aria-labelledby')
          ? document.getElementById(list.getAttribute('aria-labelledby') ?? '')?.textContent
          : null,
        links: [...list.querySelectorAll('a')].map((a) => a.textContent),
      })),
    );

describe.skipIf(!browserAvailable)('web console: home and grouped navigation', () => {
  it("shows a tenant's parts with their counts, the soonest certificate expiry highlighted and failed deliveries linked", async () => {
    const { token } = full;
    // The delivery to the receiver answering 500 fails within the one-second horizon.
    await expect.poll(async () => (await svc.call('GET', '/api/webhook-deliveries?state=failed', { token })).body.total, POLL).toBe(1);
    const { page, errors, close } = await openHome(full.clientId, full.secret);
    try {
      const count = async (path: '/api/issuer/credentials' | '/api/verifier/config' | '/api/key-chain' | '/api/trust-list') =>
        String((await svc.call('GET', path, { token })).body.length);
      expect(await tileOf(page, 'Credential configurations').locator('.tile-count').textContent()).toBe(
        await count('/api/issuer/credentials'),
      );
      expect(await tileOf(page, 'Presentation configurations').locator('.tile-count').textContent()).toBe(
        await count('/api/verifier/config'),
      );
      expect(await tileOf(page, 'Trust lists').locator('.tile-count').textContent()).toBe(await count('/api/trust-list'));
      const keys = tileOf(page, 'Key chains');
      expect(await keys.locator('.tile-count').textContent()).toBe(await count('/api/key-chain'));
      // The imported chain expires first, within 30 days: named and highlighted.
      const expiry = keys.locator('p.warning');
      expect(await expiry.textContent()).toMatch(/expiring-soon, .* \(in (9|10) days\)/);

      // The offer the wallet fetched is open; the delivery of its event failed, linked to its session.
      const open = await svc.call('GET', '/api/session?status=fetched', { token });
      expect(open.body.total).toBe(1);
      expect(await tileOf(page, 'Open sessions').locator('.tile-count').textContent()).toBe('1');
      const failed = tileOf(page, 'Failed webhook deliveries');
      expect(await failed.locator('.tile-count').textContent()).toBe('1');
      await failed.getByRole('link', { name: 'issuance.status to crm' }).click();
      await page.getByRole('heading', { name: `Session ${failingSession}`, level: 2 }).waitFor();
      await page.goBack();

      // The HAIP summary agrees with the conformance report.
      const report = await svc.call('GET', '/api/conformance?profile=haip-1.0', { token });
      const notMet = report.body.requirements.filter((r: { status: string }) => r.status === 'not-met').length;
      const met = report.body.requirements.filter((r: { status: string }) => r.status === 'met').length;
      const haip = tileOf(page, 'HAIP 1.0 conformance');
      await haip.getByText(`Not met: ${notMet}`).waitFor();
      expect(await haip.textContent()).toContain(`Met: ${met}`);
      await haip.getByRole('link', { name: 'See each requirement' }).click();
      await page.getByRole('heading', { name: 'HAIP 1.0 conformance', level: 2 }).waitFor();

      await page.goto(`${svc.url}/console#/home`);
      await expect.poll(() => page.locator('section[aria-busy="true"]').count(), POLL).toBe(0);
      expect(await seriousViolations(page, 'home-desktop')).toEqual([] as AxeFinding[]);
      await screenshot(page, 'home-desktop');
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 90_000);

  it('shows a refused or failed call as a short message in its tile, the other tiles as usual', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      // The service's answer replaced on the way: a problem for one call, no answer at all for another.
      await page.route('**/api/conformance?*', (route) =>
        route.fulfill({ status: 503, contentType: 'application/problem+json', body: JSON.stringify({ title: 'Service Unavailable' }) }),
      );
      await page.route('**/api/trust-list', (route) => route.abort());
      await logInToConsole(page, svc.url, full.clientId, full.secret);
      await page.getByRole('heading', { name: 'Home', level: 2 }).waitFor();
      await expect.poll(() => page.locator('section[aria-busy="true"]').count(), POLL).toBe(0);
      expect(await tileOf(page, 'HAIP 1.0 conformance').getByRole('status').textContent()).toBe('Could not load: 503 Service Unavailable');
      expect(await tileOf(page, 'Trust lists').getByRole('status').textContent()).toMatch(/^Could not load: /);
      expect(await tileOf(page, 'Credential configurations').locator('.tile-count').textContent()).toBe('1');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('links each empty part of a new tenant to its next step', async () => {
    const empty = await svc.tenant('home-empty');
    const { page, errors, close } = await openHome(empty.clientId, empty.secret);
    try {
      const steps: [tile: string, link: string, heading: string][] = [
        ['Credential configurations', 'create a credential configuration', 'Credential configurations'],
        ['Presentation configurations', 'create a presentation configuration', 'Presentation configurations'],
        ['Trust lists', 'create a trust list', 'Trust lists'],
      ];
      for (const [tile, link, heading] of steps) {
        const next = tileOf(page, tile).getByRole('link', { name: link });
        // After going back the home page loads its tiles again: the link is there once this one has.
        await next.waitFor();
        expect(await tileOf(page, tile).textContent()).toContain(`No ${tile.slice(0, -1).toLowerCase()} yet`);
        await next.click();
        await page.getByRole('heading', { name: heading, level: 2 }).waitFor();
        await page.goBack();
        await page.getByRole('heading', { name: 'Home', level: 2 }).waitFor();
      }
      // Nothing open: the next step is an offer.
      expect((await svc.call('GET', '/api/session', { token: empty.token })).body.total).toBe(0);
      const sessions = tileOf(page, 'Open sessions');
      expect(await sessions.locator('.tile-count').textContent()).toBe('0');
      expect(await sessions.getByRole('link', { name: 'issue a credential' }).getAttribute('href')).toBe('#/offers');
      expect(await tileOf(page, 'Failed webhook deliveries').locator('.tile-count').textContent()).toBe('0');
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it("groups the navigation, showing only the groups and tiles a restricted client's roles open", async () => {
    const admin = await svc.tenant('home-restricted');
    const cases: [roles: Parameters<TestService['client']>[2], groups: { group: string | null; links: string[] }[], tiles: string[]][] = [
      [
        ['issuance:offer', 'presentation:request'],
        [
          { group: null, links: ['Home'] },
          { group: 'Issue', links: ['Issue'] },
          { group: 'Verify', links: ['Verify'] },
          { group: 'Administration', links: ['Sessions'] },
        ],
        ['Open sessions'],
      ],
      [
        ['presentation:manage'],
        [
          { group: null, links: ['Home'] },
          { group: 'Issue', links: ['Schema metadata'] },
          { group: 'Verify', links: ['Presentation configurations'] },
          { group: 'Trust', links: ['Trust lists', 'Conformance'] },
          { group: 'Keys', links: ['Key chains'] },
          { group: 'Administration', links: ['Sessions', 'Session retention', 'Caches', 'Audit log'] },
        ],
        ['Presentation configurations', 'Key chains', 'Trust lists', 'Open sessions', 'Failed webhook deliveries', 'HAIP 1.0 conformance'],
      ],
    ];
    for (const [index, [roles, groups, tiles]] of cases.entries()) {
      const clientId = `home-restricted-${index}`;
      const made = await svc.call('POST', '/api/client', { token: admin.token, body: { clientId, roles } });
      expect(made.status, made.text).toBe(201);
      const { page, errors, close } = await openHome(clientId, made.body.secret);
      try {
        expect(await groupsOf(page)).toEqual(groups);
        expect(await page.getByRole('main').getByRole('heading', { level: 3 }).allTextContents()).toEqual(tiles);
        expect(errors).toEqual([]);
      } finally {
        await close();
      }
    }
  }, 60_000);

  it('fits a phone: the home page in one column, the grouped navigation behind the Menu button', async () => {
    const { page, errors, close } = await openHome(full.clientId, full.secret, PHONE);
    try {
      expect(await nav(page).isVisible()).toBe(false);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      expect(await seriousViolations(page, 'home-phone')).toEqual([] as AxeFinding[]);
      await screenshot(page, 'home-phone');
      await page.getByRole('button', { name: 'Menu' }).click();
      await nav(page).waitFor();
      expect((await groupsOf(page)).map((g) => g.group)).toEqual([null, 'Issue', 'Verify', 'Trust', 'Keys', 'Administration']);
      await screenshot(page, 'nav-phone-open');
      await nav(page).getByRole('link', { name: 'Key chains', exact: true }).click();
      await page.getByRole('heading', { name: 'Key chains', level: 2 }).waitFor();
      expect(await nav(page).isVisible()).toBe(false);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it("shows the service's own home, and an administrator in a tenant goes back to the service without logging in", async () => {
    await svc.tenant('home-opened');
    const { page, errors, close } = await openHome('root', svc.rootSecret);
    try {
      const root = await svc.rootToken();
      const tenants = (await svc.call('GET', '/api/tenant', { token: root })).body;
      const active = tenants.filter((t: { status: string }) => t.status === 'active').length;
      const tile = tileOf(page, 'Tenants');
      expect(await tile.locator('.tile-count').textContent()).toBe(String(tenants.length));
      expect(await tile.textContent()).toContain(`Active: ${active} · Not active: ${tenants.length - active}`);
      expect(await tileOf(page, 'Service clients').textContent()).toContain('client of the service');
      const [newest] = (await svc.call('GET', '/api/admin/audit-logs?limit=1', { token: root })).body;
      expect(await tileOf(page, 'Recent audit').getByRole('listitem').first().textContent()).toContain(newest?.actionType);
      expect(await groupsOf(page)).toEqual([
        { group: null, links: ['Home'] },
        { group: 'Administration', links: ['Tenants', 'Clients', 'Audit log'] },
      ]);

      await nav(page).getByRole('link', { name: 'Tenants', exact: true }).click();
      await page.getByRole('button', { name: 'Open tenant home-opened' }).click();
      const banner = page.getByRole('banner');
      await expect.poll(() => banner.textContent(), POLL).toContain('admin root in tenant home-opened');
      // The tenant's token names the administrator acting in it.
      const acting = await page.evaluate(async () => {
        const { token } = JSON.parse(sessionStorage.getItem('svc-console-session') as string);
        return (await fetch('/api/whoami', { headers: { authorization: `Bearer ${token}` } })).json();
      });
      expect(acting).toMatchObject({ clientId: 'root', tenantId: 'home-opened', actingAdminId: 'root' });

      await banner.getByRole('button', { name: 'Back to service' }).click();
      await page.getByRole('heading', { name: 'Tenants', level: 2 }).waitFor();
      await expect.poll(() => banner.textContent(), POLL).toContain('root · service');
      expect(await banner.getByRole('button', { name: 'Back to service' }).count()).toBe(0);
      expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual(['svc-console-session']);
      // Out again and back in the tenant; a log out there forgets the administrator's session too.
      await page.getByRole('button', { name: 'Open tenant home-opened' }).click();
      await banner.getByRole('button', { name: 'Back to service' }).waitFor();
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByLabel('Client id').waitFor();
      expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);
});
