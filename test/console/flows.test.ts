// The console's flow forms in a real browser: the offer (several credential configurations, the
// authorization code flow, the Digital Credentials API, a webhook endpoint), the presentation
// request (the verifier's options, transaction data, the Digital Credentials API, Annex C), the completion and failure of a
// deferred credential, and the deletion of a session. Each form's template is submitted unedited and
// succeeds; a value the API refuses shows its error on the field; a client without the role does not
// see the action. At phone width (375 px) the forms do not scroll the page sideways. Screenshots go
// to artifacts/console/.
import { createServer, type Server } from 'node:http';
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
  visit as visitConsole,
} from '../support/browser.js';
import { resolveRequest } from '../support/presenter.js';
import type { TestService } from '../support/service.js';
import { receiveCredentials } from '../support/wallet.js';

let svc: TestService;
let browser: Browser;
let admin: Awaited<ReturnType<TestService['tenant']>>;
let provider: Server;

beforeAll(async () => {
  if (!browserAvailable) return;
  ({ svc, browser } = await startConsole());
  admin = await svc.tenant('flows');
  const made = [
    await svc.call('POST', '/api/issuer/credentials', {
      token: admin.token,
      body: {
        id: 'pid',
        config: { format: 'dc+sd-jwt' },
        vct: 'urn:eudi:pid:1',
        fields: [
          { path: ['given_name'], type: 'string' },
          { path: ['family_name'], type: 'string' },
        ],
      },
    }),
    await svc.call('POST', '/api/issuer/credentials', {
      token: admin.token,
      body: {
        id: 'email',
        config: { format: 'dc+sd-jwt' },
        vct: 'urn:example:email:1',
        fields: [{ path: ['email'], type: 'string', defaultValue: 'erika@example.com' }],
      },
    }),
    await svc.call('POST', '/api/issuer/webhook-endpoints', {
      token: admin.token,
      body: { id: 'notify', name: 'Notifications', url: 'https://hooks.example.com/offers', auth: { type: 'none' } },
    }),
    await svc.call('POST', '/api/verifier/config', {
      token: admin.token,
      body: {
        id: 'pid-check',
        dcql_query: {
          credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] }, claims: [{ path: ['given_name'] }] }],
        },
      },
    }),
    await svc.call('POST', '/api/verifier/config', {
      token: admin.token,
      body: {
        id: 'mdl-check',
        dcql_query: {
          credentials: [
            {
              id: 'mdl',
              format: 'mso_mdoc',
              meta: { doctype_value: 'org.iso.18013.5.1.mDL' },
              claims: [{ path: ['org.iso.18013.5.1', 'family_name'] }],
            },
          ],
        },
      },
    }),
  ];
  for (const reply of made) expect(reply.status, reply.text).toBe(201);
  // An attribute provider that is never ready: every credential it is asked for is deferred.
  provider = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(202, { 'content-type': 'application/json' }).end('{"message":"checking records"}'));
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  const registry = await svc.call('POST', '/api/issuer/attribute-providers', {
    token: admin.token,
    body: {
      id: 'registry',
      name: 'Registry',
      url: `http://127.0.0.1:${(provider.address() as { port: number }).port}/claims`,
      auth: { type: 'none' },
    },
  });
  expect(registry.status, registry.text).toBe(201);
}, 120_000);
afterAll(async () => {
  await stopConsole(svc, browser);
  await new Promise<void>((resolve) => (provider ? provider.close(() => resolve()) : resolve()));
});

const newPage = (viewport = DESKTOP) => openPage(browser, { viewport });
const visit = (page: Page, route: string, heading: string) => visitConsole(page, svc.url, route, heading);

/** The API's refusal shown on the field labelled `label`: marked invalid, the error (not the hint) beside it. */
async function fieldError(page: Page, label: string) {
  const field = page.getByLabel(label, { exact: true });
  await expect.poll(() => field.getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
  const errors = page.locator(`#${await field.getAttribute('aria-describedby')} .field-error`);
  return (await errors.allTextContents()).join(' ');
}

async function answer(page: Page, choice: string) {
  const dialog = page.getByRole('dialog', { name: 'Confirm' });
  await dialog.waitFor();
  await dialog.getByRole('button', { name: choice, exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
}

const body = async (page: Page) => {
  await page.getByRole('button', { name: 'Edit as JSON' }).click();
  const json = JSON.parse(await page.getByLabel('Body (JSON)').inputValue());
  await page.getByRole('button', { name: 'Edit as form' }).click();
  return json;
};

const getSession = async (id: string) => {
  const reply = await svc.call('GET', `/api/session/${id}`, { token: admin.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
};

/** A pre-authorized offer whose claims come from the registry (never ready), redeemed by a wallet: its session waits for them. */
async function deferredSession() {
  const offer = await svc.call('POST', '/api/issuer/offer', {
    token: admin.token,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: ['pid'],
      credentialClaims: { pid: { type: 'attributeProvider', attributeProviderId: 'registry' } },
    },
  });
  expect(offer.status, offer.text).toBe(201);
  const wallet = await receiveCredentials(offer.body.uri);
  const transactionId = wallet.response.credentialResponse.transaction_id as string;
  expect(transactionId).toEqual(expect.any(String));
  return { session: offer.body.session, transactionId, wallet };
}

describe.skipIf(!browserAvailable)('console flow forms', () => {
  it('makes offers: the template unedited, several configurations, the authorization code flow, the DC API, a webhook endpoint', async () => {
    const { page, errors, close } = await newPage();
    await logInToConsole(page, svc.url, admin.clientId, admin.secret);
    await visit(page, 'offers', 'Issue a credential');

    // The template as it stands.
    await page.getByRole('button', { name: 'Create offer' }).click();
    const uri = (await page.getByTestId('offer-uri').textContent()) as string;
    expect(uri).toMatch(/^openid-credential-offer:\/\//);
    expect(await page.getByRole('alert').count()).toBe(0);
    const first = await getSession((await page.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).textContent()) as string);
    expect(first.credentialConfigurationIds).toEqual(['pid']);

    // A value the API refuses: its message on the field.
    await page.getByLabel('Transaction code', { exact: true }).fill('1'.repeat(65));
    await page.getByRole('button', { name: 'Create offer' }).click();
    expect(await fieldError(page, 'Transaction code')).toMatch(/64/);
    await page.getByLabel('Transaction code', { exact: true }).fill('');

    // Two configurations, the authorization code flow, for the DC API, the offer's webhook endpoint.
    await page.getByRole('group', { name: 'Credential configurations' }).getByLabel('email').check();
    await page.getByLabel('Flow', { exact: true }).selectOption('authorization_code');
    await page.getByLabel('Delivery', { exact: true }).selectOption('dc-api');
    await page.getByLabel('Webhook endpoint', { exact: true }).fill('notify');
    expect(await body(page)).toMatchObject({
      response_type: 'dc-api',
      flow: 'authorization_code',
      credentialConfigurationIds: ['pid', 'email'],
      webhookEndpointId: 'notify',
    });
    await page.getByRole('button', { name: 'Create offer' }).click();
    const dcApi = page.getByTestId('dc-api-request');
    await dcApi.waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(JSON.parse((await dcApi.textContent()) as string)).toMatchObject({
      protocol: 'openid4vci-v1',
      data: { credential_configuration_ids: ['pid', 'email'], grants: { authorization_code: expect.any(Object) } },
    });
    await screenshot(page, 'flows-offer-dc-api');
    const second = await getSession((await page.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).textContent()) as string);
    expect(second).toMatchObject({ credentialConfigurationIds: ['pid', 'email'], webhookEndpointId: 'notify' });
    expect(errors).toEqual([]);
    await close();
  }, 60_000);

  it('makes presentation requests: the template unedited, the verifier options, transaction data, the DC API with its origin, Annex C', async () => {
    const { page, errors, close } = await newPage();
    await logInToConsole(page, svc.url, admin.clientId, admin.secret);
    await visit(page, 'presentations', 'Request a presentation');

    await page.getByRole('button', { name: 'Create request' }).click();
    expect(await page.getByTestId('request-uri').textContent()).toMatch(/^openid4vp:\/\//);
    expect(await page.getByRole('alert').count()).toBe(0);

    // Unencrypted responses, the request fetched by POST, transaction data of this request.
    await page.getByLabel('Response mode', { exact: true }).selectOption('direct_post');
    await page.getByLabel('Request URI method', { exact: true }).selectOption('post');
    const transaction = { type: 'payment', credential_ids: ['pid'], amount: '42 EUR' };
    await page.getByLabel('Transaction data', { exact: true }).fill(JSON.stringify([transaction]));
    await page.getByRole('button', { name: 'Create request' }).click();
    await expect.poll(() => page.getByTestId('request-uri').textContent()).toContain('request_uri_method=post');
    const resolved = await resolveRequest((await page.getByTestId('request-uri').textContent()) as string);
    expect(resolved.responseMode).toBe('direct_post');
    expect(resolved.transactionData.map((t) => JSON.parse(Buffer.from(String(t), 'base64url').toString()))).toEqual([transaction]);

    // The DC API needs the page's origin: refused on the field without it, then made.
    await page.getByRole('button', { name: 'Reset to template' }).click();
    await page.getByLabel('Delivery', { exact: true }).selectOption('dc-api');
    await page.getByRole('button', { name: 'Create request' }).click();
    expect(await fieldError(page, 'Expected origin')).toMatch(/origin|required/i);
    await screenshot(page, 'flows-request-field-error');
    await page.getByLabel('Expected origin', { exact: true }).fill('https://shop.example.com');
    await page.getByRole('button', { name: 'Create request' }).click();
    // The refusal's box goes once the request is made.
    await page.getByRole('alert').waitFor({ state: 'detached' });
    const dcApi = page.getByTestId('dc-api-request');
    await dcApi.waitFor();
    expect(JSON.parse((await dcApi.textContent()) as string).protocol).toBe('openid4vp-v1-signed');

    // ISO/IEC 18013-7 Annex C, for an mdoc configuration.
    await page.getByLabel('Presentation configuration', { exact: true }).selectOption('mdl-check');
    await page.getByLabel('Delivery', { exact: true }).selectOption('iso-18013-7');
    await page.getByRole('button', { name: 'Create request' }).click();
    await expect.poll(async () => JSON.parse((await dcApi.textContent()) as string).protocol).toBe('org-iso-mdoc');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByTestId('request-uri').count()).toBe(0);
    expect(errors).toEqual([]);
    await close();
  }, 60_000);

  it('completes a deferred credential with claims after a confirmation, and the wallet receives it', async () => {
    const { session, transactionId, wallet } = await deferredSession();
    const { page, errors, close } = await newPage();
    await logInToConsole(page, svc.url, admin.clientId, admin.secret);
    await visit(page, `sessions/${session}`, `Session ${session}`);
    const deferred = page.getByRole('region', { name: 'deferred credentials' });
    await deferred.getByText(transactionId).waitFor();
    expect(await deferred.getByTestId('transaction-state').textContent()).toBe('pending');
    await screenshot(page, 'flows-deferred-pending');

    // Cancel changes nothing; then the template's claims, unedited.
    await deferred.getByRole('button', { name: 'Complete', exact: true }).click();
    await answer(page, 'Cancel');
    expect(await deferred.getByTestId('transaction-state').textContent()).toBe('pending');
    await deferred.getByRole('button', { name: 'Complete', exact: true }).click();
    await answer(page, 'Complete');
    await deferred.getByRole('status').filter({ hasText: 'Completed' }).waitFor();
    await expect.poll(() => deferred.getByTestId('transaction-state').textContent()).toBe('ready');
    expect(await deferred.getByRole('button', { name: 'Complete', exact: true }).count()).toBe(0);

    const delivered = await wallet.client.retrieveDeferredCredentials({
      issuerMetadata: wallet.issuerMetadata,
      accessToken: wallet.token.accessTokenResponse.access_token,
      transactionId,
    });
    const credential = ((delivered.deferredCredentialResponse.credentials ?? [])[0] as { credential: string }).credential;
    expect(credential).toEqual(expect.any(String));
    await page.reload();
    await expect.poll(() => deferred.getByTestId('transaction-state').textContent(), { timeout: 10_000 }).toBe('retrieved');
    expect(errors).toEqual([]);
    await close();
  }, 60_000);

  it("shows the API's refusal of the claims on the field, and fails a deferred credential after a confirmation", async () => {
    const { session, transactionId } = await deferredSession();
    const { page, errors, close } = await newPage(PHONE);
    await logInToConsole(page, svc.url, admin.clientId, admin.secret);
    await visit(page, `sessions/${session}`, `Session ${session}`);
    const deferred = page.getByRole('region', { name: 'deferred credentials' });
    await deferred.getByText(transactionId).waitFor();
    await page.getByLabel('Claims', { exact: true }).fill('["not", "an object"]');
    await deferred.getByRole('button', { name: 'Complete', exact: true }).click();
    await answer(page, 'Complete');
    expect(await fieldError(page, 'Claims')).toMatch(/expected record/);
    await expectNoSidewaysScroll(page);

    await deferred.getByRole('button', { name: 'Fail', exact: true }).click();
    await answer(page, 'Fail');
    await expect.poll(() => deferred.getByTestId('transaction-state').textContent()).toBe('failed');
    expect((await getSession(session)).status).toBe('failed');
    expect(errors).toEqual([]);
    await close();
  }, 60_000);

  it('deletes a session after a confirmation', async () => {
    const offer = await svc.call('POST', '/api/issuer/offer', {
      token: admin.token,
      body: { response_type: 'uri', flow: 'pre_authorized_code', credentialConfigurationIds: ['email'] },
    });
    expect(offer.status, offer.text).toBe(201);
    const { page, errors, close } = await newPage();
    await logInToConsole(page, svc.url, admin.clientId, admin.secret);
    await visit(page, `sessions/${offer.body.session}`, `Session ${offer.body.session}`);
    await page.getByRole('button', { name: 'Delete session' }).click();
    await answer(page, 'Cancel');
    await getSession(offer.body.session);
    await page.getByRole('button', { name: 'Delete session' }).click();
    await answer(page, 'Delete session');
    await page.getByRole('heading', { name: 'Session deleted' }).waitFor();
    const gone = await svc.call('GET', `/api/session/${offer.body.session}`, { token: admin.token });
    expect(gone.status).toBe(404);
    expect(errors).toEqual([]);
    await close();
  }, 60_000);

  it('withholds the claims of a presentation answered through a redirect, saying how they are released', async () => {
    const offer = await svc.call('POST', '/api/verifier/offer', {
      token: admin.token,
      body: { response_type: 'uri', requestId: 'pid-check' },
    });
    expect(offer.status, offer.text).toBe(201);
    // As the response endpoint completes a session with a redirect (test/verification/response-code.test.ts answers one for real).
    const sessions = svc.running.services.sessions;
    const claims = { given_name: 'Withheld-Erika' };
    const done = await sessions.update('flows', offer.body.session, {
      status: 'completed',
      consumed: true,
      public: { responseCodeRequired: true },
      private: { credentials: [{ queryId: 'pid', format: 'dc+sd-jwt', claims }] },
    });
    expect(done?.status).toBe('completed');
    const { page, errors, close } = await newPage();
    await logInToConsole(page, svc.url, admin.clientId, admin.secret);
    await visit(page, `sessions/${offer.body.session}`, `Session ${offer.body.session}`);
    await page.getByText('released only with its response_code').waitFor();
    expect(await page.getByText('not released yet').count()).toBe(1);
    expect(await page.getByRole('region', { name: 'verified claims' }).count()).toBe(0);
    expect(await page.content()).not.toContain('Withheld-Erika');
    expect(errors).toEqual([]);
    await close();
  }, 60_000);

  it('keeps the offer and request forms within a phone screen (375 px)', async () => {
    const { page, errors, close } = await newPage(PHONE);
    await logInToConsole(page, svc.url, admin.clientId, admin.secret);
    await visit(page, 'offers', 'Issue a credential');
    await page.getByRole('button', { name: 'Create offer' }).waitFor();
    await expectNoSidewaysScroll(page);
    await page.getByLabel('Delivery', { exact: true }).selectOption('dc-api');
    await page.getByRole('button', { name: 'Create offer' }).click();
    await page.getByTestId('dc-api-request').waitFor();
    await expectNoSidewaysScroll(page);
    await visit(page, 'presentations', 'Request a presentation');
    await page.getByRole('button', { name: 'Create request' }).waitFor();
    await expectNoSidewaysScroll(page);
    await page.getByLabel('Delivery', { exact: true }).selectOption('dc-api');
    await page.getByLabel('Expected origin', { exact: true }).fill('https://shop.example.com');
    await page.getByRole('button', { name: 'Create request' }).click();
    await page.getByTestId('dc-api-request').waitFor();
    await expectNoSidewaysScroll(page);
    await screenshot(page, 'flows-request-phone');
    expect(errors).toEqual([]);
    await close();
  }, 60_000);

  it('shows each flow action only to a client holding its role', async () => {
    const managers = await svc.call('POST', '/api/client', {
      token: admin.token,
      body: { clientId: 'flows-managers', roles: ['issuance:manage', 'presentation:manage'] },
    });
    const offerer = await svc.call('POST', '/api/client', {
      token: admin.token,
      body: { clientId: 'flows-offers', roles: ['issuance:offer'] },
    });
    expect([managers.status, offerer.status]).toEqual([201, 201]);
    const { page, close } = await newPage();

    // Managing is not offering or requesting: no Issue, no Verify, and their routes open another page.
    await logInToConsole(page, svc.url, 'flows-managers', managers.body.secret);
    const links = await page.getByRole('navigation', { name: 'sections' }).getByRole('link').allTextContents();
    expect(links).toContain('Sessions');
    expect(links).not.toContain('Issue');
    expect(links).not.toContain('Verify');
    for (const route of ['offers', 'presentations']) {
      await page.goto(`${svc.url}/console#/${route}`);
      await page.getByRole('heading', { level: 2 }).first().waitFor();
      expect(await page.getByRole('button', { name: /Create offer|Create request/ }).count()).toBe(0);
    }
    await page.getByRole('button', { name: 'Log out' }).click();

    // An offerer sees a session waiting for its claims, but neither completes nor fails it, nor deletes the session.
    const { session, transactionId } = await deferredSession();
    await logInToConsole(page, svc.url, 'flows-offers', offerer.body.secret);
    await visit(page, `sessions/${session}`, `Session ${session}`);
    await page.getByRole('button', { name: 'Show log' }).click();
    await page.getByRole('cell', { name: 'credential deferred' }).waitFor();
    expect(await page.getByRole('region', { name: 'deferred credentials' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^(Complete|Fail|Delete session)$/ }).count()).toBe(0);
    await page.getByRole('button', { name: 'Log out' }).click();

    // The admin sees them.
    await logInToConsole(page, svc.url, admin.clientId, admin.secret);
    await visit(page, `sessions/${session}`, `Session ${session}`);
    await page.getByRole('region', { name: 'deferred credentials' }).getByText(transactionId).waitFor();
    expect(await page.getByRole('button', { name: /^(Complete|Fail|Delete session)$/ }).count()).toBe(3);
    await close();
  }, 60_000);
});
