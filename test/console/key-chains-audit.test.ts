// The console, in a real browser: a key chain's certificate chain (PEM) and its CA's CRL (DER) as
// files.
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import * as x509 from '@peculiar/x509';
import { build } from 'esbuild';
import { exportJWK, generateKeyPair } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../scripts/build.mjs';
import { browserAvailable, launchBrowser } from '../support/browser.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let browser: Browser;

beforeAll(async () => {
  if (!browserAvailable) return;
  await buildConsole(build);
  svc = await startService();
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

async function logIn(page: Page, clientId: string, secret: string) {
  await page.goto(`${svc.url}/console`);
  await page.getByLabel('Client id').fill(clientId);
  await page.getByLabel('Client secret').fill(secret);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
}

/** Clicks `trigger` and returns the file the browser saved: its suggested name and its bytes. */
async function downloaded(page: Page, trigger: () => Promise<void>) {
  const [download] = await Promise.all([page.waitForEvent('download'), trigger()]);
  return { name: download.suggestedFilename(), bytes: readFileSync(await download.path()) };
}

describe.skipIf(!browserAvailable)('web console: key chain downloads', () => {
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
});
