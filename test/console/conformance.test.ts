// The console's HAIP 1.0 conformance screen in a real browser: the report of the tenant's live
// configuration, not-met rows first with the configuration that fails by id, a filter to those rows,
// the count changing after a fix made through the API; and the screen shown only to a client
// holding issuance:manage or presentation:manage.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, DESKTOP, logInToConsole, startConsole, stopConsole } from '../support/browser.js';
import type { TestService } from '../support/service.js';

let svc: TestService;
let browser: Browser;

beforeAll(async () => {
  if (!browserAvailable) return;
  ({ svc, browser } = await startConsole());
}, 120_000);
afterAll(() => stopConsole(svc, browser));

async function open(clientId: string, secret: string, route: string) {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await logInToConsole(page, svc.url, clientId, secret);
  await page.goto(`${svc.url}/console#/${route}`);
  return { page, errors, close: () => context.close() };
}

const navLinks = (page: Page) => page.getByRole('navigation', { name: 'sections' }).getByRole('link').allTextContents();
const rows = (page: Page) => page.getByRole('region', { name: 'conformance requirements' }).locator('tbody tr');

describe.skipIf(!browserAvailable)('web console: conformance', () => {
  it('shows the report, what fails by id first, filters to it, and follows a fix', async () => {
    const tenant = await svc.tenant('console-haip', ['presentation:manage', 'issuance:manage']);
    const created = await svc.raw('POST', '/api/issuer/credentials', {
      token: tenant.token,
      body: {
        id: 'unlimited-badge',
        config: { format: 'dc+sd-jwt' },
        vct: 'urn:example:badge',
        fields: [],
        lifeTime: null,
        statusManagement: false,
      },
    });
    expect(created.status, created.text).toBe(201);
    const report = (await svc.raw('GET', '/api/conformance?profile=haip-1.0', { token: tenant.token })).body.requirements as {
      status: string;
    }[];
    const notMet = report.filter((r) => r.status === 'not-met').length;

    const { page, errors, close } = await open(tenant.clientId, tenant.secret, 'conformance');
    try {
      await page.getByRole('heading', { name: 'HAIP 1.0 conformance', level: 2 }).waitFor();
      const summary = page.getByRole('region', { name: 'conformance summary' }).getByRole('status');
      await expect.poll(() => summary.textContent()).toContain(`Not met: ${notMet}`);
      expect(await rows(page).count()).toBe(report.length);
      await expect.poll(() => rows(page).first().textContent()).toContain('Not met');
      const validityRow = rows(page).filter({ hasText: 'validity is limited carries exp' });
      expect(await validityRow.textContent()).toContain("'unlimited-badge': neither lifeTime (exp) nor statusManagement");

      await page.getByLabel('Only requirements not met').check();
      await expect.poll(() => rows(page).count()).toBe(notMet);
      for (const text of await rows(page).allTextContents()) expect(text).toContain('Not met');

      const patched = await svc.raw('PATCH', '/api/issuer/credentials/unlimited-badge', {
        token: tenant.token,
        body: { lifeTime: 86400 },
      });
      expect(patched.status, patched.text).toBe(200);
      await page.getByRole('button', { name: 'Refresh' }).click();
      // The filter shows not-met rows only: the validity requirement has left them, the configuration's other failures stay.
      await expect.poll(() => rows(page).count()).toBe(notMet - 1);
      expect(await rows(page).filter({ hasText: 'validity is limited carries exp' }).count()).toBe(0);
      expect(await rows(page).filter({ hasText: "'unlimited-badge'" }).count()).toBeGreaterThan(0);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it('shows the screen only to issuance:manage or presentation:manage', async () => {
    const cases: [roles: Parameters<TestService['tenant']>[1], shown: boolean][] = [
      [['issuance:offer', 'presentation:request', 'clients:manage', 'users:manage'], false],
      [['issuance:manage'], true],
      [['presentation:manage'], true],
    ];
    for (const [index, [roles, shown]] of cases.entries()) {
      const tenant = await svc.tenant(`console-haip-gate-${index}`, roles);
      const { page, close } = await open(tenant.clientId, tenant.secret, 'audit');
      try {
        await page.getByRole('heading', { level: 2 }).first().waitFor();
        expect((await navLinks(page)).includes('Conformance'), `${roles}`).toBe(shown);
      } finally {
        await close();
      }
    }
  }, 60_000);
});
