// Encrypted credential requests and responses (OpenID4VCI 1.0 section 10), for the credential and
// deferred credential endpoints. A request may arrive as application/jwt: a compact JWE (ECDH-ES,
// A128GCM or A256GCM) to the issuer's encryption key, the tenant's default key chain of usage type
// `encrypt`, advertised by kid in credential_request_encryption. Its credential_response_encryption
// (a wallet JWK and enc) asks for the answer as a JWE too. The issuer setting
// credentialEncryptionRequired makes both mandatory. Error answers are never encrypted.

import { createPublicKey, type JsonWebKey } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CompactEncrypt, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import type { KeyChainService } from '../../key-chains/service.js';
import type { KeyChainRow } from '../../key-chains/store.js';
import type { Clock } from '../../platform/clock.js';
import { inputDefect } from '../../platform/http/input-guards.js';
import { OAuthError, Problem } from '../../platform/http/problem.js';
import { isJsonObject } from '../../platform/json.js';
import { credentialRequestDenied, invalidCredentialRequest } from '../errors.js';
import type { Issuer } from '../issuers.js';

export const ENCRYPTION_ALGORITHM = 'ECDH-ES';
export const CONTENT_ENCRYPTION_ALGORITHMS = ['A128GCM', 'A256GCM'];
export const JWT_MEDIA_TYPE = 'application/jwt';
/** An encrypted request holds at most a batch of proofs with their key attestations: far below this. */
export const MAX_ENCRYPTED_REQUEST_BYTES = 512 * 1024;
const RESPONSE_KEY_CURVES = ['P-256', 'P-384', 'P-521'];

export const invalidEncryptionParameters = (description: string) => new OAuthError(400, 'invalid_encryption_parameters', description);

/** Where and how the wallet wants its answer encrypted (credential_response_encryption). */
export interface ResponseEncryption {
  jwk: JWK;
  enc: string;
}

/** A request as the endpoint acts on it: its JSON members, and the response encryption it asked for. */
export interface OpenedRequest {
  body: Record<string, unknown>;
  responseEncryption?: ResponseEncryption;
}

/** A success answer of the credential or deferred credential endpoint, JSON or (when asked) a JWE. */
export interface WalletAnswer {
  status: 200 | 202;
  body: Record<string, unknown> | string;
  contentType: 'application/json' | typeof JWT_MEDIA_TYPE;
}

// The raw JWE of each request that arrived as application/jwt: the parser leaves request.body an
// empty object (protocol bodies are objects) and the route reads the JWE from here.
const encryptedBodies = new WeakMap<FastifyRequest, string>();

/** Lets the routes registered on `scope` (and only those) take application/jwt bodies, up to the size cap. */
export function acceptEncryptedBodies(scope: FastifyInstance) {
  scope.addContentTypeParser(JWT_MEDIA_TYPE, { parseAs: 'string', bodyLimit: MAX_ENCRYPTED_REQUEST_BYTES }, (request, body, done) => {
    encryptedBodies.set(request, (body as string).trim());
    done(null, {});
  });
}

export const encryptedBodyOf = (request: FastifyRequest): string | undefined => encryptedBodies.get(request);

export class CredentialEncryption {
  constructor(
    private readonly keyChains: KeyChainService,
    private readonly clock: Clock,
  ) {}

  /** The tenant's encryption key chain; undefined when it has none (then nothing is advertised). */
  private async keyChain(tenantId: string): Promise<KeyChainRow | undefined> {
    try {
      return await this.keyChains.resolve(tenantId, { usageType: 'encrypt' });
    } catch (err) {
      if (err instanceof Problem && err.status === 409) return undefined;
      throw err;
    }
  }

  /** The public key wallets encrypt requests to, as published in credential_request_encryption.jwks. */
  async issuerKey(tenantId: string): Promise<JWK | undefined> {
    const row = await this.keyChain(tenantId);
    return row && { ...this.keyChains.toKeyChain(row).activeJwk, use: 'enc', alg: ENCRYPTION_ALGORITHM };
  }

  /**
   * The request the wallet sent, decrypted when it came encrypted, with the rules of section 10:
   * a plain request is refused when the issuer requires encryption, and response encryption may
   * only be asked for inside an encrypted request (so that no one on the way can swap the key).
   */
  async openRequest(issuer: Issuer, plainBody: Record<string, unknown>, jwe: string | undefined): Promise<OpenedRequest> {
    const required = issuer.settings.credentialEncryptionRequired;
    if (jwe === undefined) {
      if (required) {
        if (!(await this.keyChain(issuer.tenantId)))
          throw credentialRequestDenied(
            'this issuer requires encrypted requests but has no encryption key (key chain of usage type encrypt)',
          );
        throw invalidEncryptionParameters(
          'this issuer requires encrypted credential requests: send application/jwt, a JWE to a key of credential_request_encryption',
        );
      }
      if (plainBody.credential_response_encryption !== undefined)
        throw invalidEncryptionParameters('credential_response_encryption must be sent inside an encrypted request (application/jwt)');
      return { body: plainBody };
    }
    const body = await this.decrypt(issuer.tenantId, jwe);
    const defect = inputDefect(body, 'request');
    if (defect) throw invalidCredentialRequest(`${defect.field} ${defect.message}`);
    if (body.credential_response_encryption === undefined) {
      if (required) throw invalidEncryptionParameters('this issuer requires encrypted responses: send credential_response_encryption');
      return { body };
    }
    return { body, responseEncryption: parseResponseEncryption(body.credential_response_encryption) };
  }

  /** The answer, as a JWE to the wallet's key when it asked for one (whatever the answer holds), else JSON. */
  async answer(status: 200 | 202, body: Record<string, unknown>, encryption: ResponseEncryption | undefined): Promise<WalletAnswer> {
    if (!encryption) return { status, body, contentType: 'application/json' };
    const { jwk, enc } = encryption;
    const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(body)))
      .setProtectedHeader({ alg: ENCRYPTION_ALGORITHM, enc, ...(typeof jwk.kid === 'string' && { kid: jwk.kid }) })
      .encrypt(await importJWK(jwk, ENCRYPTION_ALGORITHM));
    return { status, body: jwe, contentType: JWT_MEDIA_TYPE };
  }

  /** Checks the JWE header against what is advertised, then decrypts with the key its kid names. */
  private async decrypt(tenantId: string, jwe: string): Promise<Record<string, unknown>> {
    if (jwe.split('.').length !== 5) throw invalidEncryptionParameters('an application/jwt request must be a compact JWE');
    let header: Record<string, unknown>;
    try {
      header = decodeProtectedHeader(jwe) as Record<string, unknown>;
    } catch {
      throw invalidEncryptionParameters('the JWE protected header cannot be read');
    }
    if (header.alg !== ENCRYPTION_ALGORITHM) throw invalidEncryptionParameters(`the request JWE alg must be ${ENCRYPTION_ALGORITHM}`);
    if (typeof header.enc !== 'string' || !CONTENT_ENCRYPTION_ALGORITHMS.includes(header.enc))
      throw invalidEncryptionParameters(`the request JWE enc must be one of ${CONTENT_ENCRYPTION_ALGORITHMS.join(', ')}`);
    if (header.zip !== undefined) throw invalidEncryptionParameters('compressed (zip) requests are not supported');
    const row = await this.keyChain(tenantId);
    if (!row) throw invalidEncryptionParameters('this issuer has no encryption key: send the request as application/json');
    const key = this.keyByKid(row, header.kid);
    if (!key) throw invalidEncryptionParameters('the request JWE kid names no encryption key of credential_request_encryption');
    let plaintext: Uint8Array;
    try {
      plaintext = (await this.keyChains.provider(row.kms_provider).decryptJwe(key, jwe)).plaintext;
    } catch {
      throw invalidEncryptionParameters('the request JWE could not be decrypted with the key its kid names');
    }
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(plaintext));
    } catch {
      body = undefined;
    }
    if (!isJsonObject(body)) throw invalidCredentialRequest('the decrypted request is not a JSON object');
    return body;
  }

  /**
   * The stored key a request kid names: the active key (the one advertised), or the previous one
   * while it is still valid after a rotation, for wallets that read the metadata just before it.
   */
  private keyByKid(row: KeyChainRow, kid: unknown) {
    if (typeof kid !== 'string') return undefined;
    const provider = this.keyChains.provider(row.kms_provider);
    const active = this.keyChains.storedKey(row, 'active');
    if (active && provider.publicJwk(active).kid === kid) return active;
    const previous = this.keyChains.storedKey(row, 'previous');
    const previousValid = row.previous_key_expiry !== null && Date.parse(row.previous_key_expiry) > this.clock.now().getTime();
    if (previous && previousValid && provider.publicJwk(previous).kid === kid) return previous;
    return undefined;
  }
}

/** credential_response_encryption of a request: a public EC key for ECDH-ES (with alg, as section 10 requires) and a supported enc. */
export function parseResponseEncryption(value: unknown): ResponseEncryption {
  if (!isJsonObject(value)) throw invalidEncryptionParameters('credential_response_encryption must be an object with jwk and enc');
  const { jwk, enc, zip } = value;
  if (typeof enc !== 'string' || !CONTENT_ENCRYPTION_ALGORITHMS.includes(enc))
    throw invalidEncryptionParameters(`credential_response_encryption.enc must be one of ${CONTENT_ENCRYPTION_ALGORITHMS.join(', ')}`);
  if (zip !== undefined) throw invalidEncryptionParameters('compressed (zip) responses are not supported');
  if (!isJsonObject(jwk)) throw invalidEncryptionParameters('credential_response_encryption.jwk must be a JWK');
  if (jwk.alg !== ENCRYPTION_ALGORITHM)
    throw invalidEncryptionParameters(`credential_response_encryption.jwk.alg must be ${ENCRYPTION_ALGORITHM}`);
  if (jwk.use !== undefined && jwk.use !== 'enc') throw invalidEncryptionParameters('credential_response_encryption.jwk.use must be enc');
  if (jwk.kid !== undefined && typeof jwk.kid !== 'string')
    throw invalidEncryptionParameters('credential_response_encryption.jwk.kid must be a string');
  if (jwk.kty !== 'EC' || typeof jwk.crv !== 'string' || !RESPONSE_KEY_CURVES.includes(jwk.crv) || jwk.d !== undefined)
    throw invalidEncryptionParameters(`credential_response_encryption.jwk must be a public EC key on ${RESPONSE_KEY_CURVES.join(', ')}`);
  const publicJwk = { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y };
  try {
    // A point off the curve would make an answer no one can decrypt: refused here, before any credential is made.
    createPublicKey({ key: publicJwk as JsonWebKey, format: 'jwk' });
  } catch {
    throw invalidEncryptionParameters('credential_response_encryption.jwk is not a valid public key');
  }
  return { jwk: { ...publicJwk, alg: ENCRYPTION_ALGORITHM, ...(jwk.kid !== undefined && { kid: jwk.kid as string }) } as JWK, enc };
}
