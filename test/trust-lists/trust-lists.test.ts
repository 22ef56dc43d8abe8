import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { decodeProtectedHeader, importX509, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldsOf, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

x509.cryptoProvider.set(crypto); // the global Web Crypto (node:crypto webcrypto)

let svc: TestService;
let acme: string;
let other: string;
let externalPem: string;
beforeAll(async () => {
  svc = await startService({ JOB_INTERVAL_SECONDS: '1' });
  acme = (await svc.tenant('acme')).token;
  other = (await svc.tenant('other')).token;
  externalPem = await selfSigned('CN=Outside Issuer CA');
});
afterAll(() => svc.stop());

async function selfSigned(name: string) {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({ name, keys, signingAlgorithm: alg });
  return cert.toString('pem');
}

const pemBlocks = (pem: string) => pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
const derOf = (pem: string) => Buffer.from(new x509.X509Certificate(pem).rawData).toString('base64');
const SVC = 'http://uri.etsi.org/19602/SvcType/EAA/';

async function create(token: string, body: Record<string, unknown>) {
  const reply = await svc.raw('POST', '/api/trust-list', { token, body });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

async function keyChain(id: string) {
  return (await svc.raw('GET', `/api/key-chain/${id}`, { token: acme })).body;
}

/** Verifies the JWS with jose against its own x5c leaf and returns header and payload. */
async function verify(jwt: string) {
  const header = decodeProtectedHeader(jwt);
  const leaf = `-----BEGIN CERTIFICATE-----\n${(header.x5c as string[])[0]}\n-----END CERTIFICATE-----`;
  const { payload } = await jwtVerify(jwt, await importX509(leaf, header.alg as string), { typ: 'trustlist+jwt' });
  return { header, payload: payload as any };
}

const ENTITIES = () => [
  { type: 'internal', keyChainId: 'default-attestation', name: 'Acme issuer' },
  { type: 'internal', keyChainId: 'default-statusList' },
  { type: 'external', name: 'Outside Issuer', certificates: [externalPem], serviceType: 'pidIssuance' },
];

describe('create and read', () => {
  it('generates a TS 119 602 list of trusted entities from internal and external entities', async () => {
    const list = await create(acme, { description: 'our issuers', entities: ENTITIES() });
    expect(list).toMatchObject({ tenantId: 'acme', description: 'our issuers', keyChainId: 'default-trustList', sequenceNumber: 1 });
    expect(list.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(list.entityConfig).toEqual(ENTITIES());
    const info = list.data.LoTE.ListAndSchemeInformation;
    expect(info).toMatchObject({
      LoTEVersionIdentifier: 1,
      LoTESequenceNumber: 1,
      LoTEType: 'http://uri.etsi.org/19602/LoTEType/EUEAAProvidersList',
      SchemeOperatorName: [{ lang: 'en', value: 'Tenant acme' }],
      DistributionPoints: [`${svc.url}/issuers/acme/trust-lists/${list.id}`],
    });
    expect(Date.parse(info.NextUpdate) - Date.parse(info.ListIssueDateTime)).toBe(24 * 3600_000);
    expect(info.ListIssueDateTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const [issuer, revocation, outside] = list.data.LoTE.TrustedEntitiesList;
    expect(issuer.TrustedEntityInformation).toEqual({
      TEName: [{ lang: 'en', value: 'Acme issuer' }],
      TEInformationURI: [{ lang: 'en', uriValue: `${svc.url}/issuers/acme` }],
    });
    expect(issuer.TrustedEntityServices[0].ServiceInformation.ServiceTypeIdentifier).toBe(`${SVC}Issuance`);
    expect(revocation.TrustedEntityServices[0].ServiceInformation.ServiceTypeIdentifier).toBe(`${SVC}Revocation`);
    expect(outside.TrustedEntityServices[0].ServiceInformation.ServiceTypeIdentifier).toBe(
      'http://uri.etsi.org/19602/SvcType/PID/Issuance',
    );
    expect(outside.TrustedEntityInformation.TEName).toEqual([{ lang: 'en', value: 'Outside Issuer' }]);

    // Internal entities carry their key chain's certificates: the root of an internal chain (every default one), the active one of a standalone chain.
    const certificates = (entity: any) => entity.TrustedEntityServices[0].ServiceInformation.ServiceDigitalIdentity.X509Certificates;
    expect(certificates(issuer)).toEqual([{ val: derOf((await keyChain('default-attestation')).rootCertificate) }]);
    expect(certificates(revocation)).toEqual([{ val: derOf((await keyChain('default-statusList')).rootCertificate) }]);
    expect(certificates(outside)).toEqual([{ val: derOf(externalPem) }]);

    expect((await svc.call('GET', `/api/trust-list/${list.id}`, { token: acme })).body).toEqual(list);
    const all = (await svc.call('GET', '/api/trust-list', { token: acme })).body;
    expect(all.map((l) => l.id)).toContain(list.id);
  });

  it('signs the list as a JWS that verifies with jose against the x5c chain the key chain publishes', async () => {
    const list = await create(acme, { id: 'signed', entities: ENTITIES() });
    const { header, payload } = await verify(list.jwt);
    expect(header).toMatchObject({ typ: 'trustlist+jwt', alg: 'ES256' });
    expect(payload.LoTE).toEqual(list.data.LoTE);
    expect(payload.exp * 1000).toBe(Date.parse(list.data.LoTE.ListAndSchemeInformation.NextUpdate));
    // The chain publishes leaf and root; x5c carries the leaf only, never the trust anchor (HAIP 1.0).
    const published = pemBlocks((await svc.call('GET', '/api/key-chain/default-trustList/certificate', { token: acme })).text);
    expect(published).toHaveLength(2);
    expect(header.x5c).toEqual([derOf(published[0] as string)]);
  });

  it('takes a named signing key chain and extra scheme information', async () => {
    await svc.call('POST', '/api/key-chain', { token: acme, body: { id: 'tl-second', usageType: 'trustList', type: 'internalChain' } });
    const list = await create(acme, {
      id: 'explicit',
      keyChainId: 'tl-second',
      data: { SchemeName: [{ lang: 'en', value: 'Acme partners' }], SchemeTerritory: 'DE', LoTEType: 'https://acme.example/lote' },
      entities: [],
    });
    expect(list.keyChainId).toBe('tl-second');
    expect(list.data.LoTE.ListAndSchemeInformation).toMatchObject({
      SchemeName: [{ lang: 'en', value: 'Acme partners' }],
      SchemeTerritory: 'DE',
      LoTEType: 'https://acme.example/lote',
    });
    // Clause 6.4.0: no entities, no TrustedEntitiesList.
    expect(list.data.LoTE.TrustedEntitiesList).toBeUndefined();
    const { header } = await verify(list.jwt);
    expect(header.x5c).toEqual([derOf((await keyChain('tl-second')).activeCertificate)]);
  });
});

describe('versions', () => {
  it('stores a new version per update, increments the sequence number and keeps old versions with their own JWS', async () => {
    const first = await create(acme, { id: 'versioned', entities: ENTITIES().slice(0, 1) });
    const updated = await svc.raw('PUT', '/api/trust-list/versioned', { token: acme, body: { description: 'v2', entities: ENTITIES() } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ sequenceNumber: 2, description: 'v2', keyChainId: 'default-trustList' });
    expect(updated.body.data.LoTE.ListAndSchemeInformation.LoTESequenceNumber).toBe(2);
    expect(updated.body.data.LoTE.TrustedEntitiesList).toHaveLength(3);
    expect(updated.body.jwt).not.toBe(first.jwt);

    const versions = (await svc.raw('GET', '/api/trust-list/versioned/versions', { token: acme })).body;
    expect(versions.map((v: any) => v.sequenceNumber)).toEqual([2, 1]);
    expect(versions[0]).toMatchObject({ trustListId: 'versioned', tenantId: 'acme', jwt: updated.body.jwt });
    const old = await svc.raw('GET', `/api/trust-list/versioned/versions/${versions[1].id}`, { token: acme });
    expect(old.status).toBe(200);
    expect(old.body).toMatchObject({ sequenceNumber: 1, jwt: first.jwt, entityConfig: ENTITIES().slice(0, 1), data: first.data });
    expect((await verify(old.body.jwt)).payload.LoTE.ListAndSchemeInformation.LoTESequenceNumber).toBe(1);

    const third = await svc.call('PUT', '/api/trust-list/versioned', { token: acme, body: { id: 'versioned', entities: [] } });
    expect(third.body.sequenceNumber).toBe(3);
    expect((await svc.call('GET', '/api/trust-list/versioned/versions/nope', { token: acme })).status).toBe(404);
  });

  it('exports the input, which recreates the list elsewhere and updates it in place', async () => {
    const body = {
      id: 'exported',
      description: 'round trip',
      data: { SchemeTerritory: 'FR' },
      entities: [
        { ...ENTITIES()[0], serviceType: 'issuance', information: { TETradeName: [{ lang: 'en', value: 'ACME' }] } },
        ...ENTITIES().slice(1),
      ],
    };
    const list = await create(acme, body);
    const exported = await svc.call('GET', '/api/trust-list/exported/export', { token: acme });
    expect(exported.status).toBe(200);
    expect(exported.body).toEqual({ ...body, keyChainId: 'default-trustList' });

    const copy = await create(acme, { ...exported.body, id: 'exported-copy' });
    const { DistributionPoints: _a, ListIssueDateTime: _b, NextUpdate: _c, ...copyInfo } = copy.data.LoTE.ListAndSchemeInformation;
    const { DistributionPoints: _d, ListIssueDateTime: _e, NextUpdate: _f, ...info } = list.data.LoTE.ListAndSchemeInformation;
    expect(copyInfo).toEqual(info);
    expect(copy.data.LoTE.TrustedEntitiesList).toEqual(list.data.LoTE.TrustedEntitiesList);
    expect(copy.data.LoTE.TrustedEntitiesList[0].TrustedEntityInformation.TETradeName).toEqual([{ lang: 'en', value: 'ACME' }]);

    const put = await svc.call('PUT', '/api/trust-list/exported', { token: acme, body: exported.body });
    expect(put.status, put.text).toBe(200);
    expect(put.body.sequenceNumber).toBe(2);
    expect((await svc.call('GET', '/api/trust-list/exported/export', { token: acme })).body).toEqual(exported.body);
  });
});

describe('validation', () => {
  it('rejects bad input with a 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ entities: [{ type: 'external', name: 'X', certificates: ['not a certificate'] }] }, 'body.entities.0.certificates.0'],
      [
        {
          entities: [
            { type: 'external', name: 'X', certificates: [externalPem] },
            { type: 'external', name: 'Y', certificates: [externalPem, externalPem.replace(/MI[A-Za-z]/, 'MIZ')] },
          ],
        },
        'body.entities.1.certificates.1',
      ],
      [{ entities: [{ type: 'external', name: 'X', certificates: [`${externalPem}\n${externalPem}`] }] }, 'body.entities.0.certificates.0'],
      [{ entities: [ENTITIES()[0], { type: 'internal', keyChainId: 'no-such-chain' }] }, 'body.entities.1.keyChainId'],
      [{ entities: [{ type: 'internal', keyChainId: 'default-encrypt' }] }, 'body.entities.0.keyChainId'],
      [{ entities: [{ type: 'internal' }] }, 'body.entities.0.keyChainId'],
      [{ entities: [{ type: 'external', certificates: [externalPem] }] }, 'body.entities.0.name'],
      [{ entities: [{ type: 'somewhere', name: 'X' }] }, 'body.entities.0.type'],
      [{ entities: [{ type: 'external', name: 'X', certificates: [externalPem], serviceType: 'mint' }] }, 'body.entities.0.serviceType'],
      [{ keyChainId: 'no-such-chain', entities: [] }, 'body.keyChainId'],
      [{ keyChainId: 'default-attestation', entities: [] }, 'body.keyChainId'],
      [{ data: { LoTESequenceNumber: 7 }, entities: [] }, 'body.data.LoTESequenceNumber'],
      [{ data: { SchemeTerritory: 'Germany' }, entities: [] }, 'body.data.SchemeTerritory'],
      [{ description: 'no entities' }, 'body.entities'],
      [{ entities: [], unknown: 1 }, 'body.unknown'],
    ];
    for (const [body, field] of cases) {
      const reply = await svc.raw('POST', '/api/trust-list', { token: acme, body });
      expect(reply.status, `${JSON.stringify(body)}: ${reply.text}`).toBe(400);
      expect(reply.headers.get('content-type')).toContain('application/problem+json');
      expect(fieldsOf(reply), JSON.stringify(body)).toContain(field);
    }
    await create(acme, { id: 'validated', entities: [] });
    const renamed = await svc.raw('PUT', '/api/trust-list/validated', { token: acme, body: { id: 'other-id', entities: [] } });
    expect(renamed.status).toBe(400);
    expect(renamed.body.errors[0].field).toBe('body.id');
    expect((await svc.call('POST', '/api/trust-list', { token: acme, body: { id: 'validated', entities: [] } })).status).toBe(409);
  });
});

describe('isolation and publication', () => {
  it("hides another tenant's lists and refuses its key chains", async () => {
    await create(acme, { id: 'acme-only', entities: ENTITIES() });
    for (const [method, path] of [
      ['GET', '/api/trust-list/acme-only'],
      ['PUT', '/api/trust-list/acme-only'],
      ['DELETE', '/api/trust-list/acme-only'],
      ['GET', '/api/trust-list/acme-only/export'],
      ['GET', '/api/trust-list/acme-only/versions'],
    ] as const) {
      const reply = await svc.raw(method, path, { token: other, body: method === 'PUT' ? { entities: [] } : undefined });
      expect(reply.status, `${method} ${path}`).toBe(404);
    }
    const versionId = (await svc.raw('GET', '/api/trust-list/acme-only/versions', { token: acme })).body[0].id;
    expect((await svc.call('GET', `/api/trust-list/acme-only/versions/${versionId}`, { token: other })).status).toBe(404);
    expect((await svc.call('GET', '/api/trust-list', { token: other })).body).toEqual([]);
    // acme's key chains do not exist for another tenant: 'tl-second' is acme's.
    const foreign = await svc.call('POST', '/api/trust-list', {
      token: other,
      body: { keyChainId: 'tl-second', entities: [{ type: 'internal', keyChainId: 'tl-second' }] },
    });
    expect(fieldsOf(foreign).sort()).toEqual(['body.entities.0.keyChainId', 'body.keyChainId']);
    expect((await svc.call('GET', '/issuers/other/trust-lists/acme-only')).status).toBe(404);
  });

  it('serves the signed list publicly as application/jwt, cacheable until NextUpdate', async () => {
    const list = await create(acme, { id: 'public', entities: ENTITIES() });
    const reply = await fetch(`${svc.url}/issuers/acme/trust-lists/public`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toContain('application/jwt');
    const maxAge = Number(/max-age=(\d+)/.exec(reply.headers.get('cache-control') ?? '')?.[1]);
    expect(reply.headers.get('cache-control')).toContain('public');
    expect(maxAge).toBeGreaterThan(0);
    expect(maxAge).toBeLessThanOrEqual(300);
    expect(await reply.text()).toBe(list.jwt);
    expect((await fetch(`${svc.url}/issuers/acme/trust-lists/missing`)).status).toBe(404);
  });

  it("gives the verifier every trusted certificate of the tenant's lists", async () => {
    const pems = await svc.running.services.trustLists.trustedCertificates('acme');
    const ders = new Set(pems.map(derOf));
    expect(ders).toContain(derOf(externalPem));
    expect(ders).toContain(derOf((await keyChain('default-attestation')).rootCertificate));
    expect(ders).toContain(derOf((await keyChain('default-statusList')).rootCertificate));
    expect(ders).not.toContain(derOf((await keyChain('default-attestation')).activeCertificate));
    expect(ders).not.toContain(derOf((await keyChain('default-statusList')).activeCertificate));
    expect(await svc.running.services.trustLists.trustedCertificates('other')).toEqual([]);
  });
});

describe('re-signing', () => {
  it('re-signs with the new key when the signing key chain rotates, keeping the sequence number', async () => {
    await svc.call('POST', '/api/key-chain', { token: acme, body: { id: 'tl-rotating', usageType: 'trustList', type: 'standalone' } });
    const list = await create(acme, { id: 'rotated-signer', keyChainId: 'tl-rotating', entities: ENTITIES() });
    const before = await verify(list.jwt);
    const rotated = await svc.call('POST', '/api/key-chain/tl-rotating/rotate', { token: acme });
    expect(rotated.status).toBe(200);
    const after = (await svc.call('GET', '/api/trust-list/rotated-signer', { token: acme })).body;
    expect(after.sequenceNumber).toBe(1);
    expect(after.jwt).not.toBe(list.jwt);
    const { header } = await verify(after.jwt);
    expect(header.x5c).not.toEqual(before.header.x5c);
    expect(header.x5c).toEqual([derOf(rotated.body.activeCertificate)]);
    expect(await fetch(`${svc.url}/issuers/acme/trust-lists/rotated-signer`).then((r) => r.text())).toBe(after.jwt);
    expect((await svc.call('GET', '/api/trust-list/rotated-signer/versions', { token: acme })).body).toHaveLength(1);
  });

  it('lists the new certificate of a rotated standalone key chain as a new version, audited as the service', async () => {
    await svc.call('POST', '/api/key-chain', { token: acme, body: { id: 'att-standalone', usageType: 'attestation', type: 'standalone' } });
    const list = await create(acme, { id: 'rotated-entity', entities: [{ type: 'internal', keyChainId: 'att-standalone' }] });
    const rotated = (await svc.raw('POST', '/api/key-chain/att-standalone/rotate', { token: acme })).body;
    const after = (await svc.raw('GET', '/api/trust-list/rotated-entity', { token: acme })).body;
    expect(after.sequenceNumber).toBe(2);
    const identity = after.data.LoTE.TrustedEntitiesList[0].TrustedEntityServices[0].ServiceInformation.ServiceDigitalIdentity;
    // The previous certificate stays listed while the key chain still publishes it.
    expect(identity.X509Certificates).toEqual([{ val: derOf(rotated.activeCertificate) }, { val: derOf(rotated.previousCertificate) }]);
    expect((await verify(after.jwt)).payload.LoTE).toEqual(after.data.LoTE);
    expect(list.sequenceNumber).toBe(1);
    const audit = (await svc.call('GET', '/api/admin/audit-logs?limit=100', { token: acme })).body;
    const entry = audit.find((e) => e.actionType === 'trust_list.updated' && e.after?.id === 'rotated-entity');
    expect(entry).toMatchObject({
      actorType: 'system',
      actorId: 'system:trust-lists',
      before: { sequenceNumber: 1 },
      after: { sequenceNumber: 2 },
    });
  });

  it('re-signs on schedule before NextUpdate passes, without a new version', async () => {
    const list = await create(acme, { id: 'scheduled', entities: ENTITIES() });
    svc.clock.advance(1100); // a new ListIssueDateTime (whole seconds)
    await svc.db
      .updateTable('trust_lists')
      .set({ resign_at: new Date(Date.now() - 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') })
      .where('tenant_id', '=', 'acme')
      .where('id', '=', 'scheduled')
      .execute();
    await expect
      .poll(async () => (await svc.call('GET', '/api/trust-list/scheduled', { token: acme })).body.jwt, { timeout: 5000 })
      .not.toBe(list.jwt);
    const after = (await svc.raw('GET', '/api/trust-list/scheduled', { token: acme })).body;
    const info = after.data.LoTE.ListAndSchemeInformation;
    expect(after.sequenceNumber).toBe(1);
    expect(Date.parse(info.ListIssueDateTime)).toBeGreaterThan(Date.parse(list.data.LoTE.ListAndSchemeInformation.ListIssueDateTime));
    expect(Date.parse(info.NextUpdate) - Date.parse(info.ListIssueDateTime)).toBe(24 * 3600_000);
    const row = await svc.db
      .selectFrom('trust_lists')
      .selectAll()
      .where('tenant_id', '=', 'acme')
      .where('id', '=', 'scheduled')
      .executeTakeFirstOrThrow();
    expect(Date.parse(row.resign_at)).toBe(Date.parse(info.NextUpdate) - 6 * 3600_000);
    expect((await svc.call('GET', '/api/trust-list/scheduled/versions', { token: acme })).body).toHaveLength(1);
  });
});

describe('deletion and audit', () => {
  it('refuses to delete a key chain a list signs with or lists, until the list is gone', async () => {
    await svc.call('POST', '/api/key-chain', { token: acme, body: { id: 'tl-held', usageType: 'trustList', type: 'standalone' } });
    await svc.call('POST', '/api/key-chain', { token: acme, body: { id: 'att-held', usageType: 'attestation', type: 'internalChain' } });
    await create(acme, { id: 'holder', keyChainId: 'tl-held', entities: [{ type: 'internal', keyChainId: 'att-held' }] });
    for (const id of ['tl-held', 'att-held']) {
      const refused = await svc.call('DELETE', `/api/key-chain/${id}`, { token: acme });
      expect(refused.status).toBe(409);
      expect(problemOf(refused).detail).toContain("trust list 'holder'");
    }
    const removed = await svc.call('DELETE', '/api/trust-list/holder', { token: acme });
    expect(removed.status).toBe(204);
    expect((await svc.call('GET', '/api/trust-list/holder', { token: acme })).status).toBe(404);
    expect((await fetch(`${svc.url}/issuers/acme/trust-lists/holder`)).status).toBe(404);
    const versions = await svc.db.selectFrom('trust_list_versions').selectAll().where('trust_list_id', '=', 'holder').execute();
    expect(versions).toEqual([]);
    expect((await svc.call('DELETE', '/api/key-chain/tl-held', { token: acme })).status).toBe(204);
    expect((await svc.call('DELETE', '/api/key-chain/att-held', { token: acme })).status).toBe(204);
    expect((await svc.raw('DELETE', '/api/trust-list/holder', { token: acme })).status).toBe(404);
  });

  it('audits create, update and delete in the same transaction, without certificates', async () => {
    await create(acme, { id: 'audited', entities: ENTITIES() });
    await svc.raw('PUT', '/api/trust-list/audited', { token: acme, body: { description: 'changed', entities: [] } });
    await svc.raw('DELETE', '/api/trust-list/audited', { token: acme });
    const audit = (await svc.raw('GET', '/api/admin/audit-logs?limit=200', { token: acme })).body;
    const mine = audit.filter((e: any) => (e.after ?? e.before)?.id === 'audited');
    expect(mine.map((e: any) => e.actionType).sort()).toEqual(['trust_list.created', 'trust_list.deleted', 'trust_list.updated']);
    const created = mine.find((e: any) => e.actionType === 'trust_list.created');
    expect(created).toMatchObject({ actorType: 'client', after: { keyChainId: 'default-trustList', sequenceNumber: 1 } });
    expect(created.after.entities[2]).toEqual({ type: 'external', name: 'Outside Issuer', serviceType: 'pidIssuance', certificates: 1 });
    const updated = mine.find((e: any) => e.actionType === 'trust_list.updated');
    expect(updated.changedFields).toEqual(expect.arrayContaining(['description', 'entities', 'sequenceNumber']));
    expect(JSON.stringify(mine)).not.toContain('BEGIN CERTIFICATE');
  });

  it('needs presentation:manage or issuance:manage', async () => {
    const admin = await svc.tenant('roles');
    const offerOnly = await svc.client(admin.token, 'offer-only', ['issuance:offer']);
    const presenter = await svc.client(admin.token, 'presenter', ['presentation:manage']);
    expect((await svc.call('GET', '/api/trust-list', { token: offerOnly })).status).toBe(403);
    expect((await svc.call('POST', '/api/trust-list', { token: presenter, body: { entities: [] } })).status).toBe(201);
    expect((await svc.call('GET', '/api/trust-list')).status).toBe(401);
  });
});
