// svc as a whole federation: three tenants of one svc are its trust anchor, an intermediate below
// it, and a leaf (a credential issuer) below that. The superiors' subordinates are registered through
// the management API and published through svc's fetch and list endpoints (OpenID Federation 1.0
// sections 8.1, 8.2). @openid-federation/core, a resolver independent of svc's, resolves the leaf to
// the anchor through them with the superiors' metadata policies applied; svc's own verifier trusts a
// credential of the leaf through the same chain.
import { resolveTrustChains, type VerifyCallback } from '@openid-federation/core';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JWK, jwtVerify } from 'jose';
import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';
import { PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

let svc: TestService;
const token = new Map<string, string>();
const idOf = (tenant: string) => `${svc.url}/issuers/${tenant}`;
let anchorId: string;
let intermediateId: string;
let leafId: string;
/** The subordinate ids the API gave. */
let intermediateAtAnchor: string;

const ENTITY_STATEMENT = { typ: 'entity-statement+jwt' };
const verifyWithJose: VerifyCallback = async ({ jwt, jwk }) => {
  try {
    await jwtVerify(jwt, createLocalJWKSet({ keys: [jwk as JWK] }), ENTITY_STATEMENT);
    return true;
  } catch {
    return false;
  }
};

/** The anchor's policy on everything below it, and the intermediate's on the leaf: both visible in the resolved metadata. */
const ANCHOR_POLICY = { openid_credential_issuer: { federation_tier: { default: 'accredited' } } };
const INTERMEDIATE_POLICY = { openid_credential_issuer: { credential_issuer: { essential: true }, federation_region: { value: 'eu' } } };

async function setFederation(tenant: string, federation: Record<string, unknown>) {
  const reply = await svc.raw('PUT', '/api/trust-config', { token: token.get(tenant), body: { federation } });
  expect(reply.status, reply.text).toBe(200);
}

beforeAll(async () => {
  svc = await startService();
  for (const tenant of ['anchor', 'intermediate', 'leaf', 'other']) token.set(tenant, (await svc.tenant(tenant)).token);
  [anchorId, intermediateId, leafId] = [idOf('anchor'), idOf('intermediate'), idOf('leaf')];
  await setFederation('anchor', { role: 'trust_anchor' });
  await setFederation('intermediate', { role: 'intermediate', authorityHints: [anchorId] });
  await setFederation('leaf', { role: 'leaf', authorityHints: [intermediateId] });
  const created = await svc.call('POST', '/api/issuer/credentials', {
    token: token.get('leaf') as string,
    body: { ...PID, sdJwtTrustFormat: 'federation', statusManagement: true },
  });
  expect(created.status, created.text).toBe(201);
  // The anchor registers the intermediate without keys: svc reads them from its entity configuration.
  const intermediate = await svc.call('POST', '/api/federation/subordinates', {
    token: token.get('anchor') as string,
    body: { entityId: intermediateId, metadataPolicy: ANCHOR_POLICY, constraints: { max_path_length: 1 } },
  });
  expect(intermediate.status, intermediate.text).toBe(201);
  intermediateAtAnchor = intermediate.body.id;
  const leafKeys = decodeJwt(await (await fetch(`${leafId}/.well-known/openid-federation`)).text()).jwks as { keys: JWK[] };
  const leaf = await svc.call('POST', '/api/federation/subordinates', {
    token: token.get('intermediate') as string,
    body: { entityId: leafId, jwks: leafKeys as never, metadataPolicy: INTERMEDIATE_POLICY },
  });
  expect(leaf.status, leaf.text).toBe(201);
});
afterAll(async () => {
  await svc?.stop();
});

describe('a superior publishes its subordinates', () => {
  it("names its fetch and list endpoints in its entity configuration; a leaf's names none", async () => {
    const anchor = decodeJwt(await (await fetch(`${anchorId}/.well-known/openid-federation`)).text()) as Record<string, any>;
    expect(anchor.metadata.federation_entity).toEqual({
      federation_fetch_endpoint: `${anchorId}/federation/fetch`,
      federation_list_endpoint: `${anchorId}/federation/list`,
      federation_resolve_endpoint: `${anchorId}/federation/resolve`,
    });
    expect(anchor.authority_hints).toBeUndefined();
    const leaf = decodeJwt(await (await fetch(`${leafId}/.well-known/openid-federation`)).text()) as Record<string, any>;
    expect(leaf.metadata.federation_entity).toBeUndefined();
  });

  it('stored the keys it read from the subordinate, audited', async () => {
    const federationKey = (await svc.call('GET', '/api/key-chain/default-federation', { token: token.get('intermediate') as string })).body
      .activeJwk;
    const stored = await svc.raw('GET', `/api/federation/subordinates/${intermediateAtAnchor}`, { token: token.get('anchor') });
    expect(stored.status).toBe(200);
    expect((stored.body as { jwks: { keys: JWK[] } }).jwks.keys.map((key) => key.kid)).toEqual([federationKey.kid]);
    const rows = await svc.db.selectFrom('federation_subordinates').select(['tenant_id', 'entity_id']).orderBy('entity_id').execute();
    expect(rows).toEqual([
      { tenant_id: 'anchor', entity_id: intermediateId },
      { tenant_id: 'intermediate', entity_id: leafId },
    ]);
    const audit = await svc.db
      .selectFrom('audit_log')
      .select('tenant_id')
      .where('action_type', '=', 'federation_subordinate.created')
      .execute();
    expect(audit.map((row) => row.tenant_id).sort()).toEqual(['anchor', 'intermediate']);
  });

  it('answers a signed subordinate statement at its fetch endpoint', async () => {
    const reply = await fetch(`${anchorId}/federation/fetch?sub=${encodeURIComponent(intermediateId)}`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toContain('application/entity-statement+jwt');
    const jwt = await reply.text();
    const anchorKeys = decodeJwt(await (await fetch(`${anchorId}/.well-known/openid-federation`)).text()).jwks as { keys: JWK[] };
    const { payload, protectedHeader } = await jwtVerify(jwt, createLocalJWKSet(anchorKeys), ENTITY_STATEMENT);
    expect(protectedHeader.typ).toBe('entity-statement+jwt');
    expect(payload).toMatchObject({
      iss: anchorId,
      sub: intermediateId,
      metadata_policy: ANCHOR_POLICY,
      constraints: { max_path_length: 1 },
    });
    expect(payload.authority_hints).toBeUndefined();
    expect((payload.exp as number) - (payload.iat as number)).toBe(86_400);
  });

  it('answers not_found for an entity that is not its subordinate, invalid_request without sub, not_found at a leaf', async () => {
    const unknown = await fetch(`${anchorId}/federation/fetch?sub=${encodeURIComponent(leafId)}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'not_found' });
    const missing = await fetch(`${anchorId}/federation/fetch`);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' });
    const atLeaf = await fetch(`${leafId}/federation/fetch?sub=${encodeURIComponent(leafId)}`);
    expect(atLeaf.status).toBe(404);
    expect(await atLeaf.json()).toMatchObject({ error: 'not_found' });
  });

  it('lists its subordinates, and refuses the filters it does not support', async () => {
    const list = await fetch(`${intermediateId}/federation/list`);
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual([leafId]);
    const filtered = await fetch(`${intermediateId}/federation/list?entity_type=openid_credential_issuer`);
    expect(filtered.status).toBe(400);
    expect(await filtered.json()).toMatchObject({ error: 'unsupported_parameter' });
  });
});

describe('the federation, resolved', () => {
  it('by @openid-federation/core: the leaf to the anchor through the intermediate, both policies applied', async () => {
    const chains = await resolveTrustChains({ entityId: leafId, trustAnchorEntityIds: [anchorId], verifyJwtCallback: verifyWithJose });
    expect(chains).toHaveLength(1);
    const [trust] = chains;
    expect(trust?.chain.map((statement) => [statement.iss, statement.sub])).toEqual([
      [intermediateId, leafId],
      [anchorId, intermediateId],
      [anchorId, anchorId],
    ]);
    expect(trust?.resolvedLeafMetadata?.openid_credential_issuer).toMatchObject({
      credential_issuer: leafId,
      federation_tier: 'accredited',
      federation_region: 'eu',
    });
  });

  const resolveAt = (resolver: string, query: Record<string, string>) =>
    fetch(`${resolver}/federation/resolve?${new URLSearchParams(query)}`);

  it("by the anchor's resolve endpoint: a signed resolve response with the policies applied and the chain", async () => {
    const reply = await resolveAt(anchorId, { sub: leafId, trust_anchor: anchorId });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toContain('application/resolve-response+jwt');
    const anchorKeys = decodeJwt(await (await fetch(`${anchorId}/.well-known/openid-federation`)).text()).jwks as { keys: JWK[] };
    const { payload } = await jwtVerify(await reply.text(), createLocalJWKSet(anchorKeys), { typ: 'resolve-response+jwt' });
    expect(payload).toMatchObject({ iss: anchorId, sub: leafId });
    expect((payload.metadata as Record<string, any>).openid_credential_issuer).toMatchObject({
      credential_issuer: leafId,
      federation_tier: 'accredited',
      federation_region: 'eu',
    });
    const chain = (payload.trust_chain as string[]).map((jwt) => decodeJwt(jwt)).map(({ iss, sub }) => [iss, sub]);
    expect(chain).toEqual([
      [leafId, leafId],
      [intermediateId, leafId],
      [anchorId, intermediateId],
      [anchorId, anchorId],
    ]);
  });

  it('refuses to resolve to an anchor it does not trust, an entity that does not resolve, or without parameters', async () => {
    const untrusted = await resolveAt(anchorId, { sub: leafId, trust_anchor: 'https://anchor.example.eu' });
    expect(untrusted.status).toBe(404);
    expect(await untrusted.json()).toMatchObject({ error: 'invalid_trust_anchor' });
    const outside = await resolveAt(anchorId, { sub: idOf('other'), trust_anchor: anchorId });
    expect(outside.status).toBe(404);
    expect(await outside.json()).toMatchObject({ error: 'invalid_trust_chain' });
    const missing = await resolveAt(anchorId, { sub: leafId });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' });
    // An intermediate without trust anchors of its own resolves to none.
    const atIntermediate = await resolveAt(intermediateId, { sub: leafId, trust_anchor: anchorId });
    expect(atIntermediate.status).toBe(404);
  });

  describe("by svc's verifier, trusting the anchor", () => {
    let verifier: string;
    beforeAll(async () => {
      verifier = (await svc.tenant('verifier')).token;
      const settings = await svc.raw('PUT', '/api/trust-config', {
        token: verifier,
        body: { federation: { role: 'leaf', mode: 'federation-only', trustAnchors: [{ entityId: anchorId }], cacheTtlSeconds: 0 } },
      });
      expect(settings.status, settings.text).toBe(200);
      const query = {
        credentials: [{ ...PID_ADULT_QUERY.credentials[0], trusted_authorities: [{ type: 'openid_federation', values: [anchorId] }] }],
      };
      expect((await svc.call('POST', '/api/verifier/config', { token: verifier, body: { id: 'fed', dcql_query: query } })).status).toBe(
        201,
      );
    });

    async function present() {
      const issued = await issueCredential(svc, token.get('leaf') as string, 'pid', {
        given_name: 'Erika',
        family_name: 'Mustermann',
        age_over_18: true,
      });
      expect(decodeProtectedHeader(issued.credential.split('~')[0] as string).x5c).toBeUndefined();
      const offer = await svc.call('POST', '/api/verifier/offer', { token: verifier, body: { response_type: 'uri', requestId: 'fed' } });
      assert.isDefined(offer.body.uri, offer.text);
      const resolved = await resolveRequest(offer.body.uri);
      const reply = await submit(resolved, {
        pid: [await presentSdJwt(issued.credential, issued.holder, resolved, ['given_name', 'age_over_18'])],
      });
      return { reply, session: await svc.running.services.sessions.get('verifier', offer.body.session) };
    }

    it("accepts the leaf's credential through svc's own anchor and intermediate", async () => {
      const { reply, session } = await present();
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(session.private?.credentials).toEqual([
        expect.objectContaining({ issuer: leafId, authority: { type: 'openid_federation', values: [anchorId] } }),
      ]);
    });

    it('refuses it once the intermediate no longer vouches for the leaf', async () => {
      const intermediateToken = token.get('intermediate') as string;
      const [leaf] = (await svc.call('GET', '/api/federation/subordinates', { token: intermediateToken })).body as { id: string }[];
      assert.isDefined(leaf);
      const removed = await svc.raw('DELETE', `/api/federation/subordinates/${leaf.id}`, { token: intermediateToken });
      expect(removed.status).toBe(204);
      const { reply, session } = await present();
      expect(reply.status).toBe(400);
      expect(session.errorReason).toContain('OpenID Federation');
      // Registered again for the tests after this one.
      const leafKeys = decodeJwt(await (await fetch(`${leafId}/.well-known/openid-federation`)).text()).jwks;
      const again = await svc.raw('POST', '/api/federation/subordinates', {
        token: intermediateToken,
        body: { entityId: leafId, jwks: leafKeys },
      });
      expect(again.status, again.text).toBe(201);
    });
  });
});

describe('the subordinates API', () => {
  const post = (tenant: string, body: unknown) => svc.raw('POST', '/api/federation/subordinates', { token: token.get(tenant), body });

  it('refuses a bad entityId and a policy operator that does not exist, naming the field', async () => {
    const badId = await post('anchor', { entityId: 'not a url', jwks: { keys: [{ kty: 'EC' }] } });
    expect(badId.status).toBe(400);
    expect(badId.body.errors.map((e: { field: string }) => e.field)).toEqual(['body.entityId']);
    const badOperator = await post('anchor', {
      entityId: 'https://sub.example.eu',
      jwks: { keys: [{ kty: 'EC' }] },
      metadataPolicy: { openid_credential_issuer: { display: { replace: [] } } },
    });
    expect(badOperator.status).toBe(400);
    expect(badOperator.text).toContain('replace');
    expect(badOperator.body.errors[0].field).toContain('body.metadataPolicy.openid_credential_issuer.display');
    const unreadable = await post('anchor', { entityId: `${svc.url}/issuers/nobody` });
    expect(unreadable.status).toBe(400);
    expect(unreadable.body.errors.map((e: { field: string }) => e.field)).toEqual(['body.jwks']);
    const twice = await post('anchor', { entityId: intermediateId, jwks: { keys: [{ kty: 'EC' }] } });
    expect(twice.status).toBe(409);
    expect(await svc.db.selectFrom('federation_subordinates').select('entity_id').where('tenant_id', '=', 'anchor').execute()).toHaveLength(
      1,
    );
  });

  it('is forbidden without issuance:manage', async () => {
    const reader = await svc.client(token.get('anchor') as string, 'anchor-presenter', ['presentation:manage']);
    expect((await svc.raw('GET', '/api/federation/subordinates', { token: reader })).status).toBe(403);
    expect((await svc.raw('POST', '/api/federation/subordinates', { token: reader, body: { entityId: leafId } })).status).toBe(403);
  });

  it("hides another tenant's subordinate: 404 to read, replace or delete it, absent from its list", async () => {
    const other = token.get('other');
    const path = `/api/federation/subordinates/${intermediateAtAnchor}`;
    expect((await svc.raw('GET', path, { token: other })).status).toBe(404);
    const body = { entityId: intermediateId, jwks: { keys: [{ kty: 'EC' }] } };
    expect((await svc.raw('PUT', path, { token: other, body })).status).toBe(404);
    expect((await svc.raw('DELETE', path, { token: other })).status).toBe(404);
    expect((await svc.raw('GET', '/api/federation/subordinates', { token: other })).body).toEqual([]);
    expect((await svc.raw('GET', path, { token: token.get('anchor') })).status).toBe(200);
  });

  it('replaces a subordinate, audited, and the statement says so', async () => {
    const path = `/api/federation/subordinates/${intermediateAtAnchor}`;
    const current = (await svc.raw('GET', path, { token: token.get('anchor') })).body;
    const replaced = await svc.raw('PUT', path, {
      token: token.get('anchor'),
      body: { entityId: intermediateId, jwks: current.jwks, metadataPolicy: ANCHOR_POLICY, constraints: { max_path_length: 2 } },
    });
    expect(replaced.status, replaced.text).toBe(200);
    const statement = decodeJwt(await (await fetch(`${anchorId}/federation/fetch?sub=${encodeURIComponent(intermediateId)}`)).text());
    expect(statement.constraints).toEqual({ max_path_length: 2 });
    const audit = await svc.db
      .selectFrom('audit_log')
      .select('tenant_id')
      .where('action_type', '=', 'federation_subordinate.updated')
      .execute();
    expect(audit).toEqual([{ tenant_id: 'anchor' }]);
    expect((await svc.raw('GET', '/api/federation/subordinates/missing', { token: token.get('anchor') })).status).toBe(404);
  });

  it('moves two subordinates to one entity at once: one 200, one 409, never a 500', async () => {
    const keys = { keys: [{ kty: 'EC' }] };
    const ids: string[] = [];
    for (const entityId of ['https://first.example.eu', 'https://second.example.eu']) {
      const created = await post('other', { entityId, jwks: keys });
      expect(created.status, created.text).toBe(201);
      ids.push(created.body.id);
    }
    for (let round = 0; round < 3; round++) {
      const target = `https://both-${round}.example.eu`;
      const replies = await Promise.all(
        ids.map((id) =>
          svc.raw('PUT', `/api/federation/subordinates/${id}`, { token: token.get('other'), body: { entityId: target, jwks: keys } }),
        ),
      );
      expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
      const rows = await svc.db.selectFrom('federation_subordinates').select('entity_id').where('tenant_id', '=', 'other').execute();
      expect(rows.filter((row) => row.entity_id === target)).toHaveLength(1);
    }
  });
});
