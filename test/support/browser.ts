// Debian's Chromium driven by playwright-core (installed by .ci/run). Without a browser on the
// machine the browser tests are skipped with a message, except where REQUIRE_BROWSER is set (CI),
// where its absence fails them.
import { existsSync, mkdirSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const browserAvailable = existsSync(CHROMIUM) || process.env.REQUIRE_BROWSER === '1';

if (!existsSync(CHROMIUM)) {
  process.stderr.write(`browser tests: no Chromium at ${CHROMIUM} (apt-get install chromium)${browserAvailable ? '' : '; skipped'}\n`);
}

/** The widths the console is tested at: a desktop and a phone. */
export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 375, height: 740 };

const ARTIFACTS = new URL('../../artifacts/console/', import.meta.url).pathname;

/** Saves a full-page screenshot under artifacts/console/ (CI keeps them). */
export function screenshot(page: Page, name: string) {
  mkdirSync(ARTIFACTS, { recursive: true });
  return page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // Background services of Chromium try to reach Google's hosts, which this network refuses.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Logs in to the console at `serviceUrl` with a client's id and secret, and waits until it is in. */
export async function logInToConsole(page: Page, serviceUrl: string, clientId: string, secret: string) {
  await page.goto(`${serviceUrl}/console`);
  await page.getByLabel('Client id').fill(clientId);
  await page.getByLabel('Client secret').fill(secret);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
}
