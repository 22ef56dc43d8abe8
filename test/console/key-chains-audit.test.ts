// The console, in a real browser: a key chain's certificate chain (PEM) and its CA's CRL (DER) as
// files, and the audit log filtered by the kind of object, the action, who acted and the object's
// name, each entry naming the object it changed and showing what it changed.
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import * as x509 from '@peculiar/x509';
import { exportJWK, generateKeyPair } from 'jose';
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

const logIn = (page: Page, clientId: string, secret: string) => logInToConsole(page, svc.url, clientId, secret);

/** Clicks `trigger` and returns the file the browser saved: its suggested name and its bytes. */
async function downloaded(page: Page, trigger: () => Promise<void>) {
  const [download] = await Promise.all([page.waitForEvent('download'), trigger()]);
  return { name: download.suggestedFilename(), bytes: readFileSync(await download.path()) };
}

describe.skipIf(!browserAvailable)('web console: key chain downloads and the audit log', () => {
  it("downloads a key chain's certificate chain as PEM and its CA's CRL; an imported key has no CRL", async () => {
    const tenant = await svc.tenant('downloads');
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const imported = await svc.call('POST', '/api/key-chain/import', {
      token: tenant.token,
      body: { id: 'imported', usageType: 'access', privateJwk: await exportJWK(privateKey) },
    });
    expect(imported.status, imported.text).toBe(201);
    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      await logIn(page, tenant.clientId, tenant.secret);
      await page.goto(`${svc.url}/console#/key-chains`);
      await page.getByRole('cell', { name: 'default-attestation', exact: true }).waitFor();

      // The chain: the same PEM the API serves, leaf then root, the root signing the leaf.
      const pem = await downloaded(page, () =>
        page.getByRole('button', { name: 'Download certificate chain of default-attestation' }).click(),
      );
      expect(pem.name).toBe('default-attestation.pem');
      const served = await fetch(`${svc.url}/api/key-chain/default-attestation/certificate`, {
        headers: { authorization: `Bearer ${tenant.token}` },
      });
      expect(pem.bytes.toString('utf8')).toBe(await served.text());
      const [leaf, root] = (pem.bytes.toString('utf8').match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? []).map(
        (block) => new x509.X509Certificate(block),
      );
      expect(await (leaf as x509.X509Certificate).verify({ publicKey: root as x509.X509Certificate, signatureOnly: true })).toBe(true);

      // The CRL: DER, signed by that root.
      const crl = await downloaded(page, () => page.getByRole('link', { name: 'Download CRL of default-attestation' }).click());
      expect(crl.name).toBe('default-attestation.crl');
      const list = new x509.X509Crl(new Uint8Array(crl.bytes));
      expect(list.issuer).toBe((root as x509.X509Certificate).subject);
      expect(await list.verify({ publicKey: await (root as x509.X509Certificate).publicKey.export() })).toBe(true);

      // An imported key: its certificate, but no CA of the service's and so no CRL.
      const importedRow = page.getByRole('row').filter({ hasText: 'imported' });
      await importedRow.getByRole('button', { name: 'Download certificate chain of imported' }).waitFor();
      expect(await importedRow.getByRole('link', { name: /CRL/ }).count()).toBe(0);

      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('filters the audit log by object kind, action, actor and object name, and names the object each entry changed', async () => {
    const tenant = await svc.tenant('audit-ui');
    const other = await svc.tenant('audit-ui-other');
    for (const username of ['ada', 'grace']) {
      const user = await svc.call('POST', '/api/user', { token: tenant.token, body: { username, roles: ['issuance:offer'] } });
      expect(user.status, user.text).toBe(201);
    }
    const patched = await svc.call('PATCH', '/api/key-chain/default-attestation', {
      token: tenant.token,
      body: { description: 'signs the PID' },
    });
    expect(patched.status, patched.text).toBe(200);
    await svc.call('POST', '/api/user', { token: other.token, body: { username: 'mallory', roles: ['issuance:offer'] } });

    const page = await browser.newPage({ viewport: DESKTOP });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      await logIn(page, tenant.clientId, tenant.secret);
      await page.goto(`${svc.url}/console#/audit`);
      await page.getByRole('heading', { name: 'Audit log', level: 2 }).waitFor();
      const objects = page.getByTestId('audit-object');
      await objects.first().waitFor();
      const shown = async () => (await objects.allTextContents()).map((t) => t.split(' · ')[0]);
      // Another tenant's entries are not there.
      expect(await shown()).not.toContain('user mallory');

      await page.getByLabel('Object kind').selectOption('user');
      expect((await shown()).sort()).toEqual(['user ada', 'user grace']);
      await page.getByLabel('Object name contains').fill('GRA');
      expect(await shown()).toEqual(['user grace']);
      expect(await page.getByRole('row').filter({ hasText: 'user grace' }).getByRole('cell').nth(1).textContent()).toBe('user.created');
      await page.getByRole('button', { name: 'Clear filters' }).click();

      // The update of the key chain: its name and the field it changed.
      await page.getByLabel('Action').selectOption('key_chain.updated');
      expect(await shown()).toEqual(['key_chain default-attestation']);
      const keyChainRow = page.getByRole('row').filter({ hasText: 'key_chain default-attestation' });
      expect(await keyChainRow.textContent()).toContain('description');
      // What it changed, before and after.
      await keyChainRow.locator('summary').click();
      expect(await keyChainRow.locator('dd').textContent()).toBe('"default attestation key" → "signs the PID"');
      await page.getByRole('button', { name: 'Clear filters' }).click();

      // By who acted: the tenant's admin client did these three; the service client made the tenant and its key chains.
      expect(await objects.count()).toBeGreaterThan(3);
      await page.getByLabel('By').selectOption(tenant.clientId);
      expect((await shown()).sort()).toEqual(['key_chain default-attestation', 'user ada', 'user grace']);
      await page.getByLabel('Object name contains').fill('no such object');
      await page.getByText('No entry matches the filters.').waitFor();
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);
});
