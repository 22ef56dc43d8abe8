// Debian's Chromium driven by playwright-core (installed by .ci/run). Without a browser on the
// machine the browser tests are skipped with a message, except where REQUIRE_BROWSER is set (CI),
// where its absence fails them.
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const browserAvailable = existsSync(CHROMIUM) || process.env.REQUIRE_BROWSER === '1';

if (!existsSync(CHROMIUM)) {
  process.stderr.write(`browser tests: no Chromium at ${CHROMIUM} (apt-get install chromium)${browserAvailable ? '' : '; skipped'}\n`);
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
