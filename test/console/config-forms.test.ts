// Forms generated from the configuration (issue 43): credential configurations and the tenant's
// settings edited as typed fields in a real browser, each change checked through the API, and a
// credential issued from a configuration made in the form received by a real wallet.
import 'reflect-metadata';
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
  visit as visitConsole,
} from '../support/browser.js';
import type { TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

let svc: TestService;
let browser: Browser;

beforeAll(async () => {
  if (!browserAvailable) return;
  ({ svc, browser } = await startConsole());
}, 120_000);
afterAll(() => stopConsole(svc, browser));

const VIEWPORTS = { desktop: DESKTOP, phone: PHONE };

async function newPage(viewport: typeof DESKTOP, tenantName: string) {
  const tenant = await svc.tenant(tenantName);
  // bypassCSP: axe-core is injected as a script.
  const opened = await openPage(browser, { viewport, bypassCSP: true });
  await logInToConsole(opened.page, svc.url, tenant.clientId, tenant.secret);
  return { tenant, ...opened };
}

const visit = (page: Page, route: string, heading: string) => visitConsole(page, svc.url, route, heading);

/** The names of the claims an SD-JWT carries as disclosures (selectively disclosable), and its payload. */
function sdJwtParts(credential: string) {
  const [jwt = '', ...disclosures] = credential.split('~').filter(Boolean);
  const payload = JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString());
  const disclosed = disclosures.map((d) => (JSON.parse(Buffer.from(d, 'base64url').toString()) as unknown[])[1]);
  return { payload, disclosed };
}

const field = (page: Page, n: number) => page.getByRole('group', { name: `Field ${n}`, exact: true });

describe.skipIf(!browserAvailable)('web console: forms from the configuration', () => {
  for (const [width, viewport] of Object.entries(VIEWPORTS)) {
    it(`creates an SD-JWT VC configuration in the form (display, claims, key chain) that a wallet receives as configured, at ${width} width`, async () => {
      const { tenant, page, errors, close } = await newPage(viewport, `cc-form-${width}`);
      const findings: AxeFinding[] = [];
      const id = `member-${width}`;
      try {
        await visit(page, 'credential-configs', 'Credential configurations');
        await expect.poll(() => page.getByLabel('Id', { exact: true }).inputValue(), { timeout: 10_000 }).toBe('pid');
        // The PID template: each claim selectively disclosable, as wallets expect.
        for (const n of [1, 2, 3, 4]) expect(await field(page, n).getByLabel('Disclosable').isChecked()).toBe(true);
        await page.getByLabel('Id', { exact: true }).fill(id);
        await page.getByLabel('Type (vct)').fill('urn:example:member');
        await page.getByLabel('Signing key chain').selectOption('default-attestation');
        await page.locator('#field-description').fill('membership card');
        const display = page.getByRole('group', { name: 'Display 1', exact: true });
        await display.getByLabel('Name').fill('Membership card');
        await display.getByLabel('Background colour').fill('#12107c');
        await page.getByLabel('Lifetime (seconds)').fill('86400');
        // Replace the template's four claims by two.
        for (let i = 0; i < 4; i++) await page.getByRole('button', { name: 'Remove field 1' }).click();
        await page.getByRole('button', { name: 'Add field' }).click();
        await page.getByRole('button', { name: 'Add field' }).click();
        await field(page, 1).getByLabel('Path').fill('tier');
        await field(page, 1).getByLabel('Disclosable').uncheck();
        await field(page, 2).getByLabel('Path').fill('member_id');
        await field(page, 2).getByLabel('Mandatory').check();
        await field(page, 2).getByLabel('Display name').fill('Member number');
        // Reordered: member_id first.
        await page.getByRole('button', { name: 'Move field 2 up' }).click();
        expect(await field(page, 1).getByLabel('Path').inputValue()).toBe('member_id');
        findings.push(...(await seriousViolations(page, `credential config form (${width})`)));
        await screenshot(page, `credential-config-form-${width}`);
        await page.getByRole('button', { name: 'Create', exact: true }).click();
        await page.getByRole('status').filter({ hasText: 'Created' }).waitFor();

        const stored = await svc.call('GET', `/api/issuer/credentials/${id}`, { token: tenant.token });
        expect(stored.status).toBe(200);
        expect(stored.body).toMatchObject({
          vct: 'urn:example:member',
          description: 'membership card',
          keyChainId: 'default-attestation',
          lifeTime: 86400,
          config: { format: 'dc+sd-jwt', display: [{ name: 'Membership card', locale: 'en', background_color: '#12107c' }] },
        });
        expect(stored.body.fields).toEqual([
          { path: ['member_id'], type: 'string', mandatory: true, display: [{ name: 'Member number' }] },
          { path: ['tier'], type: 'string', disclosable: false },
        ]);

        // A wallet receives it: member_id a disclosure, tier (and iss, vct) plain in the payload.
        const { credential } = await issueCredential(svc, tenant.token, id, { member_id: 'M-1', tier: 'gold' });
        const { payload, disclosed } = sdJwtParts(credential);
        expect(disclosed).toEqual(['member_id']);
        expect(payload).toMatchObject({ tier: 'gold', vct: 'urn:example:member' });
        expect(payload.iss).toEqual(expect.any(String));
        expect(payload.member_id).toBeUndefined();

        // Edit: a key added in the JSON view that the form does not show survives a form edit.
        await page.getByRole('button', { name: `Edit ${id}` }).click();
        await page.getByRole('button', { name: 'Edit as JSON' }).click();
        const json = page.getByLabel('Body (JSON)');
        const body = JSON.parse(await json.inputValue());
        const typeMetadata = { name: 'Membership', description: 'a member of the club' };
        await json.fill(
          JSON.stringify({ ...body, vct: typeMetadata, embeddedDisclosurePolicy: { policy: 'none', note: 'kept' } }, null, 2),
        );
        await page.getByRole('button', { name: 'Edit as form' }).click();
        // The type metadata document shows as JSON in the form, not as an empty text box.
        expect(JSON.parse(await page.getByLabel('Type (vct)').inputValue())).toEqual(typeMetadata);
        await page.getByLabel('Lifetime (seconds)').fill('3600');
        await page.getByRole('button', { name: 'Save', exact: true }).click();
        await page
          .getByRole('status')
          .filter({ hasText: `Saved ${id}` })
          .waitFor();
        const edited = await svc.call('GET', `/api/issuer/credentials/${id}`, { token: tenant.token });
        expect(edited.body).toMatchObject({
          lifeTime: 3600,
          vct: typeMetadata,
          embeddedDisclosurePolicy: { policy: 'none', note: 'kept' },
        });
        expect(edited.body.fields).toEqual(stored.body.fields);
        expect(findings).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await close();
      }
    }, 120_000);
  }

  it('shows only the mdoc fields for an mso_mdoc configuration, and the mdoc PID template is created as it stands', async () => {
    const { tenant, page, errors, close } = await newPage(DESKTOP, 'cc-form-mdoc');
    try {
      await visit(page, 'credential-configs', 'Credential configurations');
      await page.getByLabel('Id', { exact: true }).waitFor();
      await page.getByLabel('Kind').selectOption({ label: 'PID (mso_mdoc)' });
      await expect.poll(() => page.getByLabel('Id', { exact: true }).inputValue(), { timeout: 10_000 }).toBe('pid-mdoc');
      await page.getByLabel('Document type (docType)').waitFor();
      expect(await page.getByLabel('Type (vct)').count()).toBe(0);
      expect(await page.getByLabel('Trust format').count()).toBe(0);
      expect(await page.getByLabel('Disclosable').count()).toBe(0);
      expect(await field(page, 1).getByLabel('Namespace').inputValue()).toBe('eu.europa.ec.eudi.pid.1');
      const findings = await seriousViolations(page, 'mdoc credential config form');
      // Back to SD-JWT VC: the SD-JWT fields return, the docType goes.
      await page.getByLabel('Format', { exact: true }).selectOption('dc+sd-jwt');
      await page.getByLabel('Type (vct)').waitFor();
      expect(await page.getByLabel('Document type (docType)').count()).toBe(0);
      await page.getByLabel('Format', { exact: true }).selectOption('mso_mdoc');
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Created' }).waitFor();
      const stored = await svc.call('GET', '/api/issuer/credentials/pid-mdoc', { token: tenant.token });
      expect(stored.body.config).toMatchObject({ format: 'mso_mdoc', docType: 'eu.europa.ec.eudi.pid.1' });
      expect(stored.body.fields.map((f) => f.namespace)).toEqual(Array(4).fill('eu.europa.ec.eudi.pid.1'));
      expect(findings).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);

  for (const [width, viewport] of Object.entries(VIEWPORTS)) {
    it(`edits the issuer, session, status list and trust settings as forms, a 400 on the field it names, at ${width} width`, async () => {
      const { tenant, page, errors, close } = await newPage(viewport, `settings-form-${width}`);
      const findings: AxeFinding[] = [];
      // svc.raw: one helper for the four settings resources (svc.call types each path on its own).
      const get = async (path: string) => (await svc.raw('GET', path, { token: tenant.token })).body;
      const save = () => page.getByRole('button', { name: 'Save', exact: true }).click();
      const saved = () => page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
      try {
        // Issuer settings.
        await visit(page, 'issuer-settings', 'Issuer settings');
        await expect.poll(() => page.getByLabel('Batch size').inputValue(), { timeout: 10_000 }).toBe('10');
        expect(await page.getByLabel('Conformance profile').inputValue()).toBe('none');
        await page.getByLabel('Batch size').fill('3');
        await page.getByRole('button', { name: 'Add display' }).click();
        const display = page.getByRole('group', { name: 'Display 1', exact: true });
        await display.getByLabel('Name').fill('Acme');
        await display.getByLabel('Logo URI').fill('not a url');
        await save();
        // The API's refusal lands on the row's field, naming it.
        const logo = display.getByLabel('Logo URI');
        await expect.poll(() => logo.getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
        const note = page.locator(`#${await logo.getAttribute('aria-describedby')}`);
        expect(await note.textContent()).toContain('display.0.logo.uri');
        findings.push(...(await seriousViolations(page, `issuer settings: field refused (${width})`)));
        await logo.fill('https://acme.example/logo.png');
        await save();
        await saved();
        if (width === 'desktop') await screenshot(page, 'settings-form');
        const issuer = await get('/api/issuer/config');
        expect(issuer).toMatchObject({
          batchSize: 3,
          display: [{ name: 'Acme', locale: 'en', logo: { uri: 'https://acme.example/logo.png' } }],
        });

        // Session retention: the global default shown as such, set, and back.
        await visit(page, 'session-config', 'Session retention');
        const mode = page.getByLabel('Clean-up mode');
        await mode.waitFor();
        expect(await mode.inputValue()).toBe('');
        expect(await mode.locator('option:checked').textContent()).toBe('use the global default');
        expect(await page.getByLabel('Retention (seconds)').getAttribute('placeholder')).toBe('use the global default');
        findings.push(...(await seriousViolations(page, `session retention (${width})`)));
        await mode.selectOption('anonymize');
        await page.getByLabel('Retention (seconds)').fill('3600');
        await save();
        await saved();
        expect(await get('/api/session-config')).toMatchObject({
          ttlSeconds: 3600,
          cleanupMode: 'anonymize',
          usesGlobalDefault: { ttlSeconds: false, cleanupMode: false },
        });
        await mode.selectOption({ label: 'use the global default' });
        await save();
        await saved();
        expect(await get('/api/session-config')).toMatchObject({
          ttlSeconds: 3600,
          usesGlobalDefault: { ttlSeconds: false, cleanupMode: true },
        });
        await page.getByRole('button', { name: 'Reset to defaults' }).click();
        await page.getByRole('dialog', { name: 'Confirm' }).getByRole('button', { name: 'Reset' }).click();
        await page.getByRole('status').filter({ hasText: 'Reset to the defaults' }).waitFor();
        expect((await get('/api/session-config')).usesGlobalDefault).toEqual({ ttlSeconds: true, cleanupMode: true });

        // Status list settings.
        await visit(page, 'status-list-config', 'Status list settings');
        await expect.poll(() => page.getByLabel('Bits per entry').inputValue(), { timeout: 10_000 }).not.toBe('');
        findings.push(...(await seriousViolations(page, `status list settings (${width})`)));
        await page.getByLabel('Bits per entry').selectOption('2');
        await save();
        await saved();
        expect((await get('/api/status-list-config')).bits).toBe(2);

        // Trust settings (federation).
        await visit(page, 'trust-config', 'Trust settings');
        await page.getByLabel('Trust mode').waitFor();
        await page.getByLabel('Federation role').selectOption('leaf');
        await page.getByLabel('Trust mode').selectOption('federation-only');
        await page.getByRole('button', { name: 'Add trust anchor' }).click();
        await page
          .getByRole('group', { name: 'Trust anchor 1', exact: true })
          .getByLabel('Entity id')
          .fill('https://federation.example.eu');
        findings.push(...(await seriousViolations(page, `trust settings (${width})`)));
        await save();
        await saved();
        expect((await get('/api/trust-config')).federation).toMatchObject({
          role: 'leaf',
          mode: 'federation-only',
          trustAnchors: [{ entityId: 'https://federation.example.eu' }],
        });
        // The issuer settings kept what the trust settings do not touch.
        expect((await get('/api/issuer/config')).batchSize).toBe(3);
        expect(findings).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await close();
      }
    }, 120_000);
  }
});
