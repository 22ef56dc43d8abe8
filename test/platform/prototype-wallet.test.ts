// What a wallet sends, with member names __proto__, constructor and prototype: Disclosures and
// claims of an SD-JWT presentation, and PAR authorization_details, refused naming the member, the
// service unharmed afterwards; and the prototypes sealed in the process the server runs in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushAuthorizationRequest } from '../support/authorization.js';
import { PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { expectUnharmed, memberNamed, objectPrototypeSnapshot, REFUSED, RULE } from '../support/prototype-safety.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

let svc: TestService;
let admin: string;
const before = objectPrototypeSnapshot();

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  expect((await svc.call('POST', '/api/issuer/credentials', { token: admin, body: PID })).status).toBe(201);
  const trust = await svc.call('POST', '/api/trust-list', {
    token: admin,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(trust.status, trust.text).toBe(201);
  const config = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id: 'adult', dcql_query: PID_ADULT_QUERY } });
  expect(config.status, config.text).toBe(201);
});
afterAll(() => svc?.stop());

const disclosure = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A presentation of a PID svc issued, with `extra` Disclosures placed before the KB-JWT. */
async function presentWith(extra: string[]) {
  const { credential, holder } = await issueCredential(svc, admin, 'pid', {
    given_name: 'Erika',
    family_name: 'Mustermann',
    age_over_18: true,
  });
  const offer = await svc.call('POST', '/api/verifier/offer', { token: admin, body: { response_type: 'uri', requestId: 'adult' } });
  expect(offer.status, offer.text).toBe(201);
  const resolved = await resolveRequest(offer.body.uri as string);
  const presentation = await presentSdJwt(credential, holder, resolved, ['given_name', 'age_over_18']);
  const keyBinding = presentation.slice(presentation.lastIndexOf('~') + 1);
  const withExtra = `${presentation.slice(0, presentation.lastIndexOf('~') + 1)}${extra.map((d) => `${d}~`).join('')}${keyBinding}`;
  const reply = await submit(resolved, { pid: [withExtra] });
  const session = (await svc.call('GET', `/api/session/${offer.body.session}`, { token: admin })).body;
  return { reply, session };
}

describe('the prototypes', () => {
  it('are sealed once the service is built: no new member can be added', () => {
    for (const target of [Object.prototype, Array.prototype, Function.prototype, Object]) expect(Object.isSealed(target)).toBe(true);
    expect(() => {
      (Object.prototype as Record<string, unknown>).polluted = true;
    }).toThrow(TypeError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('SD-JWT presentations', () => {
  for (const name of REFUSED) {
    it(`a Disclosure of the claim ${name}, or with a member ${name} in its value, is refused naming it`, async () => {
      const named = await presentWith([disclosure(['salt-1', name, { polluted: true }])]);
      expect(named.reply.status).toBe(400);
      expect(named.session.status).toBe('failed');
      expect(named.session.errorReason).toContain(`disclosure 3 discloses ${name}, which ${RULE}`);
      const nested = await presentWith([disclosure(['salt-2', 'address', memberNamed(name, { polluted: true })])]);
      expect(nested.reply.status).toBe(400);
      expect(nested.session.errorReason).toContain(`disclosure 3.2.${name} ${RULE}`);
      await expectUnharmed(svc, before);
    });
  }
});

describe('PAR authorization_details', () => {
  for (const name of REFUSED) {
    it(`a detail with a member ${name} is invalid_authorization_details naming it`, async () => {
      const offer = await svc.raw('POST', '/api/issuer/offer', {
        token: admin,
        body: {
          response_type: 'uri',
          flow: 'authorization_code',
          credentialConfigurationIds: ['pid'],
          credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann' } } },
        },
      });
      expect(offer.status, offer.text).toBe(201);
      const details = `[{"type": "openid_credential", "credential_configuration_id": "pid", ${JSON.stringify(name)}: {"polluted": true}}]`;
      const reply = await pushAuthorizationRequest(svc, 'acme', offer.body.credentialOffer.grants.authorization_code.issuer_state, {
        scope: undefined,
        authorization_details: details,
      });
      expect(reply.status, reply.text).toBe(400);
      expect(reply.body.error).toBe('invalid_authorization_details');
      expect(reply.body.error_description).toContain(`authorization_details.0.${name} ${RULE}`);
      await expectUnharmed(svc, before);
    });
  }
});
