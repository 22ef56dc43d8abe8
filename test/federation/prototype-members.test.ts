// A trust anchor a tenant names itself signs a subordinate statement whose metadata_policy (or
// metadata) uses __proto__, constructor, prototype or toString as a member name. Presented through
// the real response endpoint, the chain is refused naming the member (toString: an ordinary name,
// harmless), nothing answers 5xx, Object.prototype of the process stays as it was, and another
// tenant works as before.
import type { JWK } from 'jose';
import { afterAll, assert, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { foreignSdJwtVc, startFederation, type TestEntity, type TestFederation, type TestKey, testKey } from '../support/federation.js';
import { PID, PID_ADULT_QUERY, PID_VCT } from '../support/fixtures.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { expectUnharmed, memberNamed, objectPrototypeSnapshot, REFUSED } from '../support/prototype-safety.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey } from '../support/wallet.js';

let svc: TestService;
let admin: string;
let fed: TestFederation;
let anchor: TestEntity;
let issuer: TestEntity;
let credentialKey: TestKey;
const before = objectPrototypeSnapshot();

const CLAIMS = { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true };

beforeAll(async () => {
  fed = await startFederation();
  anchor = await fed.entity('anchor');
  issuer = await fed.entity('issuer');
  credentialKey = await testKey('issuer-credential-key');
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  expect((await svc.call('POST', '/api/issuer/credentials', { token: admin, body: PID })).status).toBe(201);
  const settings = await svc.raw('PUT', '/api/issuer/config', {
    token: admin,
    body: { federation: { role: 'leaf', mode: 'federation-only', trustAnchors: [{ entityId: anchor.id }], cacheTtlSeconds: 0 } },
  });
  expect(settings.status, settings.text).toBe(200);
  // The tenant names its own anchor in the query, as the finding describes.
  const dcql_query = {
    credentials: [{ ...PID_ADULT_QUERY.credentials[0], trusted_authorities: [{ type: 'openid_federation', values: [anchor.id] }] }],
  };
  const config = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id: 'fed', dcql_query } });
  expect(config.status, config.text).toBe(201);
});
afterAll(async () => {
  await svc?.stop();
  await fed?.stop();
});

/** The issuer directly below the anchor, its credential key in its metadata; each test adds what the anchor says. */
beforeEach(() => {
  issuer.authorityHints = [anchor.id];
  issuer.metadata = { openid_credential_issuer: { credential_issuer: issuer.id, jwks: { keys: [credentialKey.publicJwk] } } };
  anchor.subordinates.clear();
  anchor.subordinate(issuer);
});

async function present() {
  const holder = await holderKey();
  const credential = await foreignSdJwtVc(issuer.id, credentialKey, holder.privateJwk, CLAIMS, PID_VCT);
  const offer = await svc.call('POST', '/api/verifier/offer', { token: admin, body: { response_type: 'uri', requestId: 'fed' } });
  expect(offer.status, offer.text).toBe(201);
  assert.isDefined(offer.body.uri, offer.text);
  const resolved = await resolveRequest(offer.body.uri);
  const vp = await presentSdJwt(credential, holder.privateJwk as JWK, resolved, ['given_name', 'age_over_18']);
  const reply = await submit(resolved, { pid: [vp] });
  const session = (await svc.call('GET', `/api/session/${offer.body.session}`, { token: admin })).body;
  return { reply, session };
}

/** A policy that, written into Object.prototype, would give every object a `description` (the finding's symptom). */
const POLLUTING_PARAMETERS = { description: { value: { polluted: true } }, polluted: { value: true } };

describe('a subordinate statement naming a prototype member is refused, and harms nothing', () => {
  for (const name of REFUSED) {
    it(`metadata_policy with the entity type ${name}`, async () => {
      anchor.subordinate(issuer, { metadata_policy: memberNamed(name, POLLUTING_PARAMETERS) });
      const { reply, session } = await present();
      expect(reply.status).toBe(400);
      expect(session.status).toBe('failed');
      expect(session.errorReason).toContain(`subordinate statement: metadata_policy.${name} is a member name that is refused`);
      await expectUnharmed(svc, before);
    });

    it(`metadata_policy with the parameter ${name}, and metadata with it`, async () => {
      anchor.subordinate(issuer, { metadata_policy: { openid_credential_issuer: memberNamed(name, { value: { polluted: true } }) } });
      const policy = await present();
      expect(policy.reply.status).toBe(400);
      expect(policy.session.errorReason).toContain(`metadata_policy.openid_credential_issuer.${name} is a member name that is refused`);
      anchor.subordinate(issuer, { metadata: memberNamed(name, { polluted: true }) });
      const metadata = await present();
      expect(metadata.reply.status).toBe(400);
      expect(metadata.session.errorReason).toContain(`metadata.${name} is a member name that is refused`);
      await expectUnharmed(svc, before);
    });
  }

  it('toString is an ordinary name: as an entity type it constrains nothing, as a parameter it is set', async () => {
    anchor.subordinate(issuer, { metadata_policy: memberNamed('toString', POLLUTING_PARAMETERS) });
    const asType = await present();
    expect(asType.reply.status, JSON.stringify(asType.reply.body)).toBe(200);
    expect(asType.session.status).toBe('completed');
    anchor.subordinate(issuer, {
      metadata_policy: { openid_credential_issuer: { toString: { value: 'x' }, hasOwnProperty: { default: 1 } } },
    });
    const asParameter = await present();
    expect(asParameter.reply.status, JSON.stringify(asParameter.reply.body)).toBe(200);
    await expectUnharmed(svc, before);
  });
});
