// OpenID Federation trust marks (OpenID Federation 1.0 section 7) in one svc: a trust anchor that
// names which issuers count for a trust mark type, a tenant that issues marks of that type over the
// management API, a leaf that carries the mark in its entity configuration, and a verifier that
// requires the mark of entities under the anchor. The marks and status answers are verified with
// jose; the verifier's decisions are read at its resolve endpoint, which resolves as its presentations do.
import { createLocalJWKSet, decodeJwt, generateKeyPair, type JWK, jwtVerify, SignJWT } from 'jose';
import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';
import { PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

const TYPE = 'https://anchor.example.eu/trust-marks/pid-provider';
const TRUST_MARK = { typ: 'trust-mark+jwt' };

let svc: TestService;
const token = new Map<string, string>();
const idOf = (tenant: string) => `${svc.url}/issuers/${tenant}`;
let anchorId: string;
let markerId: string;
let leafId: string;
/** The mark the issuer granted the leaf first, and its id at the issuer. */
let granted: { id: string; trustMark: string; status: string };

const entityConfiguration = async (entityId: string) =>
  decodeJwt(await (await fetch(`${entityId}/.well-known/openid-federation`)).text()) as Record<string, any>;
const federationKeys = async (entityId: string) => createLocalJWKSet((await entityConfiguration(entityId)).jwks);

async function setFederation(tenant: string, federation: Record<string, unknown>) {
  const reply = await svc.raw('PUT', '/api/trust-config', { token: token.get(tenant), body: { federation } });
  expect(reply.status, reply.text).toBe(200);
}

/** The leaf publishes `trustMarks` (JWTs) in its entity configuration. */
const carry = (trustMarks: string[]) => setFederation('leaf', { role: 'leaf', authorityHints: [anchorId], trustMarks });

async function grant(tenant: string, sub: string) {
  const reply = await svc.raw('POST', '/api/federation/trust-marks', { token: token.get(tenant), body: { trustMarkType: TYPE, sub } });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { id: string; trustMark: string; status: string };
}

/** What the verifier decides about `entityId` under the anchor (its resolve endpoint resolves as its presentations do). */
const verify = (entityId: string) =>
  fetch(`${idOf('verifier')}/federation/resolve?${new URLSearchParams({ sub: entityId, trust_anchor: anchorId })}`);

async function refusedBecause(entityId: string) {
  const reply = await verify(entityId);
  expect(reply.status).toBe(404);
  const body = (await reply.json()) as { error: string; error_description: string };
  expect(body.error).toBe('invalid_trust_chain');
  return body.error_description;
}

const askStatus = (trustMark: string) =>
  fetch(`${markerId}/federation/trust-mark-status`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ trust_mark: trustMark }),
  });

async function statusOf(trustMark: string) {
  const reply = await askStatus(trustMark);
  expect(reply.status).toBe(200);
  expect(reply.headers.get('content-type')).toContain('application/trust-mark-status-response+jwt');
  const { payload } = await jwtVerify(await reply.text(), await federationKeys(markerId), { typ: 'trust-mark-status-response+jwt' });
  expect(payload).toMatchObject({ iss: markerId, trust_mark: trustMark });
  return payload.status;
}

beforeAll(async () => {
  svc = await startService();
  for (const tenant of ['anchor', 'marker', 'leaf', 'bare', 'verifier', 'rogue']) token.set(tenant, (await svc.tenant(tenant)).token);
  [anchorId, markerId, leafId] = [idOf('anchor'), idOf('marker'), idOf('leaf')];
  await setFederation('anchor', { role: 'trust_anchor', trustMarkIssuers: { [TYPE]: [markerId] } });
  for (const tenant of ['marker', 'leaf', 'bare']) {
    await setFederation(tenant, { role: 'leaf', authorityHints: [anchorId] });
    // The anchor vouches for each; their keys are read from their entity configurations.
    const registered = await svc.raw('POST', '/api/federation/subordinates', {
      token: token.get('anchor'),
      body: { entityId: idOf(tenant) },
    });
    expect(registered.status, registered.text).toBe(201);
  }
  await setFederation('rogue', { role: 'leaf' });
  await setFederation('verifier', {
    role: 'intermediate',
    mode: 'federation-only',
    trustAnchors: [{ entityId: anchorId, requiredTrustMarks: [TYPE] }],
    cacheTtlSeconds: 0,
  });
  for (const tenant of ['marker', 'rogue']) {
    const type = await svc.raw('POST', '/api/federation/trust-mark-types', {
      token: token.get(tenant),
      body: { trustMarkType: TYPE, ref: 'https://anchor.example.eu/trust-marks/pid-provider.html', lifetimeSeconds: 3600 },
    });
    expect(type.status, type.text).toBe(201);
  }
});
afterAll(async () => {
  await svc?.stop();
});

describe('issuing a trust mark', () => {
  it("grants the leaf a mark signed with the issuer's federation key, audited", async () => {
    granted = await grant('marker', leafId);
    const { payload, protectedHeader } = await jwtVerify(granted.trustMark, await federationKeys(markerId), TRUST_MARK);
    expect(protectedHeader.typ).toBe('trust-mark+jwt');
    expect(payload).toMatchObject({
      iss: markerId,
      sub: leafId,
      trust_mark_type: TYPE,
      ref: 'https://anchor.example.eu/trust-marks/pid-provider.html',
    });
    expect((payload.exp as number) - (payload.iat as number)).toBe(3600);
    expect(granted.status).toBe('active');
    const rows = await svc.db.selectFrom('federation_trust_marks').select(['tenant_id', 'subject', 'revoked_at']).execute();
    expect(rows).toEqual([{ tenant_id: 'marker', subject: leafId, revoked_at: null }]);
    const audit = await svc.db
      .selectFrom('audit_log')
      .select('tenant_id')
      .where('action_type', '=', 'federation_trust_mark.granted')
      .execute();
    expect(audit).toEqual([{ tenant_id: 'marker' }]);
  });

  it("names the trust mark endpoints in the issuer's entity configuration, and answers them", async () => {
    expect((await entityConfiguration(markerId)).metadata.federation_entity).toEqual({
      federation_trust_mark_status_endpoint: `${markerId}/federation/trust-mark-status`,
      federation_trust_mark_list_endpoint: `${markerId}/federation/trust-mark-list`,
      federation_trust_mark_endpoint: `${markerId}/federation/trust-mark`,
    });
    expect((await entityConfiguration(idOf('bare'))).metadata.federation_entity).toBeUndefined();
    expect(await statusOf(granted.trustMark)).toBe('active');
    const list = await fetch(`${markerId}/federation/trust-mark-list?${new URLSearchParams({ trust_mark_type: TYPE })}`);
    expect(await list.json()).toEqual([leafId]);
    const mark = await fetch(`${markerId}/federation/trust-mark?${new URLSearchParams({ trust_mark_type: TYPE, sub: leafId })}`);
    expect(mark.headers.get('content-type')).toContain('application/trust-mark+jwt');
    expect(await mark.text()).toBe(granted.trustMark);
    const none = await fetch(`${markerId}/federation/trust-mark?${new URLSearchParams({ trust_mark_type: TYPE, sub: idOf('bare') })}`);
    expect(none.status).toBe(404);
  });

  it('says invalid of a mark it did not grant, and refuses a request without trust_mark', async () => {
    const rogueMark = await grant('rogue', leafId);
    expect(await statusOf(rogueMark.trustMark)).toBe('invalid');
    const missing = await fetch(`${markerId}/federation/trust-mark-status`, { method: 'POST' });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' });
  });
});

describe('carrying and requiring a trust mark', () => {
  it("publishes the leaf's marks and the anchor's trust_mark_issuers", async () => {
    await carry([granted.trustMark]);
    expect((await entityConfiguration(leafId)).trust_marks).toEqual([{ trust_mark_type: TYPE, trust_mark: granted.trustMark }]);
    expect((await entityConfiguration(anchorId)).trust_mark_issuers).toEqual({ [TYPE]: [markerId] });
  });

  it('accepts the leaf that holds the mark, and refuses one without it', async () => {
    const accepted = await verify(leafId);
    expect(accepted.status).toBe(200);
    expect(decodeJwt(await accepted.text())).toMatchObject({ sub: leafId });
    expect(await refusedBecause(idOf('bare'))).toContain(`${idOf('bare')} holds no valid trust mark of type ${TYPE} in its trust_marks`);
  });

  it("accepts the leaf's credential in a presentation while it carries the mark, and refuses it without", async () => {
    const leaf = token.get('leaf') as string;
    const verifier = token.get('verifier') as string;
    const created = await svc.call('POST', '/api/issuer/credentials', { token: leaf, body: { ...PID, sdJwtTrustFormat: 'federation' } });
    expect(created.status, created.text).toBe(201);
    const query = {
      credentials: [{ ...PID_ADULT_QUERY.credentials[0], trusted_authorities: [{ type: 'openid_federation', values: [anchorId] }] }],
    };
    const config = await svc.call('POST', '/api/verifier/config', { token: verifier, body: { id: 'marked', dcql_query: query } });
    expect(config.status, config.text).toBe(201);
    const present = async () => {
      const issued = await issueCredential(svc, leaf, 'pid', { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true });
      const offer = await svc.call('POST', '/api/verifier/offer', { token: verifier, body: { response_type: 'uri', requestId: 'marked' } });
      assert.isDefined(offer.body.uri, offer.text);
      const resolved = await resolveRequest(offer.body.uri);
      const reply = await submit(resolved, {
        pid: [await presentSdJwt(issued.credential, issued.holder, resolved, ['given_name', 'age_over_18'])],
      });
      return { reply, session: await svc.running.services.sessions.get('verifier', offer.body.session) };
    };
    const accepted = await present();
    expect(accepted.reply.status, JSON.stringify(accepted.reply.body)).toBe(200);
    await carry([]);
    const refused = await present();
    expect(refused.reply.status).toBe(400);
    expect(refused.session.errorReason).toContain(`trust marks: ${leafId} holds no valid trust mark of type ${TYPE}`);
    await carry([granted.trustMark]);
  });

  it("refuses a mark signed by a key that is not the issuer's, and one by an issuer the anchor does not list", async () => {
    // A key of the forger's own, under the kid of the issuer's federation key.
    const { privateKey } = await generateKeyPair('ES256');
    const kid = ((await entityConfiguration(markerId)).jwks.keys as JWK[])[0]?.kid as string;
    const forged = await new SignJWT({ trust_mark_type: TYPE })
      .setProtectedHeader({ alg: 'ES256', typ: 'trust-mark+jwt', kid })
      .setIssuer(markerId)
      .setSubject(leafId)
      .setIssuedAt()
      .sign(privateKey);
    await carry([forged]);
    expect(await refusedBecause(leafId)).toContain(`signature does not verify with the federation keys of ${markerId}`);
    const rogue = (await svc.raw('GET', '/api/federation/trust-marks', { token: token.get('rogue') })).body[0].trustMark;
    await carry([rogue]);
    expect(await refusedBecause(leafId)).toContain(`its issuer ${idOf('rogue')} is not in the trust_mark_issuers of ${anchorId}`);
  });

  it('refuses a revoked mark: the status endpoint says revoked', async () => {
    await carry([granted.trustMark]);
    const revoked = await svc.raw('POST', `/api/federation/trust-marks/${granted.id}/revoke`, { token: token.get('marker') });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.status).toBe('revoked');
    expect((await svc.raw('POST', `/api/federation/trust-marks/${granted.id}/revoke`, { token: token.get('marker') })).status).toBe(409);
    expect(await statusOf(granted.trustMark)).toBe('revoked');
    expect(await refusedBecause(leafId)).toContain('its issuer says it is revoked');
    const list = await fetch(`${markerId}/federation/trust-mark-list?${new URLSearchParams({ trust_mark_type: TYPE })}`);
    expect(await list.json()).toEqual([]);
  });

  it('accepts a mark granted again, and refuses it once it has expired', async () => {
    const again = await grant('marker', leafId);
    await carry([again.trustMark]);
    expect((await verify(leafId)).status).toBe(200);
    svc.clock.advance(2 * 3600 * 1000);
    expect(await statusOf(again.trustMark)).toBe('expired');
    expect(await refusedBecause(leafId)).toContain('it has expired (exp)');
  });
});

describe('the trust marks API', () => {
  it('refuses an unknown type, a bad subject and a leaf setting that is no trust mark, naming the field', async () => {
    const post = (body: unknown) => svc.raw('POST', '/api/federation/trust-marks', { token: token.get('marker'), body });
    const unknown = await post({ trustMarkType: 'https://elsewhere.example.eu/mark', sub: leafId });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors.map((e: { field: string }) => e.field)).toEqual(['body.trustMarkType']);
    const badSub = await post({ trustMarkType: TYPE, sub: 'not a url' });
    expect(badSub.status).toBe(400);
    expect(badSub.body.errors.map((e: { field: string }) => e.field)).toEqual(['body.sub']);
    const notAMark = await svc.raw('PUT', '/api/trust-config', {
      token: token.get('leaf'),
      body: { federation: { trustMarks: ['nope'] } },
    });
    expect(notAMark.status).toBe(400);
    expect(notAMark.body.errors.map((e: { field: string }) => e.field)).toEqual(['body.federation.trustMarks.0']);
    const twice = await svc.raw('POST', '/api/federation/trust-mark-types', { token: token.get('marker'), body: { trustMarkType: TYPE } });
    expect(twice.status).toBe(409);
  });

  it('is forbidden without issuance:manage', async () => {
    const reader = await svc.client(token.get('marker') as string, 'marker-presenter', ['presentation:manage']);
    expect((await svc.raw('GET', '/api/federation/trust-marks', { token: reader })).status).toBe(403);
    expect(
      (await svc.raw('POST', '/api/federation/trust-marks', { token: reader, body: { trustMarkType: TYPE, sub: leafId } })).status,
    ).toBe(403);
    expect((await svc.raw('POST', `/api/federation/trust-marks/${granted.id}/revoke`, { token: reader })).status).toBe(403);
  });

  it("hides another tenant's marks and types", async () => {
    const other = token.get('bare');
    expect((await svc.raw('GET', `/api/federation/trust-marks/${granted.id}`, { token: other })).status).toBe(404);
    expect((await svc.raw('POST', `/api/federation/trust-marks/${granted.id}/revoke`, { token: other })).status).toBe(404);
    expect((await svc.raw('GET', '/api/federation/trust-marks', { token: other })).body).toEqual([]);
    expect((await svc.raw('GET', '/api/federation/trust-mark-types', { token: other })).body).toEqual([]);
    const [type] = (await svc.raw('GET', '/api/federation/trust-mark-types', { token: token.get('marker') })).body;
    expect((await svc.raw('DELETE', `/api/federation/trust-mark-types/${type.id}`, { token: other })).status).toBe(404);
    expect((await svc.raw('GET', `/api/federation/trust-marks/${granted.id}`, { token: token.get('marker') })).status).toBe(200);
  });
});
