// Every entry point that reads a document from outside, given member names __proto__, constructor,
// prototype (and toString, an ordinary name that a plain object nonetheless inherits): a 4xx naming
// the member, never a 5xx; Object.prototype of the process (the server runs in it) unchanged; and
// another tenant still created, given a token and a trust list afterwards. OpenID Federation
// statements: test/federation/prototype-members.test.ts.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeFolders, writeFolder } from '../config-files/support.js';
import { MDL_ADULT_QUERY, PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import { resolveRequest } from '../support/presenter.js';
import { fieldsOf } from '../support/problems.js';
import { expectUnharmed, memberNamed, objectPrototypeSnapshot, REFUSED, RULE } from '../support/prototype-safety.js';
import { startService, type TestService } from '../support/service.js';
import { receiveCredentials } from '../support/wallet.js';

let svc: TestService;
let admin: string;
const before = objectPrototypeSnapshot();

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  const pid = await svc.call('POST', '/api/issuer/credentials', { token: admin, body: PID });
  expect(pid.status, pid.text).toBe(201);
  const adult = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id: 'adult', dcql_query: PID_ADULT_QUERY } });
  expect(adult.status, adult.text).toBe(201);
});
afterAll(async () => {
  await svc?.stop();
  removeFolders();
});

/** A JSON body as text, so that `__proto__` arrives as a member (an object literal would set the prototype instead). */
const text = (value: unknown) => JSON.stringify(value);
const withMeta = (name: string) => ({
  credentials: [{ ...PID_ADULT_QUERY.credentials[0], meta: { vct_values: ['urn:eudi:pid:1'], ...memberNamed(name, { polluted: true }) } }],
});

describe('management API bodies', () => {
  for (const name of REFUSED) {
    it(`a member named ${name} anywhere in a body is a 400 naming it`, async () => {
      const reply = await svc.raw('POST', '/api/verifier/config', {
        token: admin,
        body: text({ id: `meta-${name}`, dcql_query: withMeta(name) }),
      });
      expect(reply.status, reply.text).toBe(400);
      expect(reply.text).toContain(name);
      expect((await svc.raw('GET', `/api/verifier/config/meta-${name}`, { token: admin })).status).toBe(404);
      await expectUnharmed(svc, before);
    });
  }

  it('toString is an ordinary member name', async () => {
    const reply = await svc.raw('POST', '/api/verifier/config', {
      token: admin,
      body: text({ id: 'meta-toString', dcql_query: withMeta('toString') }),
    });
    expect(reply.status, reply.text).toBe(201);
    await expectUnharmed(svc, before);
  });
});

describe('names given as values that become member names', () => {
  for (const name of REFUSED) {
    it(`a DCQL claim path segment or credential query id ${name} is a 400 naming it`, async () => {
      const mdocQuery = { credentials: [{ ...MDL_ADULT_QUERY.credentials[0], claims: [{ path: [name, 'polluted'] }] }] };
      const path = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id: `path-${name}`, dcql_query: mdocQuery } });
      expect(path.status, path.text).toBe(400);
      expect(path.text).toContain(RULE);
      expect(fieldsOf(path)).toContain('body.dcql_query.credentials.0.claims.0.path.0');
      const idQuery = { credentials: [{ ...PID_ADULT_QUERY.credentials[0], id: name }] };
      const id = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id: `id-${name}`, dcql_query: idQuery } });
      expect(id.status, id.text).toBe(400);
      expect(fieldsOf(id)).toContain('body.dcql_query.credentials.0.id');
      await expectUnharmed(svc, before);
    });

    it(`a credential configuration field path ${name} is a 400 naming it`, async () => {
      const fields = [{ path: ['address', name, 'polluted'], type: 'string', defaultValue: 'x' }];
      const reply = await svc.raw('POST', '/api/issuer/credentials', { token: admin, body: { ...PID, id: `field-${name}`, fields } });
      expect(reply.status, reply.text).toBe(400);
      expect(reply.text, reply.text).toContain(RULE);
      expect(fieldsOf(reply)).toContain('body.fields.0.path.1');
      await expectUnharmed(svc, before);
    });
  }
});

describe('wallet-facing requests', () => {
  for (const name of REFUSED) {
    it(`a vp_token keyed ${name} is invalid_request naming it`, async () => {
      const offer = await svc.call('POST', '/api/verifier/offer', {
        token: admin,
        body: { response_type: 'uri', requestId: 'adult', responseMode: 'direct_post' },
      });
      expect(offer.status, offer.text).toBe(201);
      const resolved = await resolveRequest(offer.body.uri as string);
      const reply = await svc.raw('POST', new URL(resolved.responseUri).pathname, {
        form: { vp_token: text(memberNamed(name, ['x'])), state: resolved.payload.state as string },
      });
      expect(reply.status, reply.text).toBe(400);
      expect(reply.body.error).toBe('invalid_request');
      expect(reply.body.error_description).toContain(`vp_token.${name} ${RULE}`);
      await expectUnharmed(svc, before);
    });
  }

  it('a token request with a parameter named toString or constructor is answered, not a 500', async () => {
    for (const name of ['toString', 'constructor', '__proto__']) {
      const reply = await svc.raw('POST', '/api/oauth2/token', { form: { grant_type: 'client_credentials', [name]: 'x' } });
      expect(reply.status, reply.text).toBeLessThan(500);
    }
    await expectUnharmed(svc, before);
  });
});

describe('answers of other servers', () => {
  let provider: Server;
  let answer = '{}';
  beforeAll(async () => {
    provider = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(answer));
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    const made = await svc.call('POST', '/api/issuer/attribute-providers', {
      token: admin,
      body: {
        id: 'registry',
        name: 'Registry',
        url: `http://127.0.0.1:${(provider.address() as { port: number }).port}/claims`,
        auth: { type: 'none' },
      },
    });
    expect(made.status, made.text).toBe(201);
  });
  afterAll(() => new Promise<void>((resolve) => provider.close(() => resolve())));

  for (const name of REFUSED) {
    it(`an attribute provider answering claims with a member ${name} issues nothing and harms nothing`, async () => {
      answer = text({ claims: { given_name: 'Erika', family_name: 'Mustermann', ...memberNamed(name, { polluted: true }) } });
      const offer = await svc.raw('POST', '/api/issuer/offer', {
        token: admin,
        body: {
          response_type: 'uri',
          flow: 'pre_authorized_code',
          credentialConfigurationIds: ['pid'],
          credentialClaims: { pid: { type: 'attributeProvider', attributeProviderId: 'registry' } },
        },
      });
      expect(offer.status, offer.text).toBe(201);
      await expect(receiveCredentials(offer.body.uri)).rejects.toThrow();
      const logs = await svc.raw('GET', `/api/session/${offer.body.session}/logs`, { token: admin });
      expect(logs.text).toContain('attribute source failed');
      expect(logs.text).not.toContain('server_error');
      await expectUnharmed(svc, before);
    });
  }
});

describe('configuration files', () => {
  for (const name of REFUSED) {
    it(`a CONFIG_IMPORT file with a member ${name} stops start-up naming the file and the member`, async () => {
      const dir = writeFolder({
        [`imported-${name.replaceAll('_', '')}/tenant.json`]: `{"name": "Imported", "description": {${JSON.stringify(name)}: {"polluted": true}}}`,
      });
      const err = await startService({ CONFIG_IMPORT: dir }, { besides: svc }).then(
        async (instance) => {
          await instance.stop();
          return undefined;
        },
        (e: unknown) => e as Error,
      );
      expect(err?.message).toContain(`tenant.json: description.${name} ${RULE}`);
      await expectUnharmed(svc, before);
    });
  }
});
