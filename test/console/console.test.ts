// The web console in a real browser. An administrator's day, at desktop and at phone width: the
// service client creates a tenant (its admin's secret shown once, in a dialog with a copy button),
// the tenant's admin makes a key chain and a credential configuration from the console's templates,
// an offer whose QR code a wallet redeems while the page watches the session complete, revokes the
// credential after a confirmation and sees it revoked, answers a presentation request and reads its
// claims, adds a user and a client and rotates that client's secret. Then: every template the
// console offers is accepted as it stands; the navigation shows only what the roles open; a reload
// keeps the session (sessionStorage, never localStorage). Screenshots go to artifacts/console/.
import { inflateSync } from 'node:zlib';
import { decodeJwt, exportJWK, generateKeyPair } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserAvailable,
  DESKTOP,
  expectNoSidewaysScroll,
  logInToConsole,
  openPage,
  PHONE,
  screenshot,
  startConsole,
  stopConsole,
} from '../support/browser.js';
import { ADMIN_CLIENT, startOpenIdProvider } from '../support/oidc-provider.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { freePort, startService, type TestService } from '../support/service.js';
import { holderKey, receiveCredentials } from '../support/wallet.js';

let svc: TestService;
let browser: Browser;

beforeAll(async () => {
  if (!browserAvailable) return;
  ({ svc, browser } = await startConsole());
}, 120_000);
afterAll(() => stopConsole(svc, browser));

/** A page in a fresh browser context (its own sessionStorage, as a new tab), which may use the clipboard. */
const newPage = (viewport = DESKTOP) => openPage(browser, { viewport, permissions: ['clipboard-read', 'clipboard-write'] });

const logIn = (page: Page, clientId: string, secret: string) => logInToConsole(page, svc.url, clientId, secret);

/** Opens a section from the navigation (unfolding it first where it is folded) and waits for its heading. */
async function open(page: Page, link: string, heading = link) {
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) {
    expect(await page.getByRole('navigation', { name: 'sections' }).isVisible()).toBe(false);
    await menu.click();
  }
  await page.getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { name: heading, level: 2 }).waitFor();
  await expectNoSidewaysScroll(page);
}

/** The JSON view of the body, one click from the form. */
async function showJson(page: Page) {
  const toggle = page.getByRole('button', { name: 'Edit as JSON' });
  if (await toggle.isVisible()) await toggle.click();
  await page.getByLabel('Body (JSON)').waitFor();
}

async function submitJson(page: Page, body: unknown, button: 'Create' | 'Save' = 'Create') {
  await showJson(page);
  await page.getByLabel('Body (JSON)').fill(JSON.stringify(body, null, 2));
  await page.getByRole('button', { name: button, exact: true }).click();
}

/** Creates from the template as the page offers it, and waits for the notice. */
async function createFromTemplate(page: Page) {
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByRole('status').filter({ hasText: 'Created' }).or(page.getByRole('alert')).first().waitFor();
  expect(await page.getByRole('alert').allTextContents()).toEqual([]);
}

/** The secret of the one-time dialog: copied with its button (read back from the clipboard), then the dialog closed. */
async function takeSecret(page: Page, shotName?: string) {
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  expect(await dialog.textContent()).toContain('Shown once');
  const secret = (await dialog.getByTestId('one-time-secret').textContent()) as string;
  await dialog.getByRole('button', { name: 'Copy' }).click();
  await dialog.getByText('Copied').waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
  if (shotName) await screenshot(page, shotName);
  await dialog.getByRole('button', { name: 'Done' }).click();
  await dialog.waitFor({ state: 'hidden' });
  return secret;
}

/** Answers the confirmation dialog: `action` (the destructive button) or Cancel. */
async function answer(page: Page, choice: string) {
  const dialog = page.getByRole('dialog', { name: 'Confirm' });
  await dialog.waitFor();
  await dialog.getByRole('button', { name: choice, exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
}

/** The claims the configuration template makes mandatory, typed into the offer's claim fields. */
async function typeNames(page: Page) {
  const claims = page.getByRole('group', { name: 'Claims of pid' });
  await claims.getByLabel('Given name', { exact: true }).fill('Erika');
  await claims.getByLabel('Family name', { exact: true }).fill('Mustermann');
}

async function administratorsDay(viewport: { width: number; height: number }, suffix: string) {
  const { page, errors, close } = await newPage(viewport);
  const tenantId = `day-${suffix}`;

  // The service client: a tenant, its admin's secret shown once.
  await logIn(page, 'root', svc.rootSecret);
  await page.getByRole('heading', { name: 'Home', level: 2 }).waitFor();
  await open(page, 'Tenants');
  await showJson(page);
  const template = JSON.parse(await page.getByLabel('Body (JSON)').inputValue());
  await submitJson(page, { ...template, id: tenantId, name: `Day ${suffix}` });
  const adminSecret = await takeSecret(page, `tenant-secret-${suffix}`);
  await page.getByRole('cell', { name: `Day ${suffix}` }).waitFor();
  await screenshot(page, `tenants-${suffix}`);
  await page.getByRole('button', { name: 'Log out' }).click();

  // The tenant's admin: a key chain and a credential configuration, from the templates.
  await logIn(page, `${tenantId}-admin`, adminSecret);
  await open(page, 'Key chains');
  await createFromTemplate(page);
  await page.getByRole('cell', { name: 'signer', exact: true }).waitFor();
  await screenshot(page, `key-chains-${suffix}`);
  await open(page, 'Credential configurations');
  await createFromTemplate(page);
  await page.getByRole('cell', { name: 'pid', exact: true }).waitFor();

  // An offer: its QR code, then a wallet redeems it and the status turns completed on the page.
  await open(page, 'Issue', 'Issue a credential');
  await typeNames(page);
  await page.getByRole('button', { name: 'Create offer' }).click();
  const offerUri = (await page.getByTestId('offer-uri').textContent()) as string;
  expect(offerUri).toMatch(/^openid-credential-offer:\/\//);
  await page.locator('.qr svg').waitFor();
  await screenshot(page, `offer-${suffix}`);
  const key = await holderKey();
  const { response } = await receiveCredentials(offerUri, { keys: [key] });
  const credential = (response.credentialResponse.credentials as { credential: string }[])[0]?.credential as string;
  await page.locator('.status', { hasText: 'completed' }).waitFor({ timeout: 10_000 });

  // The session: its credential valid; revoking asks first (Cancel changes nothing), then it shows revoked.
  await page.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).click();
  const issued = page.getByRole('region', { name: 'issued credentials' });
  await issued.getByRole('cell', { name: 'valid', exact: true }).waitFor();
  // Only the actions that change something: a valid credential is not offered Reinstate.
  expect(await issued.getByRole('button', { name: 'Reinstate pid' }).count()).toBe(0);
  await issued.getByRole('button', { name: 'Revoke pid' }).click();
  await answer(page, 'Cancel');
  expect(await issued.getByRole('cell', { name: 'valid', exact: true }).count()).toBe(1);
  await issued.getByRole('button', { name: 'Revoke pid' }).click();
  await answer(page, 'Revoke');
  await issued.getByRole('cell', { name: 'revoked', exact: true }).waitFor();
  await page.getByRole('status').filter({ hasText: 'Revoked: 1 credential of pid' }).waitFor();
  // Revoked: final, so no action is offered any more (neither Revoke nor Suspend nor Reinstate).
  await expect.poll(() => issued.getByRole('button').count()).toBe(0);
  await expectNoSidewaysScroll(page);
  await screenshot(page, `session-revoked-${suffix}`);
  const { status } = decodeJwt(credential.split('~')[0] as string) as { status: { status_list: { idx: number; uri: string } } };
  const token = await (await fetch(status.status_list.uri)).text();
  const { bits, lst } = (decodeJwt(token) as { status_list: { bits: number; lst: string } }).status_list;
  const bytes = inflateSync(Buffer.from(lst, 'base64url'));
  const idx = status.status_list.idx;
  expect(((bytes[Math.floor((idx * bits) / 8)] as number) >> ((idx * bits) % 8)) & ((1 << bits) - 1)).toBe(1);

  // Verification, from the templates: a trust list of the tenant's own keys, a presentation
  // configuration, a request answered by a wallet holding a second (valid) credential.
  await open(page, 'Trust lists');
  await createFromTemplate(page);
  await open(page, 'Presentation configurations');
  await createFromTemplate(page);
  await page.getByRole('cell', { name: 'pid-check', exact: true }).waitFor();
  await open(page, 'Issue', 'Issue a credential');
  await typeNames(page);
  await page.getByRole('button', { name: 'Create offer' }).click();
  const second = await receiveCredentials((await page.getByTestId('offer-uri').textContent()) as string, { keys: [key] });
  const valid = (second.response.credentialResponse.credentials as { credential: string }[])[0]?.credential as string;
  await open(page, 'Verify', 'Request a presentation');
  await page.getByRole('button', { name: 'Create request' }).click();
  const requestUri = (await page.getByTestId('request-uri').textContent()) as string;
  const resolved = await resolveRequest(requestUri);
  const presented = await presentSdJwt(valid, key.privateJwk, resolved, ['given_name', 'family_name']);
  expect((await submit(resolved, { pid: [presented] })).status).toBe(200);
  await page.getByTestId('verified-claims').waitFor({ timeout: 10_000 });
  expect(await page.getByTestId('verified-claims').textContent()).toContain('Mustermann');
  await screenshot(page, `presentation-${suffix}`);
  // The presentation's session issued nothing: no revoke there.
  await page
    .getByRole('link', { name: /^[0-9a-f-]{36}$/ })
    .first()
    .click();
  await page.getByRole('region', { name: 'verified claims' }).waitFor();
  expect(await page.getByRole('button', { name: /Revoke/ }).count()).toBe(0);

  // People and clients: a user's temporary password and a client's secret are shown once; rotating
  // the secret asks first and shows the new one.
  await open(page, 'Users');
  await createFromTemplate(page);
  await takeSecret(page);
  await page.getByRole('cell', { name: 'operator', exact: true }).waitFor();
  await open(page, 'Clients');
  await createFromTemplate(page);
  const first = await takeSecret(page);
  await page.getByRole('button', { name: `Rotate secret ${tenantId}-offers` }).click();
  await answer(page, 'Rotate secret');
  const rotated = await takeSecret(page, `rotated-secret-${suffix}`);
  expect(rotated).not.toBe(first);
  await svc.token(`${tenantId}-offers`, rotated);

  await open(page, 'Sessions');
  await page.locator('tbody tr').first().waitFor();
  expect(await page.locator('tbody tr').count()).toBeGreaterThanOrEqual(3);
  await screenshot(page, `sessions-${suffix}`);
  expect(errors).toEqual([]);
  await close();
}

describe.skipIf(!browserAvailable)('web console', () => {
  it("walks an administrator's day at desktop width", () => administratorsDay(DESKTOP, 'desktop'), 120_000);

  it("walks an administrator's day at phone width (375 px): the navigation folds behind Menu, nothing scrolls the page sideways", async () => {
    await administratorsDay(PHONE, 'phone');
    // By keyboard: the Menu button opens the navigation, Tab reaches its links, Enter follows one.
    const { page, close } = await newPage(PHONE);
    await logIn(page, 'root', svc.rootSecret);
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.focus();
    await page.keyboard.press('Enter');
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    // Menu, then Log out, then Home, then the sections of the groups.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Home');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Tenants');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Clients', level: 2 }).waitFor();
    expect(await page.getByRole('navigation', { name: 'sections' }).isVisible()).toBe(false);
    // The clients table is wider than the screen: it scrolls inside its own box.
    const wrap = page.locator('.table-wrap').first();
    expect(await wrap.evaluate((el) => getComputedStyle(el).overflowX)).toBe('auto');
    await expectNoSidewaysScroll(page);
    await screenshot(page, 'phone-clients');
    await close();
  }, 120_000);

  it('accepts every template it offers as it stands', async () => {
    const { page, errors, close } = await newPage();
    await logIn(page, 'root', svc.rootSecret);
    await open(page, 'Tenants');
    await createFromTemplate(page);
    const secret = await takeSecret(page);
    await open(page, 'Clients');
    await createFromTemplate(page);
    await takeSecret(page);
    await page.getByRole('button', { name: 'Log out' }).click();

    await logIn(page, 'acme-admin', secret);
    for (const section of [
      'Key chains',
      'Credential configurations',
      'Presentation configurations',
      'Trust lists',
      'Status lists',
      'Attribute providers',
      'Webhook endpoints',
    ]) {
      await open(page, section);
      await createFromTemplate(page);
    }
    await open(page, 'Key chains');
    await page.getByLabel('Kind').selectOption({ label: 'Import a key' });
    await expect.poll(() => page.getByLabel('Private key (JWK)').inputValue(), { timeout: 10_000 }).toContain('"d"');
    await createFromTemplate(page);
    await page.getByRole('cell', { name: 'imported', exact: true }).waitFor();
    await open(page, 'Users');
    await createFromTemplate(page);
    await takeSecret(page);
    await open(page, 'Clients');
    await createFromTemplate(page);
    await takeSecret(page);
    for (const section of ['Issuer settings', 'Status list settings', 'Session retention', 'Trust settings']) {
      await open(page, section);
      // The settings open as a form; their JSON is one click away.
      await page.getByRole('button', { name: 'Edit as JSON' }).click();
      await expect.poll(() => page.getByLabel('Settings (JSON)').inputValue(), { timeout: 10_000 }).toMatch(/^\{/);
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
      expect(await page.getByRole('alert').count(), section).toBe(0);
    }
    await open(page, 'Issue', 'Issue a credential');
    await typeNames(page);
    await page.getByRole('button', { name: 'Create offer' }).click();
    await page.getByTestId('offer-uri').waitFor();
    await open(page, 'Verify', 'Request a presentation');
    await page.getByRole('button', { name: 'Create request' }).click();
    await page.getByTestId('request-uri').waitFor();
    expect(errors).toEqual([]);
    await close();
  }, 120_000);

  it('edits the main resources in forms checked against the API, shows its field errors on the field, JSON one click away', async () => {
    const tenant = await svc.tenant('forms-ui');
    const { page, errors, close } = await newPage();
    await logIn(page, tenant.clientId, tenant.secret);
    await open(page, 'Users');
    await page.getByLabel('User name').fill('ada');
    await page.getByLabel('Email').fill('not an address');
    const roles = page.getByRole('group', { name: 'Roles' });
    await roles.getByLabel('issuance:offer').uncheck();
    await roles.getByLabel('presentation:request').check();
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    // The API's refusal of body.email lands on the Email field.
    const email = page.getByLabel('Email');
    await expect.poll(() => email.getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
    const note = page.locator(`#${await email.getAttribute('aria-describedby')}`);
    expect(await note.textContent()).toMatch(/email/i);
    await screenshot(page, 'form-field-error');
    // The same body as JSON, one click away; and back.
    await showJson(page);
    expect(JSON.parse(await page.getByLabel('Body (JSON)').inputValue())).toMatchObject({
      username: 'ada',
      email: 'not an address',
      roles: ['presentation:request'],
    });
    await page.getByRole('button', { name: 'Edit as form' }).click();
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Created' }).waitFor();
    await takeSecret(page);
    const users = await svc.call('GET', '/api/user', { token: tenant.token });
    expect(users.body.find((u: { username: string }) => u.username === 'ada')).toMatchObject({
      email: 'ada@example.com',
      roles: ['presentation:request'],
    });

    // A change, through the form of the change: the key chain's description.
    await open(page, 'Key chains');
    await page.getByRole('button', { name: 'Edit default-attestation' }).click();
    await page.getByLabel('Description').fill('signs the PID');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Saved default-attestation' }).waitFor();
    expect((await svc.call('GET', '/api/key-chain/default-attestation', { token: tenant.token })).body.description).toBe('signs the PID');

    // A nested value as JSON inside the form: kept as typed while it does not parse, written to the body once it does.
    await open(page, 'Trust lists');
    const entities = page.getByLabel('Entities');
    await entities.fill('[{"type": "internal",');
    await page.getByText(/^Not JSON/).waitFor();
    expect(await entities.inputValue()).toBe('[{"type": "internal",');
    await entities.fill('[{"type": "internal", "keyChainId": "default-attestation"}]');
    expect(await page.getByText(/^Not JSON/).count()).toBe(0);
    await showJson(page);
    expect(JSON.parse(await page.getByLabel('Body (JSON)').inputValue()).entities).toEqual([
      { type: 'internal', keyChainId: 'default-attestation' },
    ]);
    expect(errors).toEqual([]);
    await close();
  }, 60_000);

  it('shows only the sections and actions the roles of the signed-in client open', async () => {
    const admin = await svc.tenant('roles');
    const offerer = await svc.call('POST', '/api/client', {
      token: admin.token,
      body: { clientId: 'roles-offers', roles: ['issuance:offer'] },
    });
    const { page, close } = await newPage();
    await logIn(page, 'roles-offers', offerer.body.secret);
    const nav = page.getByRole('navigation', { name: 'sections' });
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Home', 'Issue', 'Sessions']);
    // A section it may not open, by its address: said so, as the navigation leaves it out.
    await page.goto(`${svc.url}/console#/users`);
    await page.getByRole('heading', { name: 'Not allowed for your roles', level: 2 }).waitFor();
    // Its sessions, but not the actions of issuance:manage on them: no credential status, no revoke, no delete.
    await svc.call('POST', '/api/issuer/credentials', {
      token: admin.token,
      body: { id: 'pid', config: { format: 'dc+sd-jwt' }, vct: 'urn:eudi:pid:1', statusManagement: true, fields: [] },
    });
    const offer = await svc.call('POST', '/api/issuer/offer', {
      token: await svc.token('roles-offers', offerer.body.secret),
      body: { response_type: 'uri', flow: 'pre_authorized_code', credentialConfigurationIds: ['pid'] },
    });
    expect(offer.status, offer.text).toBe(201);
    await page.goto(`${svc.url}/console#/sessions/${offer.body.session}`);
    await page.locator('dl.facts dd', { hasText: 'issuance' }).waitFor();
    expect(await page.getByRole('region', { name: 'issued credentials' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /Revoke|Suspend|Delete/ }).count()).toBe(0);
    await page.getByRole('button', { name: 'Log out' }).click();

    await logIn(page, admin.clientId, admin.secret);
    const all = await nav.getByRole('link').allTextContents();
    expect(all).toEqual(expect.arrayContaining(['Issue', 'Verify', 'Users', 'Clients', 'Key chains', 'Audit log']));
    expect(all).not.toContain('Tenants');
    await page.getByRole('button', { name: 'Log out' }).click();
    await logIn(page, 'root', svc.rootSecret);
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Home', 'Tenants', 'Clients', 'Audit log']);
    await close();
  }, 60_000);

  it('edits fields in a form beside the JSON, checks DCQL as it is typed, reads certificate chains and imports keys', async () => {
    const page = await browser.newPage({ viewport: DESKTOP });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    const tenant = await svc.tenant('forms');
    await logIn(page, tenant.clientId, tenant.secret);

    // Fields: the form and the JSON edit the same body; the API's refusal lands on the field's row.
    await open(page, 'Credential configurations');
    await showJson(page);
    const json = page.getByLabel('Body (JSON)');
    const body = async () => JSON.parse(await json.inputValue());
    await page.getByRole('button', { name: 'Add field' }).click();
    const added = page.getByRole('group', { name: 'Field 5' });
    await added.getByLabel('Path').fill('address.street');
    await added.getByLabel('Path').press('Tab');
    await added.getByLabel('Mandatory').check();
    await added.getByLabel('Display name').fill('Street');
    await added.getByLabel('Display name').press('Tab');
    expect((await body()).fields[4]).toEqual({
      path: ['address', 'street'],
      type: 'string',
      mandatory: true,
      display: [{ name: 'Street' }],
    });
    await page.getByRole('group', { name: 'Field 3' }).getByLabel('Type').selectOption('integer');
    await page.getByRole('group', { name: 'Field 3' }).getByLabel('Default value').fill('"soon"');
    await page.getByRole('group', { name: 'Field 3' }).getByLabel('Default value').press('Tab');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const rowError = page.getByRole('group', { name: 'Field 3' }).locator('.field-error');
    await rowError.first().waitFor();
    expect(await rowError.first().textContent()).toContain('fields.2');
    await screenshot(page, 'fields-form');
    await page.getByRole('button', { name: 'Remove field 3' }).click();
    expect((await body()).fields.map((f: { path: string[] }) => f.path.join('.'))).toEqual([
      'given_name',
      'family_name',
      'nationalities',
      'address.street',
    ]);
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('cell', { name: 'pid', exact: true }).waitFor();
    const stored = await svc.call('GET', '/api/issuer/credentials/pid', { token: tenant.token });
    expect(stored.body.fields[3]).toMatchObject({ path: ['address', 'street'], mandatory: true, display: [{ name: 'Street' }] });

    // DCQL: checked while typed, before anything is sent.
    await open(page, 'Presentation configurations');
    await showJson(page);
    await page.getByTestId('dcql-check').filter({ hasText: 'DCQL query valid: 1 credential' }).waitFor();
    const draft = await body();
    draft.dcql_query.credentials[0].format = 'pdf';
    await json.fill(JSON.stringify(draft));
    expect(await page.getByTestId('dcql-check').textContent()).toContain('DCQL query invalid');
    draft.dcql_query.credentials[0].format = 'dc+sd-jwt';
    draft.dcql_query.credential_sets = [{ options: [['nobody']] }];
    await json.fill(JSON.stringify(draft));
    expect(await page.getByTestId('dcql-check').textContent()).toContain("undefined credential id 'nobody'");

    // Key chains: each certificate of a chain read out; a key imported through the import variant.
    await open(page, 'Key chains');
    const attestation = page.getByRole('row').filter({ hasText: 'default-attestation' });
    await attestation.getByText(/2 certificates/).click();
    const chain = attestation.locator('.chain li');
    expect(await chain.count()).toBe(2);
    expect(await chain.nth(0).textContent()).toMatch(/CN=.*issued by CN=/);
    expect(await chain.nth(1).textContent()).toContain('(self-signed)');
    await screenshot(page, 'key-chains');
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    await page.getByLabel('Kind').selectOption({ label: 'Import a key' });
    await showJson(page);
    await expect.poll(() => json.inputValue(), { timeout: 10_000 }).toContain('privateJwk');
    await json.fill(JSON.stringify({ id: 'imported', usageType: 'access', privateJwk: await exportJWK(privateKey) }));
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('cell', { name: 'imported', exact: true }).waitFor();
    expect((await svc.call('GET', '/api/key-chain/imported', { token: tenant.token })).body.default).toBe(false);
    await page.getByRole('row').filter({ hasText: 'imported' }).getByRole('button', { name: 'Make default' }).click();
    await page.getByRole('status').filter({ hasText: 'Make default' }).waitFor();
    expect((await svc.call('GET', '/api/key-chain/imported', { token: tenant.token })).body.default).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('keeps the session across a reload in sessionStorage (this tab only, never localStorage), until logout or expiry', async () => {
    const { page, close } = await newPage();
    await logIn(page, 'root', svc.rootSecret);
    const storage = () =>
      page.evaluate(() => ({ local: { ...localStorage }, session: Object.keys(sessionStorage), cookies: document.cookie }));
    expect(await storage()).toEqual({ local: {}, session: ['svc-console-session'], cookies: '' });
    await page.reload();
    await page.getByRole('heading', { name: 'Home', level: 2 }).waitFor();
    expect(await page.locator('header').textContent()).toContain('root');

    // Another tab starts at the login.
    const other = await page.context().newPage();
    await other.goto(`${svc.url}/console`);
    await other.getByLabel('Client id').waitFor();

    // A stored token past its expiry is not used.
    await page.evaluate(() => {
      const stored = JSON.parse(sessionStorage.getItem('svc-console-session') as string);
      sessionStorage.setItem('svc-console-session', JSON.stringify({ ...stored, expiresAt: Date.now() - 1000 }));
    });
    await page.reload();
    await page.getByLabel('Client id').waitFor();
    expect((await storage()).session).toEqual([]);

    // Logging out forgets it.
    await logIn(page, 'root', svc.rootSecret);
    await page.getByRole('button', { name: 'Log out' }).click();
    expect((await storage()).session).toEqual([]);
    await page.reload();
    await page.getByLabel('Client id').waitFor();
    await close();
  });

  it('answers with a strict Content-Security-Policy', async () => {
    const reply = await fetch(`${svc.url}/console`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(reply.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect((await fetch(`${svc.url}/console/secrets.json`)).status).toBe(404);
  });
});

describe.skipIf(!browserAvailable)('web console in external mode', () => {
  it("logs in through the identity provider's authorization code flow with PKCE, and the token works", async () => {
    const port = await freePort();
    const op = await startOpenIdProvider({
      clients: [],
      ui: {
        clientId: 'svc-ui',
        redirectUri: `http://127.0.0.1:${port}/console`,
        users: [{ id: 'alice', tenantId: 'acme', roles: ['issuance:manage'] }],
      },
    });
    const external = await startService({
      PORT: String(port),
      OIDC: op.issuer,
      OIDC_CLIENT_ID: ADMIN_CLIENT.clientId,
      OIDC_CLIENT_SECRET: ADMIN_CLIENT.secret,
    });
    const page = await browser.newPage();
    try {
      await page.goto(`${external.url}/console`);
      await page.getByRole('button', { name: 'Log in with the identity provider' }).click();
      // The provider's own (development) login and consent pages.
      await page.locator('input[name="login"]').fill('alice');
      await page.locator('input[name="password"]').fill('any');
      await page.locator('button[type="submit"]').click();
      await page.locator('button[type="submit"]').click();
      await page.getByRole('button', { name: 'Log out' }).waitFor();
      expect(await page.locator('header').textContent()).toContain('tenant acme');
      expect(new URL(page.url()).search).toBe('');
      await open(page, 'Credential configurations');
      await page.getByText('Nothing here yet.').waitFor();
      const stored = await page.evaluate(() => ({ local: { ...localStorage }, session: Object.keys(sessionStorage) }));
      expect(stored).toEqual({ local: {}, session: ['svc-console-session'] });
      await screenshot(page, 'external-login');
    } finally {
      await page.close();
      await external.stop();
      await op.stop();
    }
  }, 60_000);
});
