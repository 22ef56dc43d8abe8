// The compatibility locations of the issuer's metadata: the well-known suffix appended to the issuer
// identifier (`{issuer}/.well-known/...`, where draft-era clients look) next to the OpenID4VCI 1.0 /
// RFC 8414 location (`/.well-known/.../issuers/{tenant}`). Same document, same headers, same freshness.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let admin: string;

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  const created = await svc.raw('POST', '/api/issuer/credentials', {
    token: admin,
    body: { id: 'pid', config: { format: 'dc+sd-jwt' }, vct: 'urn:eudi:pid:1', fields: [{ path: ['given_name'], type: 'string' }] },
  });
  expect(created.status, created.text).toBe(201);
});
afterAll(() => svc.stop());

const SUFFIXES = ['openid-credential-issuer', 'oauth-authorization-server'];
const both = (suffix: string, tenant = 'acme') =>
  Promise.all([svc.raw('GET', `/.well-known/${suffix}/issuers/${tenant}`), svc.raw('GET', `/issuers/${tenant}/.well-known/${suffix}`)]);

describe('metadata at the compatibility locations', () => {
  for (const suffix of SUFFIXES) {
    it(`serves ${suffix} under the issuer identifier as at the 1.0 location`, async () => {
      const [primary, compat] = await both(suffix);
      expect(primary.status, primary.text).toBe(200);
      expect(compat.status, compat.text).toBe(200);
      expect(compat.body).toEqual(primary.body);
      for (const header of ['content-type', 'cache-control', 'etag'])
        expect([header, compat.headers.get(header)]).toEqual([header, primary.headers.get(header)]);
    });

    it(`answers ${suffix} of an unknown issuer with the same 404 at both locations`, async () => {
      const [primary, compat] = await both(suffix, 'nobody');
      expect([primary.status, compat.status]).toEqual([404, 404]);
      expect(compat.body).toEqual({ error: 'invalid_request', error_description: "no credential issuer 'nobody'" });
      expect(compat.body).toEqual(primary.body);
    });
  }

  it('shows a settings change at both locations at once', async () => {
    const display = [{ name: 'ACME Issuer', locale: 'en' }];
    const put = await svc.raw('PUT', '/api/issuer/config', { token: admin, body: { display, dpopRequired: true } });
    expect(put.status, put.text).toBe(200);
    const [primary, compat] = await both('openid-credential-issuer');
    expect(primary.body.display).toEqual(display);
    expect(compat.body.display).toEqual(display);
    const [asPrimary, asCompat] = await both('oauth-authorization-server');
    expect(asPrimary.body.dpop_bound_access_tokens_required).toBe(true);
    expect(asCompat.body.dpop_bound_access_tokens_required).toBe(true);
  });

  it('serves no openid-configuration: svc is an OAuth authorization server, not an OpenID Provider', async () => {
    for (const path of ['/issuers/acme/.well-known/openid-configuration', '/.well-known/openid-configuration/issuers/acme'])
      expect((await svc.raw('GET', path)).status).toBe(404);
  });

  it('documents the compatibility locations in the OpenAPI document', async () => {
    const paths = (await svc.raw('GET', '/api/openapi.json')).body.paths as Record<string, { get?: { summary?: string } }>;
    for (const suffix of SUFFIXES)
      expect(paths[`/issuers/{tenantId}/.well-known/${suffix}`]?.get?.summary).toMatch(/compatibility location/);
  });
});
