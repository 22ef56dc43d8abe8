// Every URL the service hands to a wallet or a browser (redirects after a presentation, logos, the
// origins a page may call the Digital Credentials API from, pages and locations a trust list names)
// is a web URL: https, and http only outside production. Anything a browser would run or open
// otherwise (javascript:, data:, file:, custom schemes, user:password@ hosts) is refused with 400
// naming the field, and nothing is stored or started.
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/platform/db/schema.js';
import type { Reply } from '../support/http.js';
import { expectProblem, fieldsOf, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

interface Instance {
  svc: TestService;
  token: string;
}
let development: Instance;
let production: Instance;

const QUERY = {
  credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] }, claims: [{ path: ['given_name'] }] }],
};

async function instance(env: Record<string, string>): Promise<Instance> {
  const svc = await startService(env);
  const { token } = await svc.tenant('acme');
  const config = await svc.call('POST', '/api/verifier/config', { token, body: { id: 'adult', dcql_query: QUERY } });
  expect(config.status, config.text).toBe(201);
  return { svc, token };
}

beforeAll(async () => {
  [development, production] = await Promise.all([instance({}), instance({ NODE_ENV: 'production' })]);
});
afterAll(async () => {
  await Promise.all([development?.svc.stop(), production?.svc.stop()]);
});

/** Refused everywhere: what a browser would run, open elsewhere than the web, or send to a disguised host. */
const NOT_WEB = [
  'javascript:alert(document.cookie)',
  'JavaScript:alert(1)',
  'java\tscript:alert(1)', // a browser drops the tab
  ' javascript:alert(1)', // and the leading space
  'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  'vbscript:msgbox(1)',
  'file:///etc/passwd',
  'intent://scan/#Intent;scheme=zxing;end',
  'https://bank.example@evil.example/',
  '/relative/path',
];

interface UrlField {
  name: string;
  /** As the 400 names it. */
  field: string;
  /** Where a refused request must leave no trace. */
  table: keyof Database;
  /** Accepted: an https value everywhere, an http one outside production only. */
  https: string;
  http: string;
  send(at: Instance, url: string): Promise<Reply>;
}

let counter = 0;
const fresh = () => `u${++counter}`;
const call = (at: Instance, method: string, path: string, body: unknown) => at.svc.raw(method, path, { token: at.token, body });
const credentialConfig = (at: Instance, display: Record<string, unknown>, vct: unknown = 'urn:example:badge') =>
  call(at, 'POST', '/api/issuer/credentials', {
    id: fresh(),
    config: { format: 'dc+sd-jwt', display: [{ name: 'Badge', ...display }] },
    vct,
    fields: [],
  });
const trustList = (at: Instance, data: Record<string, unknown>) =>
  call(at, 'POST', '/api/trust-list', { id: fresh(), entities: [{ type: 'internal', keyChainId: 'default-attestation' }], data });

const FIELDS: UrlField[] = [
  {
    name: 'redirectUri of a presentation configuration',
    field: 'body.redirectUri',
    table: 'presentation_configs',
    https: 'https://rp.example.com/done/{sessionId}',
    http: 'http://localhost:3000/done?session={sessionId}',
    send: (at, redirectUri) => call(at, 'POST', '/api/verifier/config', { id: fresh(), dcql_query: QUERY, redirectUri }),
  },
  {
    name: 'redirectUri of a presentation request',
    field: 'body.redirectUri',
    table: 'sessions',
    https: 'https://rp.example.com/done/{sessionId}',
    http: 'http://localhost:3000/done/{sessionId}',
    send: (at, redirectUri) => call(at, 'POST', '/api/verifier/offer', { response_type: 'uri', requestId: 'adult', redirectUri }),
  },
  {
    name: 'expected_origin of a DC API request',
    field: 'body.expected_origin',
    table: 'sessions',
    https: 'https://shop.example.com:8443',
    http: 'http://localhost:3000',
    send: (at, expected_origin) =>
      call(at, 'POST', '/api/verifier/offer', { response_type: 'dc-api', requestId: 'adult', expected_origin }),
  },
  {
    name: 'the logo of a credential configuration',
    field: 'body.config.display.0.logo.uri',
    table: 'credential_configs',
    https: 'https://issuer.example.com/logo.png',
    http: 'http://localhost:3000/logo.png',
    send: (at, uri) => credentialConfig(at, { logo: { uri, alt_text: 'logo' } }),
  },
  {
    name: 'the background image of a credential configuration',
    field: 'body.config.display.0.background_image.uri',
    table: 'credential_configs',
    https: 'https://issuer.example.com/bg.png',
    http: 'http://localhost:3000/bg.png',
    send: (at, uri) => credentialConfig(at, { background_image: { uri } }),
  },
  {
    name: 'schema_uri of hosted SD-JWT VC type metadata',
    field: 'body.vct.schema_uri',
    table: 'credential_configs',
    https: 'https://issuer.example.com/badge.schema.json',
    http: 'http://localhost:3000/badge.schema.json',
    send: (at, schema_uri) => credentialConfig(at, {}, { name: 'Badge', schema_uri }),
  },
  {
    name: 'the logo in the issuer settings',
    field: 'body.display.0.logo.uri',
    table: 'issuer_settings',
    https: 'https://issuer.example.com/logo.png',
    http: 'http://localhost:3000/logo.png',
    send: (at, uri) => call(at, 'PUT', '/api/issuer/config', { display: [{ name: 'ACME', logo: { uri } }] }),
  },
  {
    name: 'an authorization server in the issuer settings',
    field: 'body.authorizationServers.0.issuer',
    table: 'issuer_settings',
    https: 'https://login.example.com',
    http: 'http://localhost:8080/realms/acme',
    send: (at, issuer) => call(at, 'PUT', '/api/issuer/config', { authorizationServers: [{ issuer }] }),
  },
  {
    name: 'SchemeInformationURI of a trust list',
    field: 'body.data.SchemeInformationURI.0.uriValue',
    table: 'trust_lists',
    https: 'https://trust.example.com/scheme',
    http: 'http://localhost:3000/scheme',
    send: (at, uriValue) => trustList(at, { SchemeInformationURI: [{ lang: 'en', uriValue }] }),
  },
  {
    name: 'DistributionPoints of a trust list',
    field: 'body.data.DistributionPoints.0',
    table: 'trust_lists',
    https: 'https://trust.example.com/list.jwt',
    http: 'http://localhost:3000/list.jwt',
    send: (at, point) => trustList(at, { DistributionPoints: [point] }),
  },
];

const rows = (db: Kysely<Database>, table: keyof Database) => db.selectFrom(table).selectAll().execute();

async function expectRefused(at: Instance, field: UrlField, url: string, message?: string) {
  const before = await rows(at.svc.db, field.table);
  const reply = await field.send(at, url);
  expectProblem(reply, 400);
  expect(fieldsOf(reply), `${JSON.stringify(url)}: ${reply.text}`).toEqual([field.field]);
  if (message) expect(reply.body.errors[0].message).toBe(message);
  expect(await rows(at.svc.db, field.table)).toEqual(before);
}

async function expectAccepted(at: Instance, field: UrlField, url: string) {
  const reply = await field.send(at, url);
  expect(reply.status, `${url}: ${reply.text}`).toBeLessThan(300);
}

describe.each(FIELDS)('$name', (field) => {
  it('refuses anything but a web URL, in development and in production', async () => {
    for (const at of [development, production]) {
      for (const url of NOT_WEB) await expectRefused(at, field, url);
    }
  });

  it('takes https everywhere, http outside production only', async () => {
    await expectAccepted(development, field, field.https);
    await expectAccepted(development, field, field.http);
    await expectAccepted(production, field, field.https);
    const kind = field.field.endsWith('origin') ? 'origin' : 'URL';
    await expectRefused(production, field, field.http, `must be an https ${kind}: http is accepted outside production only`);
  });
});

describe('the messages say what is refused', () => {
  const [configRedirect, offerRedirect, origin] = FIELDS as [UrlField, UrlField, UrlField];

  it('names the scheme', async () => {
    const reply = await offerRedirect.send(production, 'javascript:alert(document.cookie)');
    expect(problemOf(reply).errors).toEqual([{ field: 'body.redirectUri', message: 'must be an https URL; javascript: is refused' }]);
    const development_ = await offerRedirect.send(development, 'data:text/html,<script>alert(1)</script>');
    expect(problemOf(development_).errors).toEqual([
      { field: 'body.redirectUri', message: 'must be an http or https URL; data: is refused' },
    ]);
  });

  it('keeps {sessionId} the only placeholder', async () => {
    const reply = await configRedirect.send(development, 'https://rp.example.com/{state}');
    expect(problemOf(reply).errors).toEqual([
      { field: 'body.redirectUri', message: 'only the placeholder {sessionId} is replaced; {state} is not' },
    ]);
    expect((await configRedirect.send(development, 'javascript:{sessionId}')).status).toBe(400);
  });

  it('an origin is scheme, host and port only', async () => {
    const reply = await origin.send(production, 'https://shop.example.com/checkout');
    expect(problemOf(reply).errors).toEqual([
      { field: 'body.expected_origin', message: 'must be an origin (scheme, host and port only): did you mean https://shop.example.com?' },
    ]);
  });

  it('userinfo in a URL disguises the host', async () => {
    const reply = await configRedirect.send(production, 'https://bank.example@evil.example/');
    expect(reply.body.errors[0].message).toMatch(/^must not carry credentials/);
  });
});
