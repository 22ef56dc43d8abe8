// Status lists signed by the credentials' own key chain (statusListSigner issuer), for wallets that,
// like Credo 0.6, check a status list token with the key of the credential's issuer only. The
// separate status-list key chain stays the default, and an attestation chain may sign a list only
// for the one configuration whose credentials it signs.
import { inflateSync } from 'node:zlib';
import { decodeJwt, decodeProtectedHeader, importX509, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/service.js';
import { holderKey, receiveCredentials } from '../support/wallet.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startService();
});
afterAll(() => svc.stop());

const pid = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  config: { format: 'dc+sd-jwt' },
  vct: `urn:example:${id}`,
  statusManagement: true,
  fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
  ...extra,
});

async function issue(token: string, configurationId: string) {
  const offer = await svc.call('POST', '/api/issuer/offer', {
    token,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: [configurationId],
      credentialClaims: { [configurationId]: { type: 'inline', claims: { given_name: 'Erika' } } },
    },
  });
  expect(offer.status, offer.text).toBe(201);
  const { response } = await receiveCredentials(offer.body.uri, { keys: [await holderKey()] });
  const credential = (response.credentialResponse.credentials as { credential: string }[])[0]?.credential as string;
  const issuerJwt = credential.split('~')[0] as string;
  const { status } = decodeJwt(issuerJwt) as { status: { status_list: { idx: number; uri: string } } };
  const { x5c } = decodeProtectedHeader(issuerJwt) as { x5c: string[] };
  return { sessionId: offer.body.session as string, x5c, ...status.status_list };
}

/** The status list token at `uri`, verified with the certificate that signed the credential; the entry's value. */
async function checkWithIssuerKey(uri: string, idx: number, x5c: string[]) {
  const token = await (await fetch(uri, { headers: { accept: 'application/statuslist+jwt' } })).text();
  const key = await importX509(`-----BEGIN CERTIFICATE-----\n${x5c[0]}\n-----END CERTIFICATE-----`, 'ES256');
  const { payload, protectedHeader } = await jwtVerify(token, key, { typ: 'statuslist+jwt' });
  const { bits, lst } = (payload as { status_list: { bits: number; lst: string } }).status_list;
  const bytes = inflateSync(Buffer.from(lst, 'base64url'));
  const value = ((bytes[Math.floor((idx * bits) / 8)] as number) >> ((idx * bits) % 8)) & ((1 << bits) - 1);
  return { value, header: protectedHeader };
}

describe('status lists signed by the issuer key chain', () => {
  it("issues credentials whose status list token verifies with the credential issuer's key, and shows a revocation", async () => {
    const { token } = await svc.tenant('credo-status');
    const created = await svc.raw('POST', '/api/issuer/credentials', { token, body: pid('pid', { statusListSigner: 'issuer' }) });
    expect(created.status, created.text).toBe(201);
    expect(created.body.statusListSigner).toBe('issuer');

    const issued = await issue(token, 'pid');
    const before = await checkWithIssuerKey(issued.uri, issued.idx, issued.x5c);
    expect(before.value).toBe(0);
    expect((before.header.x5c as string[])[0]).toBe(issued.x5c[0]);

    // The list is bound to the configuration and signed by its (the default) attestation chain.
    const lists = (await svc.call('GET', '/api/status-lists', { token })).body as {
      uri: string;
      credentialConfigurationId: string;
      keyChainId: string;
    }[];
    expect(lists.find((l) => l.uri === issued.uri)).toMatchObject({ credentialConfigurationId: 'pid', keyChainId: 'default-attestation' });

    const revoked = await svc.call('POST', '/api/session/revoke', { token, body: { sessionId: issued.sessionId, status: 1 } });
    expect(revoked.status, revoked.text).toBeLessThan(300);
    expect((await checkWithIssuerKey(issued.uri, issued.idx, issued.x5c)).value).toBe(1);
  });

  it('keeps the separate status-list key chain as the default: that token does not verify with the issuer key', async () => {
    const { token } = await svc.tenant('default-status');
    const created = await svc.raw('POST', '/api/issuer/credentials', { token, body: pid('pid') });
    expect(created.body.statusListSigner).toBe('statusList');
    const issued = await issue(token, 'pid');
    await expect(checkWithIssuerKey(issued.uri, issued.idx, issued.x5c)).rejects.toThrow(/signature/);
  });

  it('lets an attestation chain sign only a list bound to a configuration whose credentials it signs', async () => {
    const { token } = await svc.tenant('explicit-lists');
    const chain = await svc.call('POST', '/api/key-chain', {
      token,
      body: { id: 'other-signer', usageType: 'attestation', type: 'standalone' },
    });
    expect(chain.status, chain.text).toBe(201);
    expect((await svc.raw('POST', '/api/issuer/credentials', { token, body: pid('pid') })).status).toBe(201);
    expect((await svc.raw('POST', '/api/issuer/credentials', { token, body: pid('other', { keyChainId: 'other-signer' }) })).status).toBe(
      201,
    );

    const shared = await svc.raw('POST', '/api/status-lists', { token, body: { keyChainId: 'default-attestation' } });
    expect(shared.status).toBe(400);
    expect(shared.body.errors?.[0]?.field ?? shared.text).toContain('keyChainId');
    const foreign = await svc.call('POST', '/api/status-lists', {
      token,
      body: { credentialConfigurationId: 'other', keyChainId: 'default-attestation' },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.text).toContain('attestation key chain');

    const bound = await svc.call('POST', '/api/status-lists', {
      token,
      body: { credentialConfigurationId: 'other', keyChainId: 'other-signer' },
    });
    expect(bound.status, bound.text).toBe(201);
    // Unbinding it would leave an attestation chain signing a shared list.
    const unbound = await svc.call('PATCH', `/api/status-lists/${bound.body.id}`, { token, body: { credentialConfigurationId: null } });
    expect(unbound.status).toBe(400);
    expect((await svc.call('GET', `/api/status-lists/${bound.body.id}`, { token })).body.credentialConfigurationId).toBe('other');

    // The list signed by the issuer chain serves that configuration's credentials.
    const issued = await issue(token, 'other');
    expect(issued.uri).toBe(bound.body.uri);
    expect((await checkWithIssuerKey(issued.uri, issued.idx, issued.x5c)).value).toBe(0);
  });

  it('refuses an unknown statusListSigner, naming the field', async () => {
    const { token } = await svc.tenant('bad-signer');
    const reply = await svc.raw('POST', '/api/issuer/credentials', { token, body: pid('pid', { statusListSigner: 'wallet' }) });
    expect(reply.status).toBe(400);
    expect(reply.text).toContain('statusListSigner');
    expect((await svc.call('GET', '/api/issuer/credentials', { token })).body).toHaveLength(0);
  });
});
