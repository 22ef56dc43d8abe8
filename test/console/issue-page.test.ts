// The Issue and Verify pages as an operator uses them (issue 43), in a real browser at 1280 and 375 px:
// the claims of an offer typed field by field from the credential configuration (a string, a date, a
// number, a nested object, an array of rows, a default value), in sync with the JSON; the result
// card scrolled into view with the focus on its heading; the URI copied to the clipboard; a real
// wallet receiving the credential with the values as typed; the card turning "used" (QR code gone),
// and "expired" when the offer's lifetime has passed. Screenshots go to artifacts/console/.
import { createHash } from 'node:crypto';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
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
import { receiveCredentials } from '../support/wallet.js';

let svc: TestService;
let browser: Browser;
let admin: Awaited<ReturnType<TestService['tenant']>>;

/** A configuration with a field of each kind the form types: string, date, number, object, array, a default. */
const LICENCE = {
  id: 'licence',
  config: { format: 'dc+sd-jwt' },
  vct: 'urn:example:licence:1',
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true, display: [{ name: 'Given name', locale: 'en' }] },
    { path: ['birthdate'], type: 'date', mandatory: true, display: [{ name: 'Birth date', locale: 'en' }] },
    { path: ['height'], type: 'number', display: [{ name: 'Height (m)', locale: 'en' }] },
    {
      path: ['address'],
      type: 'object',
      display: [{ name: 'Address', locale: 'en' }],
      children: [
        { path: ['street'], type: 'string', display: [{ name: 'Street', locale: 'en' }] },
        { path: ['locality'], type: 'string', display: [{ name: 'Locality', locale: 'en' }] },
      ],
    },
    {
      path: ['nationalities'],
      type: 'array',
      display: [{ name: 'Nationalities', locale: 'en' }],
      children: [{ path: [null], type: 'string', display: [{ name: 'Nationality', locale: 'en' }] }],
    },
    { path: ['organ_donor'], type: 'boolean', mandatory: true, display: [{ name: 'Organ donor', locale: 'en' }] },
    { path: ['issuing_country'], type: 'string', defaultValue: 'DE', display: [{ name: 'Issuing country', locale: 'en' }] },
  ],
} as const;

beforeAll(async () => {
  if (!browserAvailable) return;
  ({ svc, browser } = await startConsole());
  admin = await svc.tenant('issue-page');
  const made = [
    await svc.call('POST', '/api/issuer/credentials', { token: admin.token, body: structuredClone(LICENCE) as never }),
    await svc.call('POST', '/api/verifier/config', {
      token: admin.token,
      body: {
        id: 'licence-check',
        dcql_query: {
          credentials: [
            { id: 'licence', format: 'dc+sd-jwt', meta: { vct_values: ['urn:example:licence:1'] }, claims: [{ path: ['given_name'] }] },
          ],
        },
      },
    }),
  ];
  for (const reply of made) expect(reply.status, reply.text).toBe(201);
}, 120_000);
afterAll(() => stopConsole(svc, browser));

/** A page allowed the clipboard, and axe (bypassCSP). */
const newPage = (viewport: { width: number; height: number }) =>
  openPage(browser, { viewport, bypassCSP: true, permissions: ['clipboard-read', 'clipboard-write'] });
const visit = (page: Page, route: string, heading: string) => visitConsole(page, svc.url, route, heading);

/** Whether the element's top lies within the window, as it shows now. */
const inViewport = (locator: Locator) =>
  locator.evaluate((element) => {
    const box = element.getBoundingClientRect();
    return box.top >= 0 && box.top < window.innerHeight && box.height > 0;
  });

/** The text of the focused element. */
const focused = (page: Page) => page.evaluate(() => document.activeElement?.textContent ?? '');

const clipboard = (page: Page) => page.evaluate(() => navigator.clipboard.readText());

/** The body the form has built, read from its JSON view (and back to the form). */
async function body(page: Page) {
  await page.getByRole('button', { name: 'Edit as JSON' }).click();
  const json = JSON.parse(await page.getByLabel('Body (JSON)').inputValue());
  await page.getByRole('button', { name: 'Edit as form' }).click();
  return json;
}

/** The claims of an SD-JWT VC with its disclosures put back (the signature is another test's business). */
async function claimsOf(credential: string) {
  const sdjwt = new SDJwtVcInstance({
    hasher: (data: string | ArrayBuffer) =>
      createHash('sha256')
        .update(new Uint8Array(typeof data === 'string' ? Buffer.from(data) : data))
        .digest(),
  });
  return (await sdjwt.getClaims(credential)) as Record<string, unknown>;
}

const TYPED = {
  given_name: 'Erika',
  birthdate: '1964-08-12',
  height: 1.72,
  address: { street: 'Heidestraße 17', locality: 'Köln' },
  nationalities: ['DE', 'AT'],
  organ_donor: false,
  issuing_country: 'DE',
};

describe.skipIf(!browserAvailable)('the Issue and Verify pages', () => {
  it.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ])(
    'types the claims, shows the offer in view, copies its URI, and shows it used once a wallet has it (%s)',
    async (name, viewport) => {
      const { page, errors, close } = await newPage(viewport);
      await logInToConsole(page, svc.url, admin.clientId, admin.secret);
      await visit(page, 'offers', 'Issue a credential');
      const claims = page.getByRole('group', { name: 'Claims of licence' });
      await claims.waitFor();

      // The default value is there before anything is typed; mandatory fields are required.
      await expect.poll(() => claims.getByLabel('Issuing country').inputValue()).toBe('DE');
      expect(await claims.getByLabel('Given name').getAttribute('required')).not.toBeNull();
      expect(await claims.getByLabel('Birth date').getAttribute('type')).toBe('date');
      expect(await claims.getByLabel('Height (m)').getAttribute('type')).toBe('number');

      await claims.getByLabel('Given name').fill('Erika');
      await claims.getByLabel('Birth date').fill('1964-08-12');
      await claims.getByLabel('Height (m)').fill('1.72');
      const address = claims.getByRole('group', { name: 'Address' });
      await address.getByLabel('Street').fill('Heidestraße 17');
      await address.getByLabel('Locality').fill('Köln');
      // Three rows added, the third removed again.
      const nationalities = claims.getByRole('group', { name: 'Nationalities' });
      for (let i = 0; i < 3; i++) await nationalities.getByRole('button', { name: 'Add Nationality' }).click();
      await nationalities.getByLabel('Nationality 1', { exact: true }).fill('DE');
      await nationalities.getByLabel('Nationality 2', { exact: true }).fill('AT');
      await nationalities.getByLabel('Nationality 3', { exact: true }).fill('FR');
      await nationalities.getByRole('button', { name: 'Remove Nationality 3' }).click();
      // A boolean: yes or no, "not set" apart from no.
      expect(await claims.getByLabel('Organ donor').inputValue()).toBe('');
      await claims.getByLabel('Organ donor').selectOption({ label: 'no' });
      expect(await nationalities.getByLabel('Nationality 3', { exact: true }).count()).toBe(0);

      // The form and the JSON view edit the same request: the typed values are there, as typed.
      expect((await body(page)).credentialClaims).toEqual({ licence: { type: 'inline', claims: TYPED } });
      // An edit in the JSON view shows in the form.
      await page.getByRole('button', { name: 'Edit as JSON' }).click();
      const json = JSON.parse(await page.getByLabel('Body (JSON)').inputValue());
      json.credentialClaims.licence.claims.address.locality = 'Berlin';
      await page.getByLabel('Body (JSON)').fill(JSON.stringify(json, null, 2));
      await page.getByRole('button', { name: 'Edit as form' }).click();
      expect(await address.getByLabel('Locality').inputValue()).toBe('Berlin');
      await address.getByLabel('Locality').fill('Köln');

      // An attribute provider stays choosable (none exists here: the configuration's default is the other choice).
      const source = claims.getByLabel('Claims from');
      expect(await source.locator('option').allTextContents()).toEqual(['Values entered here', "The configuration's default values"]);

      await page.getByLabel('Transaction code', { exact: true }).fill('493817');
      await screenshot(page, `issue-typed-fields-${name}`);
      expect(await seriousViolations(page, `typed fields ${name}`)).toEqual([]);

      await page.getByRole('button', { name: 'Create offer' }).click();
      const card = page.getByRole('region', { name: 'offer', exact: true });
      await card.waitFor();
      expect(await page.getByRole('alert').count()).toBe(0);
      // The card in view, its heading focused (a screen reader announces it).
      await expect.poll(() => focused(page)).toMatch(/^Offer/);
      expect(await inViewport(card.getByRole('heading', { name: /^Offer/ }))).toBe(true);
      expect(await inViewport(card.getByRole('img', { name: 'QR code of the credential offer' }))).toBe(true);

      // The URI onto the clipboard, said so.
      const uri = (await page.getByTestId('offer-uri').textContent()) as string;
      await card.getByRole('button', { name: 'Copy offer URI' }).click();
      await card.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
      expect(await clipboard(page)).toBe(uri);
      await card.getByRole('button', { name: 'Copy transaction code' }).click();
      expect(await clipboard(page)).toBe('493817');
      await card.getByText('Credential offer (JSON)').click();
      await card.getByRole('button', { name: 'Copy credential offer' }).click();
      expect(JSON.parse(await clipboard(page))).toEqual(JSON.parse((await page.getByTestId('credential-offer').textContent()) as string));

      // A wallet receives the credential: its claims carry the values as typed.
      const { response } = await receiveCredentials(uri, { txCode: '493817' });
      const [issued] = response.credentialResponse.credentials as { credential: string }[];
      expect(await claimsOf((issued as { credential: string }).credential)).toMatchObject(TYPED);
      const session = (await card.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).textContent()) as string;
      const stored = await svc.call('GET', `/api/session/${session}`, { token: admin.token });
      expect(stored.body.status).toBe('completed');

      // The card says it is used, and the QR code is gone.
      await card.getByText('Used: the wallet has received the credential.').waitFor({ timeout: 10_000 });
      expect(await card.getByRole('img', { name: 'QR code of the credential offer' }).count()).toBe(0);
      expect(await card.getByRole('button', { name: 'Copy offer URI' }).count()).toBe(0);
      if (name === 'desktop') await screenshot(page, 'offer-used');
      expect(await seriousViolations(page, `offer used ${name}`)).toEqual([]);
      expect(errors).toEqual([]);
      await close();
    },
    90_000,
  );

  it("keeps the other claim sources: an attribute provider, JSON for a configuration without fields; the API's refusal on the typed field", async () => {
    const tenant = await svc.tenant('issue-sources');
    const made = [
      await svc.call('POST', '/api/issuer/credentials', {
        token: tenant.token,
        body: {
          id: 'sized',
          config: { format: 'dc+sd-jwt' },
          vct: 'urn:example:sized:1',
          fields: [{ path: ['height'], type: 'number', constraints: { maximum: 3 }, display: [{ name: 'Height (m)' }] }],
        },
      }),
      await svc.call('POST', '/api/issuer/credentials', {
        token: tenant.token,
        body: { id: 'free', config: { format: 'dc+sd-jwt' }, vct: 'urn:example:free:1', fields: [] },
      }),
      await svc.call('POST', '/api/issuer/attribute-providers', {
        token: tenant.token,
        body: { id: 'registry', name: 'Registry', url: 'https://registry.example.com/claims', auth: { type: 'none' } },
      }),
    ];
    for (const reply of made) expect(reply.status, reply.text).toBe(201);
    const { page, errors, close } = await newPage(DESKTOP);
    await logInToConsole(page, svc.url, tenant.clientId, tenant.secret);
    await visit(page, 'offers', 'Issue a credential');
    const configurations = page.getByRole('group', { name: 'Credential configurations' });
    await configurations.getByLabel('sized').check();
    await configurations.getByLabel('free').check();
    const sized = page.getByRole('group', { name: 'Claims of sized' });
    const free = page.getByRole('group', { name: 'Claims of free' });

    // No fields: the claims as JSON (which a configuration without fields refuses: it has no claims).
    expect(JSON.parse(await free.getByLabel('Claims (JSON)').inputValue())).toEqual({});
    await free.getByLabel('Claims (JSON)').fill('{"note": "hello"}');
    // Values the configurations refuse: on the typed field, the API's message there, not repeated in the
    // problem box below the form, which shows the refusal of the JSON claims.
    await sized.getByLabel('Height (m)').fill('9');
    await page.getByRole('button', { name: 'Create offer' }).click();
    const height = sized.getByLabel('Height (m)');
    await expect.poll(() => height.getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
    expect(await page.locator(`#${await height.getAttribute('aria-describedby')}`).textContent()).toMatch(/3/);
    // (The problem's detail sums up every refusal; its list holds those no field shows.)
    const listed = await page.getByRole('alert').getByRole('listitem').allTextContents();
    expect(listed).toEqual([expect.stringContaining('body.credentialClaims.free.claims.note')]);
    await free.getByLabel('Claims (JSON)').fill('{}');

    // The claims of sized from the attribute provider instead.
    await sized.getByLabel('Claims from').selectOption({ label: 'An attribute provider' });
    expect(await sized.getByLabel('Attribute provider').inputValue()).toBe('registry');
    expect((await body(page)).credentialClaims).toEqual({
      sized: { type: 'attributeProvider', attributeProviderId: 'registry' },
      free: { type: 'inline', claims: {} },
    });
    await page.getByRole('button', { name: 'Create offer' }).click();
    const card = page.getByRole('region', { name: 'offer', exact: true });
    const session = (await card.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).textContent()) as string;
    const stored = await svc.call('GET', `/api/session/${session}`, { token: tenant.token });
    expect(stored.body.credentialPayload).toMatchObject({
      credentialClaims: {
        sized: { type: 'attributeProvider', attributeProviderId: 'registry' },
        free: { type: 'inline', claims: {} },
      },
    });

    // A configuration unchosen takes its claims with it.
    await configurations.getByLabel('free').uncheck();
    expect(Object.keys((await body(page)).credentialClaims)).not.toContain('free');
    expect(errors).toEqual([]);
    await close();
  }, 60_000);

  it('shows an offer expired when its lifetime has passed, without an event: the QR code goes', async () => {
    const tenant = await svc.tenant('issue-expiry');
    const made = await svc.call('POST', '/api/issuer/credentials', {
      token: tenant.token,
      body: { id: 'plain', config: { format: 'dc+sd-jwt' }, vct: 'urn:example:plain:1', fields: [{ path: ['note'], type: 'string' }] },
    });
    expect(made.status, made.text).toBe(201);
    // The shortest lifetime the issuer settings take.
    const settings = await svc.raw('PUT', '/api/issuer/config', { token: tenant.token, body: { offerLifetimeSeconds: 60 } });
    expect(settings.status, settings.text).toBe(200);
    const { page, errors, close } = await newPage(DESKTOP);
    // The page's clock runs from now, and is moved on rather than waited for.
    await page.clock.install();
    await logInToConsole(page, svc.url, tenant.clientId, tenant.secret);
    await visit(page, 'offers', 'Issue a credential');
    await page.getByRole('group', { name: 'Claims of plain' }).waitFor();
    await page.getByRole('button', { name: 'Create offer' }).click();
    const card = page.getByRole('region', { name: 'offer', exact: true });
    await card.getByRole('img', { name: 'QR code of the credential offer' }).waitFor();
    const session = (await card.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).textContent()) as string;
    const stored = await svc.call('GET', `/api/session/${session}`, { token: tenant.token });
    expect(Date.parse(stored.body.expiresAt) - Date.parse(stored.body.createdAt)).toBeLessThanOrEqual(61_000);

    await page.clock.fastForward(61_000);
    await card.getByText('Expired: no wallet can use it any more.').waitFor();
    expect(await card.locator('.status').textContent()).toBe('expired');
    expect(await card.getByRole('img', { name: 'QR code of the credential offer' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await close();
  }, 60_000);

  it.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ])(
    'shows a presentation request in view and copies its URI (%s)',
    async (name, viewport) => {
      const { page, errors, close } = await newPage(viewport);
      await logInToConsole(page, svc.url, admin.clientId, admin.secret);
      await visit(page, 'presentations', 'Request a presentation');
      await page.getByRole('button', { name: 'Create request' }).click();
      const card = page.getByRole('region', { name: 'presentation request', exact: true });
      await card.waitFor();
      await expect.poll(() => focused(page)).toMatch(/^Request/);
      expect(await inViewport(card.getByRole('heading', { name: /^Request/ }))).toBe(true);
      const uri = (await page.getByTestId('request-uri').textContent()) as string;
      expect(uri).toMatch(/^openid4vp:\/\//);
      await card.getByRole('button', { name: 'Copy request URI' }).click();
      await card.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
      expect(await clipboard(page)).toBe(uri);
      const session = (await card.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).textContent()) as string;
      const stored = await svc.call('GET', `/api/session/${session}`, { token: admin.token });
      expect(stored.status, stored.text).toBe(200);
      expect(await seriousViolations(page, `request made ${name}`)).toEqual([]);
      expect(errors).toEqual([]);
      await close();
    },
    60_000,
  );
});
