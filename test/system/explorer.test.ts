// The API explorer in a real browser: the page loads under the service's Content-Security-Policy,
// shows the operations of the OpenAPI document, takes the root client's id and secret through
// "Authorize" (client credentials at /api/oauth2/token) and runs an operation with the token. Its
// static folder serves Swagger UI's files and nothing else (checked without a browser too).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, launchBrowser } from '../support/browser.js';
import { ROOT_ID, startService, type TestService } from '../support/service.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startService();
});
afterAll(() => svc.stop());

describe.skipIf(!browserAvailable)('API explorer in a browser', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('authorizes with client credentials and runs an operation', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    // Swagger UI's own deprecation notices (it reads the deep link's `_` as a space) are not problems.
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Deprecated:')) problems.push(message.text());
    });
    page.on('pageerror', (err) => problems.push(err.message));
    try {
      // Opened at an operation (deep link): Swagger UI renders the tags near the view as it scrolls.
      await page.goto(`${svc.url}/api#/tenants/get_api_tenant`);
      await page.getByRole('heading', { name: 'svc management API' }).waitFor();

      await page.getByRole('button', { name: 'Authorize' }).first().click();
      const dialog = page.locator('.auth-container').filter({ hasText: 'clientCredentials' });
      await dialog.locator('input[type=text]').first().fill(ROOT_ID);
      await dialog.locator('input[type=password]').fill(svc.rootSecret);
      const tokenIssued = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/oauth2/token');
      await dialog.locator('button.authorize').click();
      expect((await tokenIssued).status()).toBe(200);
      // Authorized: the section offers to log out instead.
      await page.locator('.auth-container button', { hasText: 'Logout' }).waitFor();
      await page.locator('button.close-modal').click();

      // The operation the deep link opened.
      const listTenants = page.locator('#operations-tenants-get_api_tenant');
      // Swagger UI renders a tag's operations once the tag is in view: the deep link scrolled there
      // before the Authorize dialog, which Chromium 156 does not always keep; scroll as a person would.
      await page.locator('#operations-tag-tenants').scrollIntoViewIfNeeded();
      await listTenants.waitFor();
      await listTenants.getByRole('button', { name: 'Try it out' }).click();
      const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/tenant');
      await listTenants.getByRole('button', { name: 'Execute' }).click();
      const response = await answered;
      expect(response.status()).toBe(200);
      expect(response.request().headers().authorization).toMatch(/^Bearer /);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);
});

describe('API explorer files', () => {
  it('serves only Swagger UI files from its static folder', async () => {
    const css = await svc.raw('GET', '/api/static/swagger-ui.css');
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toContain('text/css');
    for (const path of ['/api/static/package.json', '/api/static/..%2f..%2fpackage.json', '/api/static/index.js']) {
      const reply = await svc.raw('GET', path);
      expect(reply.status).toBe(404);
      expect(reply.headers.get('content-type')).toContain('application/problem+json');
    }
  });
});
