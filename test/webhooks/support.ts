// What the webhook tests share: a receiver that records every request (raw body and headers), and
// an issuance tenant whose offers make webhook events when the wallet fetches them.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { expect } from 'vitest';
import { PID } from '../support/fixtures.js';
import type { TestService } from '../support/service.js';

export interface Hit {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  port: number;
  url: string;
  hits: Hit[];
  /** The status it answers with (204 unless set). */
  answer: number;
  close(): Promise<void>;
}

/** Listens on `port` (a free one when not given). */
export async function startReceiver(port = 0): Promise<Receiver> {
  const hits: Hit[] = [];
  const receiver: Receiver & { server?: Server } = {
    port,
    url: '',
    hits,
    answer: 204,
    close: async () => {},
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      hits.push({ headers: req.headers, body });
      res.writeHead(receiver.answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.port = (server.address() as { port: number }).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}

/** A tenant that can issue PID; its admin client and token. */
export async function issuingTenant(svc: TestService, id: string) {
  const admin = await svc.tenant(id);
  const created = await svc.raw('POST', '/api/issuer/credentials', { token: admin.token, body: PID });
  expect(created.status, created.text).toBe(201);
  return admin;
}

/** A webhook endpoint; returns its signing secret (answered this once). */
export async function webhookEndpoint(svc: TestService, token: string, id: string, url: string): Promise<string> {
  const made = await svc.call('POST', '/api/issuer/webhook-endpoints', {
    token,
    body: { id, name: id, url, auth: { type: 'header', header: { name: 'Authorization', value: 'Bearer hook' } } },
  });
  expect(made.status, made.text).toBe(201);
  expect(made.body.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
  return made.body.signingSecret as string;
}

/** An offer sent to `endpointId`, fetched by the wallet: one issuance.status event (active to fetched). Its session id. */
export async function fetchedOffer(svc: TestService, token: string, tenantId: string, endpointId: string): Promise<string> {
  const made = await svc.raw('POST', '/api/issuer/offer', {
    token,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: ['pid'],
      credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann' } } },
      webhookEndpointId: endpointId,
    },
  });
  expect(made.status, made.text).toBe(201);
  const offerUri = new URL(decodeURIComponent(String(made.body.uri).split('credential_offer_uri=')[1] ?? ''));
  const fetched = await svc.raw('GET', `/issuers/${tenantId}/credential-offer/${offerUri.pathname.split('/').pop()}`);
  expect(fetched.status, fetched.text).toBe(200);
  return made.body.session as string;
}

/** The headers a Standard Webhooks verifier reads, as strings. */
export const signedHeaders = (hit: Hit) => ({
  'webhook-id': String(hit.headers['webhook-id']),
  'webhook-timestamp': String(hit.headers['webhook-timestamp']),
  'webhook-signature': String(hit.headers['webhook-signature']),
});
