// Issuance over the W3C Digital Credentials API: an offer with response_type dc-api carries the
// request navigator.credentials.create takes (protocol openid4vci-v1, the offer by value). The
// example page of docs/examples runs in Chromium with a stubbed navigator.credentials, and what it
// hands the browser is redeemed by the @openid4vc/openid4vci wallet client.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, launchBrowser } from '../support/browser.js';
import { fieldsOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';
import { receiveCredentials, walletClient } from '../support/wallet.js';

const PAGE = readFileSync(new URL('../../docs/examples/dc-api-issuance.html', import.meta.url), 'utf8');
const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt' },
  vct: 'urn:eudi:pid:1',
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['family_name'], type: 'string', mandatory: true },
  ],
};
const CLAIMS = { pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann' } } };

let svc: TestService;
let admin: string;

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  expect((await svc.raw('POST', '/api/issuer/credentials', { token: admin, body: PID })).status).toBe(201);
});
afterAll(() => svc.stop());

const dcApiOffer = () =>
  svc.raw('POST', '/api/issuer/offer', {
    token: admin,
    body: { response_type: 'dc-api', flow: 'pre_authorized_code', credentialConfigurationIds: ['pid'], credentialClaims: CLAIMS },
  });
const byValue = (offer: unknown) => `openid-credential-offer://?credential_offer=${encodeURIComponent(JSON.stringify(offer))}`;

describe('offers over the Digital Credentials API', () => {
  it('carry the openid4vci-v1 request with the offer by value, which a wallet library accepts and redeems', async () => {
    const reply = await dcApiOffer();
    expect(reply.status, reply.text).toBe(201);
    const { dcApiRequest, credentialOffer } = reply.body;
    expect(dcApiRequest).toEqual({ protocol: 'openid4vci-v1', data: credentialOffer });
    // The wallet library's own schema check of a credential offer.
    const parsed = await walletClient([]).resolveCredentialOffer(byValue(dcApiRequest.data));
    expect(parsed.credential_issuer).toBe(`${svc.url}/issuers/acme`);
    const { response } = await receiveCredentials(byValue(dcApiRequest.data));
    expect(response.credentialResponse.credentials).toHaveLength(1);
    expect((await svc.call('GET', `/api/session/${reply.body.session}`, { token: admin })).body.status).toBe('completed');
  });

  it('are refused for response_type iso-18013-7, a presentation flow', async () => {
    const reply = await svc.raw('POST', '/api/issuer/offer', {
      token: admin,
      body: { response_type: 'iso-18013-7', flow: 'pre_authorized_code', credentialConfigurationIds: ['pid'], credentialClaims: CLAIMS },
    });
    expect(reply.status).toBe(400);
    expect(fieldsOf(reply)).toEqual(['body.response_type']);
  });
});

describe.skipIf(!browserAvailable)('the example integrator page', () => {
  let browser: Browser;
  let page: Server;
  let pageUrl: string;

  beforeAll(async () => {
    browser = await launchBrowser();
    // The integrator's backend: serves the page, and asks svc for an offer when the page wants one.
    page = createServer(async (req, res) => {
      if (req.method === 'POST' && req.url === '/offer') {
        const reply = await dcApiOffer();
        res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.text);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => page?.close(resolve));
  });

  it('passes the offer to navigator.credentials.create, and the wallet that gets it receives the credential', async () => {
    const tab = await browser.newPage();
    // The browser's DC API, stubbed: it records what the page asks for, as a wallet would receive it.
    await tab.addInitScript(() => {
      const w = window as unknown as { DigitalCredential: unknown; captured: unknown[] };
      w.captured = [];
      w.DigitalCredential = class {};
      Object.defineProperty(navigator, 'credentials', {
        value: {
          create: async (options: { digital: { requests: { protocol: string }[] } }) => {
            w.captured.push(options);
            return { protocol: options.digital.requests[0]?.protocol, data: {} };
          },
        },
      });
    });
    await tab.goto(pageUrl);
    await tab.getByRole('button', { name: 'Add to wallet' }).click();
    await tab.getByRole('status').filter({ hasText: 'Offered to your wallet.' }).waitFor();
    const [options] = (await tab.evaluate(() => (window as unknown as { captured: unknown[] }).captured)) as {
      digital: { requests: { protocol: string; data: { credential_issuer: string } }[] };
    }[];
    const [request] = options?.digital.requests ?? [];
    expect(request?.protocol).toBe('openid4vci-v1');
    expect(request?.data.credential_issuer).toBe(`${svc.url}/issuers/acme`);
    const { response } = await receiveCredentials(byValue(request?.data));
    expect(response.credentialResponse.credentials).toHaveLength(1);
    await tab.close();
  });

  it('shows the offer URI where the browser has no Digital Credentials API', async () => {
    const tab = await browser.newPage();
    // Chromium may ship the API (behind a user's wallet); this page sees a browser without it.
    await tab.addInitScript(() => {
      delete (window as unknown as { DigitalCredential?: unknown }).DigitalCredential;
    });
    await tab.goto(pageUrl);
    await tab.getByRole('button', { name: 'Add to wallet' }).click();
    const link = tab.getByRole('link', { name: 'Open in your wallet' });
    await link.waitFor();
    expect(await link.getAttribute('href')).toMatch(/^openid-credential-offer:\/\/\?credential_offer_uri=/);
    await tab.close();
  });
});
