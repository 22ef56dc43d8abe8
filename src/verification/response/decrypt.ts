// The wallet's answer as the request asked for it: direct_post sends plain form fields;
// direct_post.jwt and dc_api.jwt send `response`, a JWE (ECDH-ES, A128GCM or A256GCM) to the
// session's ephemeral key.
import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { compactDecrypt } from 'jose';
import { PresentationRejected } from '../errors.js';
import type { PresentationPrivate, PresentationPublicData } from '../session.js';

export async function responsePayload(
  request: PresentationPublicData,
  secrets: PresentationPrivate,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if (request.responseMode === 'direct_post') {
    if (body.response !== undefined)
      throw new PresentationRejected('this request expects response_mode direct_post, not an encrypted response');
    return body;
  }
  if (typeof body.response !== 'string' || !secrets.encryptionKey)
    throw new PresentationRejected(`the response must be encrypted (response_mode ${request.responseMode})`);
  try {
    const { plaintext } = await compactDecrypt(
      body.response,
      createPrivateKey({ key: secrets.encryptionKey as JsonWebKey, format: 'jwk' }),
      {
        keyManagementAlgorithms: ['ECDH-ES'],
        contentEncryptionAlgorithms: ['A128GCM', 'A256GCM'],
      },
    );
    const payload: unknown = JSON.parse(new TextDecoder().decode(plaintext));
    if (!payload || typeof payload !== 'object' || Array.isArray(payload)) throw new Error('not an object');
    return payload as Record<string, unknown>;
  } catch {
    throw new PresentationRejected('the encrypted response could not be decrypted');
  }
}
