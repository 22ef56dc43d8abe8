// SD-JWT VC (`dc+sd-jwt`): claims from the configuration's fields, selectively disclosable unless a
// field says `disclosable: false`, the holder key in cnf, signed through the signing service.
import { createHash, randomBytes } from 'node:crypto';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import type { JWK } from 'jose';
import type { Signer } from '../../key-chains/signing.js';
import type { FormatField } from '../types.js';

export interface SdJwtVcInput {
  /** The issuance time (iat). */
  issuedAt: Date;
  issuer: string;
  vct: string;
  claims: Record<string, unknown>;
  fields: FormatField[];
  holderJwk?: JWK;
  lifetimeSeconds?: number | null;
  /** x5c: the certificate chain in the header (HAIP); federation: kid only, trust via iss. */
  trustFormat: 'x5c' | 'federation';
  status?: Record<string, unknown>;
}

type Frame = { _sd?: (string | number)[]; [key: string]: unknown };

/**
 * The frame as @sd-jwt/sd-jwt-vc's issue() types it. The library derives a nested frame's type from
 * the payload's static type, and claims known only at run time give it none below the top level
 * (a nested `_sd` would have to be a list of no keys); the frame built here has that run-time shape.
 */
type IssueFrame = NonNullable<Parameters<SDJwtVcInstance['issue']>[1]>;

/** The disclosure frame: every claim the fields describe is disclosable unless marked otherwise. */
export function disclosureFrame(fields: FormatField[], claims: Record<string, unknown>): Frame {
  const frame: Frame = {};
  for (const field of fields) addToFrame(frame, field.path, field.disclosable !== false, claims);
  for (const field of fields) {
    if (!field.children?.length) continue;
    const key = field.path[field.path.length - 1];
    const nested = typeof key === 'string' ? (claims[key] as Record<string, unknown> | undefined) : undefined;
    if (nested && typeof nested === 'object' && !Array.isArray(nested)) {
      const child = disclosureFrame(field.children, nested);
      if (typeof key === 'string') frame[key] = { ...((frame[key] as Frame) ?? {}), ...child };
    }
  }
  return frame;
}

function addToFrame(frame: Frame, path: (string | number | null)[], disclosable: boolean, claims: Record<string, unknown>) {
  const [head, ...rest] = path;
  if (typeof head !== 'string' || !(head in claims)) return;
  if (rest.length === 0) {
    if (disclosable) frame._sd = [...(frame._sd ?? []), head];
    return;
  }
  const nested = claims[head];
  if (nested && typeof nested === 'object' && !Array.isArray(nested)) {
    frame[head] ??= {};
    addToFrame(frame[head] as Frame, rest, disclosable, nested as Record<string, unknown>);
  }
}

export async function issueSdJwtVc(input: SdJwtVcInput, signer: Signer): Promise<string> {
  const sdjwt = new SDJwtVcInstance({
    signer: async (data: string) => Buffer.from(await signer.sign(Buffer.from(data))).toString('base64url'),
    signAlg: signer.algorithm,
    hasher: (data: string | ArrayBuffer) =>
      createHash('sha256')
        .update(typeof data === 'string' ? data : Buffer.from(data))
        .digest(),
    hashAlg: 'sha-256',
    saltGenerator: () => randomBytes(16).toString('base64url'),
  });
  const iat = Math.floor(input.issuedAt.getTime() / 1000);
  const payload = {
    ...input.claims,
    iss: input.issuer,
    iat,
    vct: input.vct,
    ...(input.lifetimeSeconds && { exp: iat + input.lifetimeSeconds }),
    ...(input.holderJwk && { cnf: { jwk: input.holderJwk } }),
    ...(input.status && { status: input.status }),
  };
  const header = input.trustFormat === 'federation' ? { typ: 'dc+sd-jwt', kid: signer.kid } : { typ: 'dc+sd-jwt', x5c: signer.x5c };
  return sdjwt.issue(payload as Parameters<typeof sdjwt.issue>[0], disclosureFrame(input.fields, input.claims) as IssueFrame, { header });
}
