// Two PKCS#11 providers on one module (SoftHSM2, two tokens): the module is initialised once per
// process, so when one provider's token is lost and comes back, finding it again means
// reinitialising the module under the other provider too. Both must sign again afterwards.
import { verify, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/service.js';
import { SOFTHSM_MODULE, type SoftHsm, softHsm } from '../support/softhsm.js';

const PIN = '161803';
let hsm: SoftHsm;
let svc: TestService;

beforeAll(async () => {
  hsm = softHsm('svc-first', PIN);
  hsm.initToken('svc-second', PIN);
  const provider = (id: string, tokenLabel: string) => ({ id, type: 'pkcs11', module: SOFTHSM_MODULE, tokenLabel, pin: PIN });
  svc = await startService({
    KMS_PROVIDERS: hsm.kmsFile({ providers: [provider('first', 'svc-first'), provider('second', 'svc-second')] }),
  });
  const { token } = await svc.tenant('acme');
  for (const kmsProvider of ['first', 'second']) {
    const reply = await svc.call('POST', '/api/key-chain', {
      token,
      body: { id: kmsProvider, usageType: 'access', type: 'standalone', kmsProvider, externalKeyId: 'signer' },
    });
    expect(reply.status, reply.text).toBe(201);
  }
});
afterAll(async () => {
  await svc?.stop();
  hsm?.remove();
});

/** A signature by the chain's key that verifies with its certificate; the failure when there is none. */
async function signs(keyChainId: string): Promise<true | unknown> {
  const signer = await svc.running.services.signing.signer('acme', { keyChainId, usageType: 'access' });
  try {
    const signature = await signer.sign(Buffer.from('data'));
    const leaf = new X509Certificate(Buffer.from(signer.x5c[0] as string, 'base64'));
    expect(verify('sha256', Buffer.from('data'), { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
    return true;
  } catch (err) {
    return err;
  }
}

const readiness = async () => (await svc.call('GET', '/health/ready')).body.checks;

describe('two PKCS#11 providers on one module', () => {
  it("find a token that came back, and the other provider's token keeps signing", async () => {
    expect(await signs('first')).toBe(true);
    expect(await signs('second')).toBe(true);
    const putBack = hsm.keepCopy();
    hsm.deleteToken('svc-first');
    expect(await signs('first')).toMatchObject({ status: 503, extra: { provider: 'first' } });
    expect(await readiness()).toMatchObject({ 'keyProvider:first': 'cannot sign', 'keyProvider:second': 'ok' });
    expect(await signs('second')).toBe(true);

    putBack();
    expect(await signs('first')).toBe(true);
    expect(await signs('second')).toBe(true);
    expect(await readiness()).toMatchObject({ 'keyProvider:first': 'ok', 'keyProvider:second': 'ok' });
  });
});
