// Debian's Chromium driven by playwright-core (installed by .ci/run). Without a browser on the
// machine the browser tests are skipped with a message, except where REQUIRE_BROWSER is set (CI),
// where its absence fails them.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AxeResults } from 'axe-core';
import { build } from 'esbuild';
import { type Browser, type BrowserContextOptions, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { buildConsole } from '../../scripts/build.mjs';
import { startService, type TestService } from './service.js';

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

/** The console built, a service started and a browser launched: what every browser test file needs. */
export async function startConsole(options?: Parameters<typeof startService>[0]): Promise<{ svc: TestService; browser: Browser }> {
  await buildConsole(build);
  const svc = await startService(options);
  return { svc, browser: await launchBrowser() };
}

/** Closes what startConsole opened; either may be missing when the browser tests were skipped. */
export async function stopConsole(svc: TestService | undefined, browser: Browser | undefined) {
  await browser?.close();
  await svc?.stop();
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeFinding {
  page: string;
  rule: string;
  impact: string | null | undefined;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core on what the page shows now and returns the violations of impact serious or critical.
 * The console's policy (script-src 'self') refuses axe as an inline script, so the page must come
 * from a context opened with bypassCSP.
 */
export async function seriousViolations(page: Page, name: string): Promise<AxeFinding[]> {
  await page.addScriptTag({ content: AXE_SOURCE });
  const results = (await page.evaluate(() => (window as unknown as { axe: { run(): Promise<unknown> } }).axe.run())) as AxeResults;
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ page: name, rule: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
}

/** A page in a context of its own (its own sessionStorage), with the page's uncaught errors collected. */
export async function openPage(browser: Browser, options: BrowserContextOptions) {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  return { page, errors, close: () => context.close() };
}

/** Goes to a console address (`#/{address}`) and waits for its page heading. */
export async function visit(page: Page, serviceUrl: string, address: string, heading: string | RegExp) {
  await page.goto(`${serviceUrl}/console#/${address}`);
  await page.getByRole('heading', { name: heading, level: 2 }).waitFor();
}

/**
 * Nothing makes the page wider than the screen: a wide table scrolls inside its own box. Polled: the
 * page is measured once it has settled (a CI run on PostgreSQL once caught a page 406 px wide at the
 * instant its heading appeared, which no run could show again), and a lasting overflow still fails.
 */
export async function expectNoSidewaysScroll(page: Page) {
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  await expect.poll(overflow, { message: 'page wider than the screen (px)', timeout: 5_000 }).toBeLessThanOrEqual(0);
}
