// The web console in a real browser: log in, create a tenant, a credential configuration (first with
// a field the API refuses) and an offer with its QR code, redeem it with a wallet, watch the session
// turn completed live, revoke the credential, then a presentation request whose verified claims
// arrive on the page. Screenshots of the main pages go to artifacts/console/.
import { mkdirSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { build } from 'esbuild';
import { decodeJwt, exportJWK, generateKeyPair } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../scripts/build.mjs';
import { browserAvailable, launchBrowser } from '../support/browser.js';
import { ADMIN_CLIENT, startOpenIdProvider } from '../support/oidc-provider.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { freePort, startService, type TestService } from '../support/service.js';
import { holderKey, receiveCredentials } from '../support/wallet.js';

const ARTIFACTS = new URL('../../artifacts/console/', import.meta.url).pathname;
let svc: TestService;
let browser: Browser;

beforeAll(async () => {
  if (!browserAvailable) return;
  await buildConsole(build);
  mkdirSync(ARTIFACTS, { recursive: true });
  svc = await startService();
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

const shot = (page: Page, name: string) => page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });

async function logIn(page: Page, clientId: string, secret: string) {
  await page.goto(`${svc.url}/console`);
  await page.getByLabel('Client id').fill(clientId);
  await page.getByLabel('Client secret').fill(secret);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
}

/** Opens a section from the navigation and waits for its heading. */
async function open(page: Page, link: string, heading = link) {
  await page.getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { name: heading, level: 2 }).waitFor();
}

async function submitJson(page: Page, body: unknown, button: 'Create' | 'Save' = 'Create') {
  await page.getByLabel('Body (JSON)').fill(JSON.stringify(body, null, 2));
  await page.getByRole('button', { name: button, exact: true }).click();
}

describe.skipIf(!browserAvailable)('web console', () => {
  it('runs a tenant from set-up to a revoked credential and a verified presentation', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));

    // The service's own client: tenants.
    await logIn(page, 'root', svc.rootSecret);
    await page.getByRole('heading', { name: 'Tenants' }).waitFor();
    await submitJson(page, {
      id: 'console',
      name: 'Console Ltd',
      roles: ['clients:manage', 'issuance:manage', 'issuance:offer', 'presentation:manage', 'presentation:request'],
    });
    const notice = page.getByRole('status');
    await notice.waitFor();
    const admin = JSON.parse((await notice.locator('pre').textContent()) as string).client as { clientId: string; secret: string };
    expect(admin.clientId).toBe('console-admin');
    await page.getByRole('cell', { name: 'Console Ltd' }).waitFor();
    await shot(page, 'tenants');
    await page.getByRole('button', { name: 'Log out' }).click();

    // The tenant's admin: a credential configuration, first with a field the API refuses.
    await logIn(page, admin.clientId, admin.secret);
    await open(page, 'Credential configurations');
    await submitJson(page, {
      id: 'pid',
      config: { format: 'dc+sd-jwt' },
      vct: 'urn:eudi:pid:1',
      fields: [{ path: ['given_name'], type: 'text' }],
    });
    const problem = page.getByRole('alert');
    await problem.waitFor();
    expect(await problem.textContent()).toContain('fields');
    await shot(page, 'field-error');
    await submitJson(page, {
      id: 'pid',
      config: { format: 'dc+sd-jwt' },
      vct: 'urn:eudi:pid:1',
      statusManagement: true,
      fields: [
        { path: ['given_name'], type: 'string', mandatory: true },
        { path: ['family_name'], type: 'string', mandatory: true },
      ],
    });
    await page.getByRole('cell', { name: 'pid', exact: true }).waitFor();

    // An offer: its QR code, then a wallet redeems it and the status turns completed on the page.
    await open(page, 'Issue', 'Issue a credential');
    await page.getByRole('button', { name: 'Create offer' }).click();
    const offerUri = (await page.getByTestId('offer-uri').textContent()) as string;
    expect(offerUri).toMatch(/^openid-credential-offer:\/\//);
    await page.locator('.qr svg').waitFor();
    await shot(page, 'offer');
    const key = await holderKey();
    const { response } = await receiveCredentials(offerUri, { keys: [key] });
    const credential = (response.credentialResponse.credentials as { credential: string }[])[0]?.credential as string;
    await page.locator('.status', { hasText: 'completed' }).waitFor({ timeout: 10_000 });

    // The session: revoke its credential; the status list shows it.
    await page.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).click();
    await page.getByRole('button', { name: 'Revoke credentials' }).click();
    await page.getByRole('status').filter({ hasText: 'Revoked' }).waitFor();
    await shot(page, 'session');
    const { status } = decodeJwt(credential.split('~')[0] as string) as { status: { status_list: { idx: number; uri: string } } };
    const token = await (await fetch(status.status_list.uri)).text();
    const { bits, lst } = (decodeJwt(token) as { status_list: { bits: number; lst: string } }).status_list;
    const bytes = inflateSync(Buffer.from(lst, 'base64url'));
    const idx = status.status_list.idx;
    expect(((bytes[Math.floor((idx * bits) / 8)] as number) >> ((idx * bits) % 8)) & ((1 << bits) - 1)).toBe(1);

    // Verification: a trust list, a presentation configuration, a request answered by a wallet
    // holding a second (valid) credential; the verified claims arrive on the page.
    await open(page, 'Trust lists');
    await submitJson(page, {
      id: 'issuers',
      entities: [
        { type: 'internal', keyChainId: 'default-attestation' },
        { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
      ],
    });
    await page.getByRole('cell', { name: 'issuers', exact: true }).waitFor();
    await open(page, 'Presentation configurations');
    await submitJson(page, {
      id: 'pid-check',
      dcql_query: {
        credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] }, claims: [{ path: ['given_name'] }] }],
      },
    });
    await page.getByRole('cell', { name: 'pid-check', exact: true }).waitFor();

    await open(page, 'Issue', 'Issue a credential');
    await page.getByRole('button', { name: 'Create offer' }).click();
    const second = await receiveCredentials((await page.getByTestId('offer-uri').textContent()) as string, { keys: [key] });
    const valid = (second.response.credentialResponse.credentials as { credential: string }[])[0]?.credential as string;

    await open(page, 'Verify', 'Request a presentation');
    await page.getByRole('button', { name: 'Create request' }).click();
    const requestUri = (await page.getByTestId('request-uri').textContent()) as string;
    const resolved = await resolveRequest(requestUri);
    expect((await submit(resolved, { pid: [await presentSdJwt(valid, key.privateJwk, resolved, ['given_name'])] })).status).toBe(200);
    await page.getByTestId('verified-claims').waitFor({ timeout: 10_000 });
    expect(await page.getByTestId('verified-claims').textContent()).toContain('Erika');
    await shot(page, 'presentation');

    // Sessions: the paged list shows both kinds.
    await open(page, 'Sessions');
    await page.locator('tbody tr').first().waitFor();
    expect(await page.locator('tbody tr').count()).toBeGreaterThanOrEqual(3);
    await shot(page, 'sessions');
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('edits fields in a form beside the JSON, checks DCQL as it is typed, reads certificate chains and imports keys', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    const tenant = await svc.tenant('forms');
    await logIn(page, tenant.clientId, tenant.secret);

    // Fields: the form and the JSON edit the same body; the API's refusal lands on the field's row.
    await open(page, 'Credential configurations');
    const json = page.getByLabel('Body (JSON)');
    const body = async () => JSON.parse(await json.inputValue());
    await page.getByRole('button', { name: 'Add field' }).click();
    const fourth = page.getByRole('group', { name: 'Field 4' });
    await fourth.getByLabel('Path').fill('address.street');
    await fourth.getByLabel('Path').press('Tab');
    await fourth.getByLabel('Mandatory').check();
    await fourth.getByLabel('Display name').fill('Street');
    await fourth.getByLabel('Display name').press('Tab');
    expect((await body()).fields[3]).toEqual({
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
    expect(await rowError.first().textContent()).toContain('body.fields.2');
    await shot(page, 'fields-form');
    await page.getByRole('button', { name: 'Remove field 3' }).click();
    expect((await body()).fields.map((f: { path: string[] }) => f.path.join('.'))).toEqual(['given_name', 'family_name', 'address.street']);
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('cell', { name: 'pid', exact: true }).waitFor();
    const stored = await svc.call('GET', '/api/issuer/credentials/pid', { token: tenant.token });
    expect(stored.body.fields[2]).toMatchObject({ path: ['address', 'street'], mandatory: true, display: [{ name: 'Street' }] });

    // DCQL: checked while typed, before anything is sent.
    await open(page, 'Presentation configurations');
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
    await shot(page, 'key-chains');
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    await page.getByLabel('Kind').selectOption({ label: 'Import a key' });
    expect(await json.inputValue()).toContain('privateJwk');
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

  it('is usable on a phone-sized screen and keeps the token out of storage', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await logIn(page, 'root', svc.rootSecret);
    await page.getByRole('heading', { name: 'Tenants' }).waitFor();
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie);
    expect(stored).toBe('{}{}');
    await shot(page, 'phone');
    // A reload forgets the token: the login comes back.
    await page.reload();
    await page.getByLabel('Client id').waitFor();
    await page.close();
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
      const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
      expect(stored).toBe('{}{}');
      await shot(page, 'external-login');
    } finally {
      await page.close();
      await external.stop();
      await op.stop();
    }
  }, 60_000);
});
