// Resolving another credential issuer's metadata for a verifier: fetched server-side from the
// OpenID4VCI 1.0 well-known location (the service's own issuer serves as the other issuer here),
// summarised as DCQL credential queries; refused addresses, unreachable issuers and garbage answers
// are clear 400s and 502s.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, fieldsOf, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let token: string;
let other: Server;
let otherUrl: string;
/** What the other server answers at any path: status and body. */
let answer: [number, string] = [200, '{}'];
const seen: string[] = [];

const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt' },
  vct: 'urn:eudi:pid:1',
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['address'], type: 'object', children: [{ path: ['street'], type: 'string' }] },
  ],
};

const resolve = (credentialIssuer: unknown, as = token) =>
  svc.raw('POST', '/api/verifier/config/issuer-metadata/resolve', { token: as, body: { credentialIssuer } });

beforeAll(async () => {
  svc = await startService();
  token = (await svc.tenant('verifier')).token;
  const issuer = (await svc.tenant('issuer')).token;
  const created = await svc.raw('POST', '/api/issuer/credentials', { token: issuer, body: PID });
  expect(created.status, created.text).toBe(201);
  other = createServer((req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(answer[0], { 'content-type': 'application/json' });
    res.end(answer[1]);
  });
  await new Promise<void>((done) => other.listen(0, '127.0.0.1', done));
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await svc.stop();
  await new Promise((done) => other.close(done));
});

describe('POST /api/verifier/config/issuer-metadata/resolve', () => {
  it("answers the issuer's metadata with a DCQL credential query per credential configuration", async () => {
    const credentialIssuer = `${svc.url}/issuers/issuer`;
    const reply = await resolve(credentialIssuer);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.metadata.credential_issuer).toBe(credentialIssuer);
    expect(reply.body.metadata.credential_configurations_supported.pid).toBeDefined();
    const claims = [{ path: ['given_name'] }, { path: ['address'] }, { path: ['address', 'street'] }];
    expect(reply.body.credentialConfigurations).toEqual([
      {
        id: 'pid',
        format: 'dc+sd-jwt',
        vct: 'urn:eudi:pid:1',
        claims,
        dcql: { id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] }, claims },
      },
    ]);
    // The query it builds is one a presentation configuration accepts.
    const saved = await svc.call('POST', '/api/verifier/config', {
      token,
      body: { id: 'from-issuer', dcql_query: { credentials: reply.body.credentialConfigurations.map((c: { dcql: unknown }) => c.dcql) } },
    });
    expect(saved.status, saved.text).toBe(201);
  });

  it('asks at the well-known location between host and path, and reads mdoc and draft-era claim descriptions', async () => {
    const credentialIssuer = `${otherUrl}/tenants/a/`;
    answer = [
      200,
      JSON.stringify({
        credential_issuer: credentialIssuer,
        credential_configurations_supported: {
          mdl: {
            format: 'mso_mdoc',
            doctype: 'org.iso.18013.5.1.mDL',
            claims: { 'org.iso.18013.5.1': { family_name: { mandatory: true }, portrait: {} } },
          },
          odd: 'not an object',
        },
      }),
    ];
    const reply = await resolve(credentialIssuer);
    expect(reply.status, reply.text).toBe(200);
    expect(seen.at(-1)).toBe('/.well-known/openid-credential-issuer/tenants/a');
    const claims = [{ path: ['org.iso.18013.5.1', 'family_name'] }, { path: ['org.iso.18013.5.1', 'portrait'] }];
    expect(reply.body.credentialConfigurations).toEqual([
      {
        id: 'mdl',
        format: 'mso_mdoc',
        doctype: 'org.iso.18013.5.1.mDL',
        claims,
        dcql: { id: 'mdl', format: 'mso_mdoc', meta: { doctype_value: 'org.iso.18013.5.1.mDL' }, claims },
      },
    ]);
  });

  it('answers 502 with the reason when the issuer answers garbage or cannot be reached', async () => {
    const credentialIssuer = `${otherUrl}/issuer`;
    for (const [reply, reason] of [
      [[500, '{}'], 'answered 500'],
      [[200, '<html>'], 'something other than JSON'],
      [[200, '[]'], 'not an object'],
      [
        [200, JSON.stringify({ credential_issuer: 'https://elsewhere.example.com' })],
        'names credential_issuer "https://elsewhere.example.com"',
      ],
      [[200, JSON.stringify({ credential_issuer: credentialIssuer })], 'no credential_configurations_supported'],
    ] as [[number, string], string][]) {
      answer = reply;
      const resolved = await resolve(credentialIssuer);
      expectProblem(resolved, 502);
      expect(problemOf(resolved).detail).toContain(reason);
    }
    const down = await resolve('http://127.0.0.1:9/issuer');
    expectProblem(down, 502);
    expect(problemOf(down).detail).toContain('could not be reached');
  });

  it('refuses what is not a credential issuer identifier, and addresses the outbound policy refuses, naming the field', async () => {
    for (const value of ['ftp://issuer.example.com', 'https://issuer.example.com/?tenant=a', 'not a url', 42]) {
      const reply = await resolve(value);
      expectProblem(reply, 400);
      expect(fieldsOf(reply)).toEqual(['body.credentialIssuer']);
    }
    const metadata = await resolve('http://169.254.169.254/latest');
    expectProblem(metadata, 400);
    expect(fieldsOf(metadata)).toEqual(['body.credentialIssuer']);
    expect(problemOf(metadata).detail).toContain('refused');
  });

  it('needs presentation:manage', async () => {
    const requester = await svc.client(token, 'requester', ['presentation:request']);
    expectProblem(await resolve(`${svc.url}/issuers/issuer`, requester), 403);
  });
});
