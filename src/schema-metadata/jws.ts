// Verification of signed schema metadata (a compact JWS of typ attestation-schema+jwt): the header,
// the x5c chain (each certificate signed by the next, all valid at iat and now), the signature by the
// chain's leaf, and the members of the payload that resolution relies on. Each failure says why, for
// a 400 that names the field the JWT came in.
import { X509Certificate } from 'node:crypto';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import { z } from 'zod';
import { SCHEMA_FORMATS } from '../credential-configs/schema-meta.js';
import { SCHEMA_METADATA_JWT_TYPE } from './schemas.js';

const ALGORITHMS = ['ES256', 'ES384', 'ES512'];
/** A chain longer than this is not an access certificate chain; refused before any parsing cost. */
const MAX_CHAIN = 10;

export class SchemaJwtError extends Error {
  override name = 'SchemaJwtError';
}

/** What resolution reads of the payload; further members are kept. */
const PayloadSchema = z.looseObject({
  id: z.string().min(1).max(2048),
  version: z.string().min(1).max(64),
  attestationLoS: z.string().min(1).max(100),
  bindingType: z.string().min(1).max(100),
  rulebookURI: z.string().max(2048).optional(),
  rulebookIntegrity: z.string().max(200).optional(),
  schemaURIs: z
    .array(
      z.looseObject({
        formatIdentifier: z.enum(SCHEMA_FORMATS),
        uri: z.string().max(2048).optional(),
        schemaContent: z.record(z.string(), z.unknown()).optional(),
        integrity: z.string().max(200).optional(),
        meta: z.record(z.string(), z.unknown()).optional(),
      }),
    )
    .min(1)
    .max(10),
  trustedAuthorities: z.array(z.record(z.string(), z.unknown())).max(50).optional(),
  // Bounded, so that it is a date (year 9999 at most).
  iat: z.number().int().min(0).max(253_402_300_799).optional(),
});
export type VerifiedPayload = z.infer<typeof PayloadSchema>;

export interface VerifiedSchemaJwt {
  payload: VerifiedPayload;
  /** x5c, leaf first, as sent (base64 DER). */
  x5c: string[];
  leaf: X509Certificate;
}

export async function verifySchemaJwt(jwt: string, now: Date): Promise<VerifiedSchemaJwt> {
  const header = protectedHeader(jwt);
  if (header.typ !== SCHEMA_METADATA_JWT_TYPE)
    throw new SchemaJwtError(`typ must be ${SCHEMA_METADATA_JWT_TYPE}, not ${String(header.typ)}`);
  if (typeof header.alg !== 'string' || !ALGORITHMS.includes(header.alg)) {
    throw new SchemaJwtError(`alg must be one of ${ALGORITHMS.join(', ')}, not ${String(header.alg)}`);
  }
  const x5c = x5cOf(header.x5c);
  const chain = certificatesOf(x5c);
  checkLinks(chain);
  const leaf = chain[0] as X509Certificate;
  const verified = await verifySignature(jwt, leaf, header.alg);
  const parsed = PayloadSchema.safeParse(verified);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SchemaJwtError(`payload ${issue?.path.join('.') || 'claims'}: ${issue?.message}`);
  }
  const at = [now, ...(parsed.data.iat === undefined ? [] : [new Date(parsed.data.iat * 1000)])];
  checkValidity(chain, at);
  return { payload: parsed.data, x5c, leaf };
}

function protectedHeader(jwt: string): Record<string, unknown> {
  if (jwt.split('.').length !== 3) throw new SchemaJwtError('is not a compact JWS (three base64url parts separated by dots)');
  try {
    return decodeProtectedHeader(jwt) as Record<string, unknown>;
  } catch {
    throw new SchemaJwtError('is not a compact JWS: its header is not base64url-encoded JSON');
  }
}

function x5cOf(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every((c) => typeof c === 'string')) {
    throw new SchemaJwtError('the header has no x5c certificate chain');
  }
  if (value.length > MAX_CHAIN) throw new SchemaJwtError(`x5c holds more than ${MAX_CHAIN} certificates`);
  return value;
}

function certificatesOf(x5c: string[]): X509Certificate[] {
  return x5c.map((der, i) => {
    try {
      return new X509Certificate(Buffer.from(der, 'base64'));
    } catch {
      throw new SchemaJwtError(`x5c[${i}] is not a base64 DER certificate`);
    }
  });
}

/** Each certificate is issued and signed by the next one. */
function checkLinks(chain: X509Certificate[]) {
  for (let i = 0; i + 1 < chain.length; i++) {
    const [cert, issuer] = [chain[i] as X509Certificate, chain[i + 1] as X509Certificate];
    if (!cert.checkIssued(issuer) || !cert.verify(issuer.publicKey)) throw new SchemaJwtError(`x5c[${i}] is not signed by x5c[${i + 1}]`);
  }
}

/** Every certificate is valid now, and was when the metadata was signed. */
function checkValidity(chain: X509Certificate[], at: Date[]) {
  chain.forEach((cert, i) => {
    for (const moment of at) {
      const t = moment.getTime();
      if (t < Date.parse(cert.validFrom) || t > Date.parse(cert.validTo)) {
        throw new SchemaJwtError(`x5c[${i}] is not valid at ${moment.toISOString()} (valid ${cert.validFrom} to ${cert.validTo})`);
      }
    }
  });
}

async function verifySignature(jwt: string, leaf: X509Certificate, alg: string): Promise<unknown> {
  try {
    const { payload } = await jwtVerify(jwt, leaf.publicKey, { algorithms: [alg], typ: SCHEMA_METADATA_JWT_TYPE });
    return payload;
  } catch (err) {
    if (err instanceof joseErrors.JWSSignatureVerificationFailed)
      throw new SchemaJwtError('the signature does not verify with the x5c leaf');
    if (err instanceof joseErrors.JOSEError) throw new SchemaJwtError(err.message);
    throw new SchemaJwtError('the signature cannot be checked with the x5c leaf');
  }
}
