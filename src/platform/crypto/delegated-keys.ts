// Private keys that live outside the process (an HSM, a cloud KMS) as WebCrypto keys, so that
// certificates and CRLs are signed with them as with any other key: crypto.subtle.sign is given
// the key, and a key registered here signs through its owner instead.
import { webcrypto } from 'node:crypto';

type Sign = (data: Uint8Array) => Promise<Uint8Array>;
const signers = new WeakMap<object, Sign>();

/** A private ECDSA key whose signatures `sign` makes (raw r || s over `data`, hashed by the signer). */
export function delegatedSigningKey(namedCurve: string, sign: Sign): webcrypto.CryptoKey {
  const key = { type: 'private', extractable: false, algorithm: { name: 'ECDSA', namedCurve }, usages: ['sign'] };
  signers.set(key, sign);
  return key as unknown as webcrypto.CryptoKey;
}

/** Node's WebCrypto, except that sign() with a delegated key asks the key's owner. */
export const cryptoWithDelegatedKeys = {
  getRandomValues: webcrypto.getRandomValues.bind(webcrypto),
  randomUUID: webcrypto.randomUUID.bind(webcrypto),
  subtle: new Proxy(webcrypto.subtle, {
    get(subtle, name) {
      if (name === 'sign') {
        return async (algorithm: webcrypto.EcdsaParams, key: webcrypto.CryptoKey, data: webcrypto.BufferSource) => {
          const delegated = signers.get(key);
          if (!delegated) return subtle.sign(algorithm, key, data);
          const bytes = ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
          const signature = await delegated(bytes);
          return signature.buffer.slice(signature.byteOffset, signature.byteOffset + signature.byteLength);
        };
      }
      const value = Reflect.get(subtle, name, subtle);
      return typeof value === 'function' ? value.bind(subtle) : value;
    },
  }),
};
