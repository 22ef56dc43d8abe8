// The console as an operator's daily tool (issue 43), in a real browser: the sessions list filtered
// (kind, status, configuration, dates, id) with the filters in the address, checked row for row
// against the API; a presentation's verified claims as a table; an issued credential suspended and
// reinstated through its buttons; a failed webhook delivery retried from the session page; the
// detail pages of a credential configuration and a key chain, by address and from the lists, refused
// to a client without the role; axe without serious findings at 1280 and 375 px.
import 'reflect-metadata';
import { X509Certificate } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserAvailable,
  DESKTOP,
  logInToConsole,
  openPage as openConsolePage,
  PHONE,
  screenshot,
  seriousViolations,
  startConsole,
  stopConsole,
  visit as visitConsole,
} from '../support/browser.js';
import { PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import type { TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';
import { fetchedOffer, type Receiver, startReceiver, webhookEndpoint } from '../webhooks/support.js';

let svc: TestService;
let browser: Browser;
let receiver: Receiver;
let tenant: { token: string; clientId: string; secret: string };
/** Sessions made in beforeAll: an issued credential with a status, a verified presentation, one whose webhook failed. */
let issuedSession: string;
let presentationSession: string;
let hookSession: string;

beforeAll(async () => {
  if (!browserAvailable) return;
  // Webhooks retried fast, and given up after a second: a receiver answering 500 soon has a failed delivery.
  ({ svc, browser } = await startConsole({
    WEBHOOK_RETRY_DELAYS_MS: '50,100',
    WEBHOOK_POLL_INTERVAL_MS: '100',
    WEBHOOK_RETRY_HORIZON_SECONDS: '1',
  }));
  receiver = await startReceiver();
  receiver.answer = 500;
  tenant = await svc.tenant('ops');
  const { token } = tenant;
  // Two bits per status entry, so that a credential can be suspended as well as revoked.
  expect((await svc.call('PUT', '/api/status-list-config', { token, body: { bits: 2 } })).status).toBe(200);
  const pid = await svc.call('POST', '/api/issuer/credentials', { token, body: { ...PID, statusManagement: true } });
  expect(pid.status, pid.text).toBe(201);
  const trust = await svc.call('POST', '/api/trust-list', {
    token,
    body: {
      id: 'issuers',
      entities: [
        { type: 'internal', keyChainId: 'default-attestation' },
        { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
      ],
    },
  });
  expect(trust.status, trust.text).toBe(201);
  const adult = await svc.call('POST', '/api/verifier/config', { token, body: { id: 'adult', dcql_query: PID_ADULT_QUERY } });
  expect(adult.status, adult.text).toBe(201);

  const issued = await issueCredential(svc, token, 'pid', { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true });
  issuedSession = issued.session as string;
  // A presentation answered by a wallet holding that credential.
  const request = await svc.call('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId: 'adult' } });
  expect(request.status, request.text).toBe(201);
  presentationSession = request.body.session as string;
  const resolved = await resolveRequest(request.body.uri as string);
  const presented = await presentSdJwt(issued.credential, issued.holder, resolved, ['given_name', 'age_over_18']);
  const answered = await submit(resolved, { pid: [presented] });
  expect(answered.status, JSON.stringify(answered.body)).toBe(200);
  // An offer whose webhook endpoint answers 500: its delivery fails.
  await webhookEndpoint(svc, token, 'crm', receiver.url);
  hookSession = await fetchedOffer(svc, token, 'ops', 'crm');
}, 180_000);
afterAll(async () => {
  await receiver?.close();
  await stopConsole(svc, browser);
});

async function deliveriesOf(sessionId: string) {
  const reply = await svc.raw('GET', `/api/webhook-deliveries?sessionId=${sessionId}`, { token: tenant.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.items as { state: string }[];
}

/** A page in its own context (CSP bypassed for axe), logged in as the tenant's admin, with its errors collected. */
async function openPage(viewport = DESKTOP, login: { clientId: string; secret: string } = tenant) {
  const opened = await openConsolePage(browser, { bypassCSP: true, viewport });
  await logInToConsole(opened.page, svc.url, login.clientId, login.secret);
  return opened;
}

const visit = (page: Page, address: string, heading: string | RegExp) => visitConsole(page, svc.url, address, heading);

/** Answers the confirmation dialog with `choice`. */
async function answer(page: Page, choice: string) {
  const dialog = page.getByRole('dialog', { name: 'Confirm' });
  await dialog.waitFor();
  await dialog.getByRole('button', { name: choice, exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
}

/** The session ids the list shows, once it shows `count` rows. */
async function listedIds(page: Page, count: number) {
  const links = page.getByRole('region', { name: 'sessions', exact: true }).getByRole('link', { name: /^[0-9a-f-]{36}$/ });
  await expect.poll(() => links.count(), { timeout: 5000 }).toBe(count);
  return links.allTextContents();
}

/** The ids the API lists for `query`, newest first. */
async function apiIds(query: Record<string, string>) {
  const reply = await svc.raw('GET', `/api/session?${new URLSearchParams(query)}`, { token: tenant.token });
  expect(reply.status, reply.text).toBe(200);
  return (reply.body.items as { id: string }[]).map((s) => s.id);
}

const states = async (sessionId: string) => {
  const reply = await svc.call('GET', `/api/session/${sessionId}/credentials`, { token: tenant.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.map((c) => c.state);
};

describe.skipIf(!browserAvailable)('web console: sessions and detail pages', () => {
  it('filters the sessions list by kind, status, configuration and date, keeps the filters in the address, and finds by id', async () => {
    const { page, errors, close } = await openPage();
    try {
      await visit(page, 'sessions', 'Sessions');
      expect(await listedIds(page, 3)).toEqual(await apiIds({}));

      await page.getByLabel('Kind').selectOption('issuance');
      await page.getByLabel('Status').selectOption('completed');
      await expect.poll(() => page.evaluate(() => location.hash)).toBe('#/sessions?kind=issuance&status=completed');
      expect(await listedIds(page, 1)).toEqual(await apiIds({ type: 'issuance', status: 'completed' }));
      expect(await listedIds(page, 1)).toEqual([issuedSession]);

      // The configuration: a presentation's, then the filtered view bookmarked and opened again.
      await page.getByLabel('Kind').selectOption('');
      await page.getByLabel('Status').selectOption('');
      await page.getByLabel('Configuration').fill('adult');
      await page.getByLabel('Configuration').press('Tab');
      await expect.poll(() => page.evaluate(() => location.hash)).toBe('#/sessions?configuration=adult');
      expect(await listedIds(page, 1)).toEqual([presentationSession]);
      expect(await apiIds({ configurationId: 'adult' })).toEqual([presentationSession]);
      await visit(page, 'sessions?configuration=pid', 'Sessions');
      const pidSessions = await apiIds({ configurationId: 'pid' });
      expect(pidSessions.sort()).toEqual([issuedSession, hookSession].sort());
      expect((await listedIds(page, 2)).sort()).toEqual(pidSessions.sort());
      expect(await page.getByLabel('Configuration').inputValue()).toBe('pid');

      // Dates: every session is from today; a range that ended yesterday has none.
      const today = new Date().toLocaleDateString('en-CA');
      await visit(page, `sessions?from=${today}&to=${today}`, 'Sessions');
      expect(await listedIds(page, 3)).toEqual(await apiIds({}));
      await visit(page, 'sessions?to=2020-01-01', 'Sessions');
      await page.getByText('No session matches.').waitFor();

      // Search: the start of an id lists the sessions it starts; a whole id opens its session.
      await visit(page, 'sessions', 'Sessions');
      const search = page.getByRole('form', { name: 'find a session' });
      await search.getByLabel('Session id').fill(presentationSession.slice(0, 8));
      await search.getByRole('button', { name: 'Find' }).click();
      await expect.poll(() => page.evaluate(() => location.hash)).toBe(`#/sessions?id=${presentationSession.slice(0, 8)}`);
      expect(await listedIds(page, (await apiIds({ idPrefix: presentationSession.slice(0, 8) })).length)).toContain(presentationSession);
      await search.getByLabel('Session id').fill(issuedSession);
      await search.getByRole('button', { name: 'Find' }).click();
      await page.getByRole('heading', { name: `Session ${issuedSession}`, level: 2 }).waitFor();

      // The columns an operator reads, with the configuration linked to its page.
      await visit(page, 'sessions?kind=issuance&status=completed', 'Sessions');
      expect(await listedIds(page, 1)).toEqual([issuedSession]);
      const row = page.getByRole('row').filter({ hasText: issuedSession });
      expect(await row.getByRole('cell').allTextContents()).toEqual([
        issuedSession,
        'issuance',
        'pid',
        'completed',
        expect.any(String),
        expect.any(String),
      ]);
      await row.getByRole('link', { name: 'pid', exact: true }).click();
      await page.getByRole('heading', { name: 'Credential configuration pid', level: 2 }).waitFor();
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 90_000);

  it("shows a presentation's verified claims as a table, the JSON one click away", async () => {
    const { page, errors, close } = await openPage();
    try {
      await visit(page, `sessions/${presentationSession}`, `Session ${presentationSession}`);
      const table = page.getByRole('region', { name: 'disclosed values' });
      await table.waitFor();
      const rows = await table.getByRole('row').allTextContents();
      expect(rows[0]).toBe('CredentialClaimValue');
      expect(rows.slice(1).sort()).toEqual(['pid (dc+sd-jwt)age_over_18true', 'pid (dc+sd-jwt)given_nameErika']);
      const stored = await svc.call('GET', `/api/session/${presentationSession}`, { token: tenant.token });
      expect(stored.body.credentials?.[0]).toMatchObject({ claims: { given_name: 'Erika', age_over_18: true } });
      await page.getByText('Verified credentials as JSON').click();
      expect(await page.getByRole('region', { name: 'presented credentials JSON' }).textContent()).toContain('"given_name": "Erika"');
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it('suspends and reinstates an issued credential through its buttons, offering only the actions of its state', async () => {
    const { page, errors, close } = await openPage();
    try {
      await visit(page, `sessions/${issuedSession}`, `Session ${issuedSession}`);
      const issued = page.getByRole('region', { name: 'issued credentials' });
      await issued.getByRole('cell', { name: 'valid', exact: true }).waitFor();
      const buttons = () => issued.getByRole('button').allTextContents();
      expect(await buttons()).toEqual(['Revoke pid', 'Suspend pid']);

      await issued.getByRole('button', { name: 'Suspend pid' }).click();
      await answer(page, 'Suspend');
      await issued.getByRole('cell', { name: 'suspended', exact: true }).waitFor();
      expect(await states(issuedSession)).toEqual(['suspended']);
      expect(await buttons()).toEqual(['Reinstate pid']);

      await issued.getByRole('button', { name: 'Reinstate pid' }).click();
      await answer(page, 'Reinstate');
      await issued.getByRole('cell', { name: 'valid', exact: true }).waitFor();
      expect(await states(issuedSession)).toEqual(['valid']);
      expect(await buttons()).toEqual(['Revoke pid', 'Suspend pid']);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it("retries a session's failed webhook delivery from the session page; the API shows it delivered", async () => {
    await expect.poll(async () => (await deliveriesOf(hookSession))[0]?.state, { timeout: 10_000 }).toBe('failed');
    const { page, errors, close } = await openPage();
    try {
      await visit(page, `sessions/${hookSession}`, `Session ${hookSession}`);
      const deliveries = page.getByRole('region', { name: 'webhook deliveries' });
      const row = deliveries.getByRole('row').filter({ hasText: 'issuance.status' });
      await row.getByRole('cell', { name: 'failed', exact: true }).waitFor();
      expect(await row.textContent()).toContain('500: answered 500');
      receiver.answer = 204;
      await row.getByRole('button', { name: 'Retry issuance.status to crm' }).click();
      await page.getByRole('status').filter({ hasText: 'queued again' }).waitFor();
      await expect.poll(async () => (await deliveriesOf(hookSession))[0]?.state, { timeout: 10_000 }).toBe('delivered');
      // The page, loaded again, shows what the API does.
      await page.reload();
      await deliveries.getByRole('cell', { name: 'delivered', exact: true }).waitFor();
      // A session without webhook events says so.
      await visit(page, `sessions/${presentationSession}`, `Session ${presentationSession}`);
      await deliveries.getByText('No webhook events for this session.').waitFor();
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it('opens a credential configuration by address and from its list: claims, key chain, metadata entry, recent sessions', async () => {
    const { page, errors, close } = await openPage();
    try {
      await visit(page, 'credential-configs', 'Credential configurations');
      await page.getByRole('link', { name: 'pid', exact: true }).click();
      await page.getByRole('heading', { name: 'Credential configuration pid', level: 2 }).waitFor();
      expect(await page.evaluate(() => location.hash)).toBe('#/credential-configs/pid');
      const claims = page.getByRole('region', { name: 'claim definitions' });
      expect(await claims.getByRole('row').allTextContents()).toEqual([
        'ClaimTypeMandatoryDisclosable',
        'given_namestringyesyes',
        'family_namestringyesyes',
        'age_over_18booleannoyes',
      ]);
      const facts = await page.locator('dl.facts').textContent();
      expect(facts).toContain('dc+sd-jwt');
      expect(facts).toContain('on: each credential gets a status list entry');
      // The metadata entry is the one wallets read.
      const metadata = (await (await fetch(`${svc.url}/issuers/ops/.well-known/openid-credential-issuer`)).json()) as {
        credential_configurations_supported: Record<string, { vct?: string }>;
      };
      await page.getByText('The entry in /.well-known/openid-credential-issuer').click();
      const shown = JSON.parse((await page.getByRole('region', { name: 'metadata entry JSON' }).textContent()) as string);
      expect(shown).toEqual(metadata.credential_configurations_supported.pid);
      // Recent sessions through the configuration filter, and the link to all of them.
      const recent = page.getByRole('region', { name: 'session list' }).getByRole('link');
      expect((await recent.allTextContents()).sort()).toEqual((await apiIds({ configurationId: 'pid' })).sort());
      await page.getByRole('link', { name: 'All sessions of pid' }).click();
      await page.getByRole('heading', { name: 'Sessions', level: 2 }).waitFor();
      expect(await page.getByLabel('Configuration').inputValue()).toBe('pid');
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it('opens a key chain by address and from its list: certificates with fingerprints, no default-only actions, rotation recorded', async () => {
    const { page, errors, close } = await openPage();
    try {
      await visit(page, 'key-chains', 'Key chains');
      await page.getByRole('link', { name: 'default-attestation', exact: true }).click();
      await page.getByRole('heading', { name: 'Key chain default-attestation', level: 2 }).waitFor();
      const chain = (await svc.call('GET', '/api/key-chain/default-attestation', { token: tenant.token })).body;
      const leaf = new X509Certificate(chain.activeCertificate);
      const certificates = page.getByRole('region', { name: 'certificate details' });
      await certificates.getByText(leaf.fingerprint256).waitFor();
      expect(await page.locator('dl.facts').textContent()).toContain(chain.kmsProvider);
      // The default chain: rotate only.
      const actions = page.locator('main > .row').last().getByRole('button');
      expect(await actions.allTextContents()).toEqual(['Rotate']);
      // It signs pid, which names no key chain of its own.
      await page.getByRole('region', { name: 'used by' }).getByRole('link', { name: 'pid' }).waitFor();

      await page.getByRole('button', { name: 'Rotate', exact: true }).click();
      await answer(page, 'Rotate');
      await page.getByRole('status').filter({ hasText: 'default-attestation rotated' }).waitFor();
      const rotated = (await svc.call('GET', '/api/key-chain/default-attestation', { token: tenant.token })).body;
      expect(rotated.activeCertificate).not.toBe(chain.activeCertificate);
      expect(rotated.lastRotatedAt).not.toBeNull();
      await certificates.getByText(new X509Certificate(rotated.activeCertificate).fingerprint256).waitFor();
      // The previous leaf stays listed while it is published, and the rotation is in the history.
      await certificates.getByText(leaf.fingerprint256).waitFor();
      // The history is read from the audit log after the chain: polled, as it may land a moment later.
      await expect.poll(() => page.getByRole('region', { name: 'rotation history' }).getByRole('row').count(), { timeout: 10_000 }).toBe(2);

      // A chain that is not the default offers make default and delete.
      const made = await svc.call('POST', '/api/key-chain', {
        token: tenant.token,
        body: { id: 'spare', usageType: 'attestation', type: 'internalChain' },
      });
      expect(made.status, made.text).toBe(201);
      await visit(page, 'key-chains/spare', 'Key chain spare');
      await page.getByRole('button', { name: 'Delete spare' }).waitFor();
      await page.getByRole('button', { name: 'Delete spare' }).click();
      await answer(page, 'Delete');
      await page.getByRole('heading', { name: 'Key chain deleted', level: 2 }).waitFor();
      expect((await svc.call('GET', '/api/key-chain/spare', { token: tenant.token })).status).toBe(404);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it('refuses the detail pages to a client without the role', async () => {
    const created = await svc.call('POST', '/api/client', {
      token: tenant.token,
      body: { clientId: 'ops-offers', roles: ['issuance:offer'] },
    });
    expect(created.status, created.text).toBe(201);
    const { page, close } = await openPage(DESKTOP, { clientId: 'ops-offers', secret: created.body.secret as string });
    try {
      for (const address of ['credential-configs/pid', 'key-chains/default-attestation']) {
        await visit(page, address, 'Not allowed for your roles');
        expect(await page.getByRole('main').textContent()).toContain('issuance:manage');
      }
      // Its sessions it may read, without the deliveries of the manage roles.
      await visit(page, `sessions/${hookSession}`, `Session ${hookSession}`);
      expect(await page.getByRole('region', { name: 'webhook deliveries' }).count()).toBe(0);
    } finally {
      await close();
    }
  }, 60_000);

  for (const [viewport, width] of [
    [DESKTOP, 'desktop'],
    [PHONE, 'phone'],
  ] as const) {
    it(`has no serious accessibility findings at ${viewport.width} px: filtered list, session, both detail pages`, async () => {
      const { page, close } = await openPage(viewport);
      try {
        const findings = [];
        await visit(page, 'sessions?kind=issuance&configuration=pid', 'Sessions');
        await listedIds(page, 2);
        if (width === 'desktop') await screenshot(page, 'sessions-filtered');
        findings.push(...(await seriousViolations(page, `sessions list ${width}`)));
        await visit(page, `sessions/${presentationSession}`, `Session ${presentationSession}`);
        await page.getByRole('region', { name: 'disclosed values' }).waitFor();
        await page.getByRole('region', { name: 'webhook deliveries' }).getByText('No webhook events').waitFor();
        if (width === 'desktop') await screenshot(page, 'session-claims-table');
        findings.push(...(await seriousViolations(page, `session ${width}`)));
        await visit(page, 'credential-configs/pid', 'Credential configuration pid');
        await page.getByRole('region', { name: 'claim definitions' }).waitFor();
        await page.getByRole('region', { name: 'session list' }).waitFor();
        findings.push(...(await seriousViolations(page, `credential configuration ${width}`)));
        await visit(page, 'key-chains/default-attestation', 'Key chain default-attestation');
        await page.locator('code.fingerprint').first().waitFor();
        await page.getByRole('region', { name: 'used by' }).waitFor();
        await screenshot(page, `key-chain-detail-${width}`);
        findings.push(...(await seriousViolations(page, `key chain ${width}`)));
        expect(findings).toEqual([]);
        // Nothing makes the page wider than the screen.
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
      } finally {
        await close();
      }
    }, 90_000);
  }
});
