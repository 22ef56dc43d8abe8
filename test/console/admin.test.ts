// The console's admin screens in a real browser, against the registrar fake: the registrar
// configuration (created through its form, a refused field shown on the field, changed, deleted after
// a confirmation) and an access certificate; schema metadata published, a new version, a version
// deprecated, the catalog, and imports as a DCQL query; a registration certificate reissued; the
// caches and their clearing; a tenant's
// configuration exported as a file; a tenant opened by the service administrator. Each template is submitted as it stands and succeeds, and each
// screen and action shows only to a client holding a role its routes take.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, DESKTOP, logInToConsole, PHONE, startConsole, stopConsole } from '../support/browser.js';
import { type RegistrarFake, startRegistrarFake } from '../support/registrar-fake.js';
import type { TestService } from '../support/service.js';

const ACCOUNT = { username: 'rp-operator', password: 'registrar password', clientId: 'console-registrar' };
const POLL = { timeout: 10_000 };
let svc: TestService;
let browser: Browser;
let registrar: RegistrarFake;

beforeAll(async () => {
  if (!browserAvailable) return;
  ({ svc, browser } = await startConsole());
  registrar = await startRegistrarFake(ACCOUNT);
}, 120_000);
afterAll(async () => {
  await registrar?.stop();
  await stopConsole(svc, browser);
});

/** A page logged in as `clientId`, at `route`, collecting the page's script errors. */
async function open(clientId: string, secret: string, route: string, viewport = DESKTOP) {
  const context = await browser.newContext({ acceptDownloads: true, viewport });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await logInToConsole(page, svc.url, clientId, secret);
  await page.goto(`${svc.url}/console#/${route}`);
  return { page, errors, close: () => context.close() };
}

const section = (page: Page, name: string) => page.getByRole('region', { name, exact: true });
const statusIn = (page: Page, name: string) => section(page, name).getByRole('status');
const navLinks = (page: Page) => page.getByRole('navigation', { name: 'sections' }).getByRole('link').allTextContents();

async function configureRegistrar(token: string) {
  const reply = await svc.call('POST', '/api/registrar/config', {
    token,
    body: { registrarUrl: registrar.url, oidcUrl: registrar.oidcUrl, ...ACCOUNT },
  });
  expect(reply.status, reply.text).toBe(200);
}

describe.skipIf(!browserAvailable)('web console: admin screens', () => {
  it('configures the registrar through its form, changes it unedited, obtains an access certificate and deletes it after asking', async () => {
    const tenant = await svc.tenant('console-registrar', ['registrar:manage']);
    const { page, errors, close } = await open(tenant.clientId, tenant.secret, 'registrar');
    try {
      const connect = section(page, 'Connect a registrar');
      await connect.waitFor();
      // A field the API refuses is marked on the field.
      await connect.getByLabel('Registrar URL').fill('not a url');
      await connect.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => connect.getByLabel('Registrar URL').getAttribute('aria-invalid'), POLL).toBe('true');
      expect(await connect.locator('.field-error').first().textContent()).toMatch(/URL/i);

      await connect.getByLabel('Registrar URL').fill(registrar.url);
      await connect.getByLabel('Identity provider URL').fill(registrar.oidcUrl);
      await connect.getByLabel('Client id (at the identity provider)').fill(ACCOUNT.clientId);
      await connect.getByLabel('User name').fill(ACCOUNT.username);
      await connect.getByLabel('Password', { exact: true }).fill(ACCOUNT.password);
      await connect.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved the registrar configuration' }).waitFor();
      await page.getByRole('cell', { name: registrar.url, exact: true }).waitFor();
      const stored = await svc.call('GET', '/api/registrar/config', { token: tenant.token });
      expect(stored.body).toMatchObject({ registrarUrl: registrar.url, username: ACCOUNT.username, hasPassword: true });

      // The change form starts from what is stored: unedited, it saves.
      const change = section(page, 'Change the registrar configuration');
      await change.getByRole('button', { name: 'Save changes' }).click();
      await expect
        .poll(() => statusIn(page, 'Change the registrar configuration').textContent(), POLL)
        .toBe('Saved the registrar configuration');
      // JSON is one click away, and shows the same body.
      await change.getByRole('button', { name: 'Edit as JSON' }).click();
      expect(JSON.parse(await change.getByLabel('Body (JSON)').inputValue())).toMatchObject({ registrarUrl: registrar.url });

      // The access certificate template (the default access key chain) as it stands.
      await section(page, 'Obtain an access certificate').getByRole('button', { name: 'Obtain certificate' }).click();
      await expect
        .poll(() => statusIn(page, 'Obtain an access certificate').textContent(), POLL)
        .toBe('Access certificate stored on key chain default-access');
      expect(registrar.certificates.accessCertificates).toHaveLength(1);

      // Deleting asks first; Cancel keeps it.
      await page.getByRole('button', { name: 'Delete configuration' }).click();
      await page.getByRole('dialog', { name: 'Confirm' }).getByRole('button', { name: 'Cancel' }).click();
      expect((await svc.call('GET', '/api/registrar/config', { token: tenant.token })).status).toBe(200);
      await page.getByRole('button', { name: 'Delete configuration' }).click();
      await page.getByRole('dialog', { name: 'Confirm' }).getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('status').filter({ hasText: 'Deleted the registrar configuration' }).waitFor();
      await section(page, 'Connect a registrar').waitFor();
      expect((await svc.raw('GET', '/api/registrar/config', { token: tenant.token })).status).toBe(404);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it('publishes schema metadata and a new version from the templates, deprecates a version after asking, and imports it as a DCQL query', async () => {
    const tenant = await svc.tenant('console-publisher', ['registrar:manage', 'issuance:manage', 'presentation:manage']);
    await configureRegistrar(tenant.token);
    const { page, errors, close } = await open(tenant.clientId, tenant.secret, 'schema-metadata');
    try {
      await section(page, 'Publish new schema metadata').getByRole('button', { name: 'Publish', exact: true }).click();
      await expect.poll(() => statusIn(page, 'Publish new schema metadata').textContent(), POLL).toMatch(/^Published \S+ 1\.0\.0$/);
      const [id] = [...registrar.schemaMetadata.reservations.keys()];
      const mine = section(page, 'published by this tenant');
      await mine.getByRole('cell', { name: '1.0.0', exact: true }).waitFor();

      // A new version of it, from its template (the next minor version, the schemas carried over).
      await section(page, 'Publish a new version').getByRole('button', { name: 'Publish version' }).click();
      await expect.poll(() => statusIn(page, 'Publish a new version').textContent(), POLL).toBe(`Published ${id} 1.1.0`);
      await mine.getByRole('cell', { name: '1.1.0', exact: true }).waitFor();

      // Deprecating 1.0.0: superseded by 1.1.0, after a confirmation.
      await mine.getByRole('button', { name: `Deprecate ${id} 1.0.0` }).click();
      const deprecation = section(page, `Deprecation of ${id} 1.0.0`);
      expect(await deprecation.getByLabel('Superseded by version').inputValue()).toBe('1.1.0');
      await deprecation.getByRole('button', { name: 'Save deprecation' }).click();
      await page.getByRole('dialog', { name: 'Confirm' }).getByRole('button', { name: 'Save deprecation' }).click();
      await expect.poll(() => statusIn(page, `Deprecation of ${id} 1.0.0`).textContent(), POLL).toBe(`${id} 1.0.0 is deprecated`);
      await mine.getByRole('cell', { name: 'yes, by 1.1.0' }).waitFor();
      const versions = await svc.call('GET', `/api/schema-metadata/${id}/versions`, { token: tenant.token });
      expect(versions.body.find((v: { version: string }) => v.version === '1.0.0')).toMatchObject({ deprecated: true });

      // Category and tags of 1.1.0, from the record: tags chosen in the form.
      await mine.getByRole('button', { name: `Category and tags of ${id} 1.1.0` }).click();
      const classification = section(page, `Category and tags of ${id} 1.1.0`);
      await classification.getByLabel('kyc').check();
      await classification.getByRole('button', { name: 'Save category and tags' }).click();
      await expect
        .poll(() => statusIn(page, `Category and tags of ${id} 1.1.0`).textContent(), POLL)
        .toBe(`Saved the category and tags of ${id} 1.1.0`);
      const classified = await svc.call('GET', `/api/schema-metadata/${id}/versions`, { token: tenant.token });
      expect(classified.body.find((v: { version: string }) => v.version === '1.1.0')).toMatchObject({ tags: ['kyc'] });

      // The audit log names the version whose deprecation changed.
      await page.goto(`${svc.url}/console#/audit`);
      await page.getByLabel('Action').selectOption('schema_metadata.deprecation_changed');
      expect(await page.getByTestId('audit-object').allTextContents()).toEqual([`schema_metadata ${id} 1.0.0 · tenant console-publisher`]);
      await page.goto(`${svc.url}/console#/schema-metadata`);

      // The registrar's catalog, and the versions of an id.
      await page.reload();
      const catalog = section(page, "The registrar's catalog");
      await catalog
        .getByRole('button', { name: `Versions of ${id}` })
        .first()
        .click();
      const versionsTable = catalog.getByRole('region', { name: `versions of ${id}` });
      await versionsTable.waitFor();
      // A version's signed JWT and its schema, as files.
      const [jwtFile] = await Promise.all([
        page.waitForEvent('download'),
        versionsTable.getByRole('button', { name: `Download the JWT of ${id} 1.0.0` }).click(),
      ]);
      expect(jwtFile.suggestedFilename()).toBe(`${id}-1.0.0.jwt`);
      const served = await fetch(`${svc.url}/api/schema-metadata/${id}/versions/1.0.0/jwt`, {
        headers: { authorization: `Bearer ${tenant.token}` },
      });
      expect(readFileSync(await jwtFile.path(), 'utf8')).toBe(await served.text());
      const [schemaFile] = await Promise.all([
        page.waitForEvent('download'),
        versionsTable.getByRole('button', { name: `Download the dc+sd-jwt schema of ${id} 1.0.0` }).click(),
      ]);
      expect(JSON.parse(readFileSync(await schemaFile.path(), 'utf8'))).toMatchObject({ type: 'object' });
      // One id and version looked up at the registrar.
      const search = catalog.getByRole('form', { name: 'search the catalog' });
      await search.getByLabel('Attestation id').fill(id as string);
      await search.getByLabel('Version').fill('1.1.0');
      await search.getByRole('button', { name: 'Search' }).click();
      const catalogRows = catalog.getByRole('region', { name: 'registrar catalog' }).getByRole('row');
      await expect.poll(() => catalogRows.count(), POLL).toBe(2);
      expect(await catalogRows.nth(1).getByRole('cell').nth(1).textContent()).toBe('1.1.0');
      // The vocabularies the registrar accepts.
      await catalog.getByText(/^Categories and tags the registrar accepts/).click();
      await catalog.getByText('age-verification', { exact: true }).waitFor();

      // Imports as the verifier: the templates take the catalog's first entry, and this service as issuer.
      for (const [form, button, said] of [
        ['Schema metadata from a URL', 'Resolve URL', /^Resolved: a DCQL query of 1 credential/],
        ['Schema metadata as a signed JWT', 'Resolve JWT', /^Resolved: a DCQL query of 1 credential/],
        ["Another issuer's metadata", 'Resolve issuer', /^Resolved: \d+ credential configurations?/],
      ] as const) {
        await expect.poll(() => section(page, form).getByRole('textbox').first().inputValue(), POLL).not.toBe('');
        await section(page, form).getByRole('button', { name: button }).click();
        await expect
          .poll(
            async () => (await section(page, form).getByRole('status').or(section(page, form).getByRole('alert')).textContent()) ?? '',
            POLL,
          )
          .toMatch(said);
      }
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 90_000);

  it("reissues a presentation configuration's registration certificate, offered only where the registrar issues it", async () => {
    const tenant = await svc.tenant('console-rp', ['presentation:manage', 'registrar:manage']);
    await configureRegistrar(tenant.token);
    const dcql_query = {
      credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] }, claims: [{ path: ['given_name'] }] }],
    };
    const purpose = [{ lang: 'en', content: 'Check the name' }];
    for (const body of [
      {
        id: 'kyc',
        dcql_query,
        registration_cert: {
          body: { purpose, privacy_policy: 'https://rp.example.com/privacy', support_uri: 'mailto:help@rp.example.com' },
        },
      },
      { id: 'plain', dcql_query },
    ]) {
      const saved = await svc.call('POST', '/api/verifier/config', { token: tenant.token, body });
      expect(saved.status, saved.text).toBe(201);
    }
    const { page, errors, close } = await open(tenant.clientId, tenant.secret, 'presentation-configs');
    try {
      await page.getByRole('cell', { name: 'plain', exact: true }).waitFor();
      expect(await page.getByRole('button', { name: 'Reissue registration certificate plain' }).count()).toBe(0);
      const issued = registrar.certificates.registrationCertificates.length;
      await page.getByRole('button', { name: 'Reissue registration certificate kyc' }).click();
      const outcome = page.getByRole('status').filter({ hasText: 'Reissue registration certificate: kyc' }).or(page.getByRole('alert'));
      await expect.poll(() => outcome.first().textContent(), POLL).toBe('Reissue registration certificate: kyc');
      expect(registrar.certificates.registrationCertificates).toHaveLength(issued + 1);
      const stored = await svc.call('GET', '/api/verifier/config/kyc', { token: tenant.token });
      expect(stored.body.registrationCertCache?.jwt).toBe(registrar.certificates.registrationCertificates.at(-1)?.jwt);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it('shows the cache statistics and clears the caches after asking', async () => {
    const tenant = await svc.tenant('console-caches', ['issuance:manage']);
    // A status list token served once: it is in the cache.
    const list = await svc.call('POST', '/api/status-lists', { token: tenant.token, body: { bits: 1 } });
    expect(list.status, list.text).toBe(201);
    expect((await fetch(list.body.uri)).status).toBe(200);
    const { page, errors, close } = await open(tenant.clientId, tenant.secret, 'caches');
    try {
      const table = page.getByRole('region', { name: 'cache statistics' });
      const signedEntries = () =>
        table.getByRole('row').filter({ hasText: 'Status lists this service signs' }).getByRole('cell').nth(1).textContent();
      await expect.poll(signedEntries, POLL).toMatch(/^1 \//);
      // Cancel keeps it.
      await page.getByRole('button', { name: 'Clear the status list cache' }).click();
      await page.getByRole('dialog', { name: 'Confirm' }).getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('button', { name: 'Refresh' }).click();
      await expect.poll(signedEntries, POLL).toMatch(/^1 \//);
      for (const [button, what] of [
        ['Clear the status list cache', 'the status list cache'],
        ['Clear the trust list cache', 'the trust list cache'],
        ['Clear all caches', 'every cache'],
      ]) {
        await page.getByRole('button', { name: button }).click();
        await page.getByRole('dialog', { name: 'Confirm' }).getByRole('button', { name: 'Clear' }).click();
        await page
          .getByRole('status')
          .filter({ hasText: `Cleared ${what}` })
          .waitFor();
        await expect.poll(signedEntries, POLL).toMatch(/^0 \//);
      }
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it("exports a tenant's configuration as a tar of the import folder", async () => {
    await svc.tenant('console-export');
    const { page, errors, close } = await open('root', svc.rootSecret, 'tenants');
    try {
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export the configuration of console-export' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('console-export-config.tar');
      // The download is the folder CONFIG_IMPORT reads: the system tar unpacks the files the JSON export lists.
      const folder = mkdtempSync(join(tmpdir(), 'svc-console-export-'));
      try {
        execFileSync('tar', ['-xf', await download.path(), '-C', folder]);
        const served = await svc.call('GET', '/api/config/export?tenantId=console-export', { token: await svc.rootToken() });
        expect(Object.keys(served.body.files)).toContain('console-export/tenant.json');
        for (const [path, content] of Object.entries(served.body.files)) {
          expect(JSON.parse(readFileSync(join(folder, path), 'utf8')), path).toEqual(content);
        }
        expect(readFileSync(join(folder, 'console-export/environment.txt'), 'utf8')).toContain(served.body.environment[0]);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it("opens a tenant as the administrator: the session becomes the tenant's, audited as the admin there", async () => {
    await svc.tenant('console-open');
    const { page, errors, close } = await open('root', svc.rootSecret, 'tenants');
    try {
      await page.getByRole('button', { name: 'Open tenant console-open' }).click();
      await expect.poll(() => page.getByRole('banner').textContent(), POLL).toContain('tenant console-open');
      expect(await navLinks(page)).toContain('Clients');
      expect(await navLinks(page)).not.toContain('Tenants');
      const stored = await svc.db
        .selectFrom('audit_log')
        .select(['acting_admin_id', 'actor_display'])
        .where('tenant_id', '=', 'console-open')
        .where('action_type', '=', 'token.exchanged')
        .execute();
      expect(stored).toEqual([{ acting_admin_id: 'root', actor_display: 'admin root in tenant console-open' }]);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it('shows each screen and action only to a client holding a role its routes take', async () => {
    const expectations: [roles: Parameters<TestService['tenant']>[1], shown: string[], hidden: string[]][] = [
      [['issuance:offer', 'presentation:request', 'clients:manage', 'users:manage'], [], ['Registrar', 'Schema metadata', 'Caches']],
      [['issuance:manage'], ['Schema metadata', 'Caches'], ['Registrar']],
      [['registrar:manage'], ['Registrar', 'Schema metadata'], ['Caches']],
      [['presentation:manage'], ['Schema metadata', 'Caches'], ['Registrar']],
    ];
    for (const [index, [roles, shown, hidden]] of expectations.entries()) {
      const tenant = await svc.tenant(`console-gate-${index}`, roles);
      const { page, close } = await open(tenant.clientId, tenant.secret, 'audit');
      try {
        await page.getByRole('heading', { level: 2 }).first().waitFor();
        const links = await navLinks(page);
        for (const label of shown) expect(links, `${roles} sees ${label}`).toContain(label);
        for (const label of hidden) expect(links, `${roles} does not see ${label}`).not.toContain(label);
        if (shown.includes('Schema metadata')) {
          await page.goto(`${svc.url}/console#/schema-metadata`);
          await page.getByRole('heading', { name: 'Schema metadata', level: 2 }).waitFor();
          const publishing = roles?.includes('registrar:manage') ?? false;
          // These tenants have no registrar: publishing explains how to connect one instead of offering its form.
          if (publishing) await section(page, 'no registrar').waitFor();
          expect(await section(page, 'no registrar').count()).toBe(publishing ? 1 : 0);
          expect(await section(page, 'Publish new schema metadata').count()).toBe(0);
          expect(await section(page, "The registrar's catalog").count()).toBe(publishing || roles?.includes('issuance:manage') ? 1 : 0);
          expect(await section(page, 'Schema metadata as a signed JWT').count()).toBe(roles?.includes('presentation:manage') ? 1 : 0);
        }
        // A hidden route opens the first section instead.
        await page.goto(`${svc.url}/console#/registrar`);
        if (hidden.includes('Registrar')) {
          await page.getByRole('heading', { level: 2 }).first().waitFor();
          expect(await page.getByRole('heading', { name: 'Registrar', level: 2 }).count()).toBe(0);
        }
      } finally {
        await close();
      }
    }
    // The export is a service client's: a tenant's client does not see the Tenants page at all.
    const tenant = await svc.tenant('console-gate-export');
    const { page, close } = await open(tenant.clientId, tenant.secret, 'tenants');
    try {
      await page.getByRole('heading', { level: 2 }).first().waitFor();
      expect(await navLinks(page)).not.toContain('Tenants');
      expect(await page.getByRole('button', { name: /^Export the configuration/ }).count()).toBe(0);
    } finally {
      await close();
    }
  }, 120_000);

  it('fits a phone (375 px): nothing on these screens scrolls the page sideways', async () => {
    const tenant = await svc.tenant('console-phone', ['registrar:manage', 'issuance:manage', 'presentation:manage']);
    await configureRegistrar(tenant.token);
    const published = await svc.call('POST', '/api/schema-metadata/publish', {
      token: tenant.token,
      body: {
        config: {
          version: '1.0.0',
          attestationLoS: 'iso_18045_moderate',
          bindingType: 'key',
          schemaURIs: [{ formatIdentifier: 'dc+sd-jwt', meta: { vct: 'urn:example:phone:1' }, schemaContent: { type: 'object' } }],
        },
      },
    });
    expect(published.status, published.text).toBe(201);
    const { page, errors, close } = await open(tenant.clientId, tenant.secret, 'registrar', PHONE);
    try {
      for (const [route, ready] of [
        ['registrar', 'Obtain an access certificate'],
        ['schema-metadata', "Another issuer's metadata"],
        ['caches', 'Status lists this service signs'],
      ] as const) {
        await page.goto(`${svc.url}/console#/${route}`);
        await page.getByText(ready, { exact: true }).first().waitFor();
        await expect.poll(() => page.getByRole('cell').count(), POLL).toBeGreaterThan(0);
        if (route === 'schema-metadata') {
          // An answer shown: a DCQL query in a box of its own.
          const form = section(page, 'Schema metadata as a signed JWT');
          await expect.poll(() => form.getByRole('textbox').inputValue(), POLL).not.toBe('');
          await form.getByRole('button', { name: 'Resolve JWT' }).click();
          await form.getByRole('status').waitFor();
          await form.getByText('Answer').click();
        }
        const { width, screen } = await page.evaluate(() => ({
          width: document.documentElement.scrollWidth,
          screen: document.documentElement.clientWidth,
        }));
        expect(width, `${route}: page wider than the screen`).toBeLessThanOrEqual(screen);
      }
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);
});
