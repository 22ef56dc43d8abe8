// The wallet's answer before any presentation is verified: the encrypted response (direct_post.jwt,
// dc_api.jwt) decrypted with the session's key, only ECDH-ES with A128GCM or A256GCM, to a JSON
// object; a plain direct_post taken as sent; and the vp_token, an object of non-empty arrays of
// presentations per credential query. Each refusal is checked with the reason the wallet is given.
import { CompactEncrypt, exportJWK, generateKeyPair, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { PresentationRejected } from '../../src/verification/errors.js';
import { responsePayload } from '../../src/verification/response/decrypt.js';
import { parseVpToken } from '../../src/verification/response/vp-token.js';
import type { PresentationPrivate, PresentationPublicData } from '../../src/verification/session.js';

let privateJwk: JWK;
let publicKey: CryptoKey;

beforeAll(async () => {
  const pair = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
  privateJwk = await exportJWK(pair.privateKey);
  publicKey = pair.publicKey as CryptoKey;
});

const request = (responseMode: string) => ({ responseMode }) as PresentationPublicData;
const secrets = (encryptionKey?: JWK) => ({ ...(encryptionKey && { encryptionKey }) }) as PresentationPrivate;

async function encrypted(
  plaintext: string,
  header: { alg: string; enc: string } = { alg: 'ECDH-ES', enc: 'A256GCM' },
  key: CryptoKey = publicKey,
) {
  return new CompactEncrypt(new TextEncoder().encode(plaintext)).setProtectedHeader(header).encrypt(key);
}

async function outcome(promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise;
  } catch (err) {
    return err instanceof PresentationRejected ? err.message : `not a rejection: ${String(err)}`;
  }
}

describe('responsePayload', () => {
  it('takes a direct_post response as posted, and refuses an encrypted one there', async () => {
    const body = { vp_token: '{}', state: 's' };
    expect(await responsePayload(request('direct_post'), secrets(), body)).toBe(body);
    expect(await outcome(responsePayload(request('direct_post'), secrets(privateJwk), { response: await encrypted('{}') }))).toBe(
      'this request expects response_mode direct_post, not an encrypted response',
    );
  });

  it('decrypts an ECDH-ES response with A128GCM or A256GCM to its JSON object, for direct_post.jwt and dc_api.jwt', async () => {
    for (const enc of ['A128GCM', 'A256GCM']) {
      for (const mode of ['direct_post.jwt', 'dc_api.jwt']) {
        const response = await encrypted(JSON.stringify({ vp_token: { pid: ['x'] }, state: enc }), { alg: 'ECDH-ES', enc });
        expect(await responsePayload(request(mode), secrets(privateJwk), { response }), `${mode} ${enc}`).toEqual({
          vp_token: { pid: ['x'] },
          state: enc,
        });
      }
    }
  });

  it('refuses a response that is not encrypted when the request asks for it, or a session without a key', async () => {
    for (const body of [{ vp_token: '{}', state: 's' }, { response: 42 }, { response: { vp_token: {} } }]) {
      expect(await outcome(responsePayload(request('direct_post.jwt'), secrets(privateJwk), body))).toBe(
        'the response must be encrypted (response_mode direct_post.jwt)',
      );
    }
    expect(await outcome(responsePayload(request('dc_api.jwt'), secrets(), { response: await encrypted('{}') }))).toBe(
      'the response must be encrypted (response_mode dc_api.jwt)',
    );
  });

  it('refuses other algorithms, another key, and a plaintext that is not a JSON object', async () => {
    const cannot = 'the encrypted response could not be decrypted';
    const other = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
    const cases = [
      await encrypted('{}', { alg: 'ECDH-ES', enc: 'A192GCM' }),
      await encrypted('{}', { alg: 'ECDH-ES+A128KW', enc: 'A128GCM' }),
      await encrypted('{}', { alg: 'ECDH-ES', enc: 'A128GCM' }, other.publicKey as CryptoKey),
      await encrypted('not json'),
      await encrypted('[{"vp_token": {}}]'),
      await encrypted('null'),
      await encrypted('"a string"'),
      await encrypted('42'),
      'not.a.jwe.at.all',
    ];
    for (const response of cases) {
      expect(await outcome(responsePayload(request('direct_post.jwt'), secrets(privateJwk), { response })), response.slice(0, 40)).toBe(
        cannot,
      );
    }
  });
});

describe('parseVpToken', () => {
  const refused = (raw: unknown) => {
    try {
      parseVpToken(raw);
      return 'accepted';
    } catch (err) {
      return err instanceof PresentationRejected ? err.message : `not a rejection: ${String(err)}`;
    }
  };

  it('takes an object of non-empty arrays of presentations, as JSON text or parsed', () => {
    const token = { pid: ['a~b~c', 'd~e~f'], mdl: ['mdoc'] };
    expect(parseVpToken(token)).toEqual(token);
    expect(parseVpToken(JSON.stringify(token))).toEqual(token);
  });

  it('refuses what is not a JSON object keyed by credential query id', () => {
    const notObject = 'vp_token must be a JSON object keyed by credential query id';
    for (const raw of ['not json', '["a"]', 'null', '"text"', '42', ['a'], null, undefined, 42, true]) {
      expect(refused(raw), JSON.stringify(raw)).toBe(notObject);
    }
    expect(refused({})).toBe('vp_token holds no presentation');
    expect(refused('{}')).toBe('vp_token holds no presentation');
  });

  it('refuses an entry that is not a non-empty array of strings (pre-1.0 shapes), and prototype member names', () => {
    const entries = 'each vp_token entry must be a non-empty array of presentations';
    for (const raw of [{ pid: 'a~b~c' }, { pid: [] }, { pid: [42] }, { pid: ['ok'], mdl: [null] }]) {
      expect(refused(raw), JSON.stringify(raw)).toBe(entries);
    }
    expect(refused('{"__proto__": ["a"]}')).toBe('vp_token.__proto__ is a member name that is refused (__proto__, constructor, prototype)');
    expect(refused({ pid: ['a'], constructor: ['b'] })).toBe(
      'vp_token.constructor is a member name that is refused (__proto__, constructor, prototype)',
    );
  });
});
