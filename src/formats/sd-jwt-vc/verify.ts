// Verifying an SD-JWT VC presentation (with KB-JWT) for a presentation request. Each rule is a step
// that fails with a reason the session keeps as its errorReason.
import { createHash } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { decodeJws, ecPublicKey, verifyEcJws } from '../../platform/crypto/ec-jws.js';
import { isPrototypeMemberName, PROTOTYPE_MEMBER_RULE, PrototypeMemberRefused, parseOutsideJson } from '../../platform/json.js';
import { lazy } from '../../platform/lazy.js';
import type { PresentationContext } from '../presentation-context.js';
import { PresentationRejected } from '../presentation-rejected.js';
import { checkDisclosureReferences, presentedDisclosures } from './disclosures.js';
import { trustedIssuerKey } from './issuer-trust.js';

const reject = (reason: string) => new PresentationRejected(reason);
const sdJwtVc = lazy(() => import('@sd-jwt/sd-jwt-vc'));

export interface VerifiedSdJwt {
  format: 'dc+sd-jwt';
  vct: string;
  issuer: string;
  claims: Record<string, unknown>;
  status?: { status_list?: { idx: number; uri: string } };
  /** Set when the issuer was trusted through an OpenID Federation trust chain: the anchor it resolved to. */
  authority?: { type: 'openid_federation'; values: [string] };
  /** The x5c of the issuer-signed JWT (empty without one), for trusted_authorities; not kept with the result. */
  issuerChain: string[];
}

const KB_MAX_AGE_SECONDS = 300;
const CLOCK_SKEW_SECONDS = 60;
const sha256 = (data: string) => createHash('sha256').update(data).digest('base64url');
const TECHNICAL_CLAIMS = ['iss', 'iat', 'nbf', 'exp', 'cnf', 'vct', 'vct#integrity', 'status', '_sd_alg', 'sub'];

/** KB-JWT rules the library leaves to us: audience, freshness, sd_hash, transaction data hashes. */
function checkKeyBinding(presentation: string, context: PresentationContext) {
  const kbJwt = presentation.slice(presentation.lastIndexOf('~') + 1);
  if (!kbJwt) throw reject('key binding: the presentation has no KB-JWT');
  const kb = decodeJwt(kbJwt);
  const audiences = context.audiences ?? [context.clientId];
  if (typeof kb.aud !== 'string' || !audiences.includes(kb.aud)) throw reject('key binding: aud is not this verifier');
  if (kb.nonce !== context.nonce) throw reject('key binding: nonce does not match the request');
  const now = context.now.getTime() / 1000;
  if (typeof kb.iat !== 'number' || kb.iat > now + CLOCK_SKEW_SECONDS) throw reject('key binding: iat is missing or in the future');
  if (kb.iat < now - KB_MAX_AGE_SECONDS) throw reject('key binding: iat is too old');
  if (kb.sd_hash !== sha256(presentation.slice(0, presentation.lastIndexOf('~') + 1)))
    throw reject('key binding: sd_hash does not match the presentation');
  checkTransactionData(kb as Record<string, unknown>, context.transactionData);
}

function checkTransactionData(kb: Record<string, unknown>, expected: string[]) {
  if (expected.length === 0) return;
  const alg = (kb.transaction_data_hashes_alg as string | undefined) ?? 'sha-256';
  if (alg !== 'sha-256') throw reject('transaction data: only sha-256 hashes are accepted');
  const hashes = kb.transaction_data_hashes;
  const wanted = expected.map(sha256).sort();
  if (!Array.isArray(hashes) || JSON.stringify([...hashes].sort()) !== JSON.stringify(wanted)) {
    throw reject('transaction data: transaction_data_hashes do not match the request');
  }
}

/**
 * Every part of the presentation (the issuer-signed JWT, each Disclosure, the KB-JWT) names no member
 * __proto__, constructor or prototype: @sd-jwt unpacks the Disclosures into the claims by their
 * names, so such a name is refused before it runs. A part that is not JSON is left to its checks.
 */
function checkMemberNames(presentation: string) {
  const [issuerJwt = '', ...rest] = presentation.split('~');
  const keyBinding = rest.at(-1)?.includes('.') ? (rest.pop() as string) : undefined;
  const jwtParts = (jwt: string, what: string) =>
    jwt
      .split('.')
      .slice(0, 2)
      .map((segment, i) => [`${what} ${i === 0 ? 'header' : 'payload'}`, segment] as const);
  const parts = [
    ...jwtParts(issuerJwt, 'credential'),
    ...rest.map((disclosure, i) => [`disclosure ${i + 1}`, disclosure] as const),
    ...(keyBinding ? jwtParts(keyBinding, 'key binding JWT') : []),
  ];
  for (const [what, segment] of parts) {
    let value: unknown;
    try {
      value = parseOutsideJson(Buffer.from(segment, 'base64url').toString('utf8'), what);
    } catch (err) {
      if (err instanceof PrototypeMemberRefused) throw reject(`credential: ${err.message}`);
    }
    // An object-property Disclosure [salt, name, value] names its member as a value.
    if (Array.isArray(value) && value.length === 3 && isPrototypeMemberName(value[1]))
      throw reject(`credential: ${what} discloses ${value[1]}, which ${PROTOTYPE_MEMBER_RULE}`);
  }
}

export async function verifySdJwtPresentation(presentation: string, context: PresentationContext): Promise<VerifiedSdJwt> {
  checkMemberNames(presentation);
  const { key: issuerKey, authority } = await trustedIssuerKey(presentation, context);
  const { SDJwtVcInstance } = await sdJwtVc();
  // The signatures' own exp/nbf are judged at the system's time, as before: at the context's time a
  // credential in its exp second would be refused as a bad signature, where the check below (exp,
  // at the context's time) accepts it until that second has passed.
  const nowSeconds = Date.now() / 1000;
  const sdjwt = new SDJwtVcInstance({
    hasher: (data: string | ArrayBuffer) =>
      createHash('sha256')
        .update(typeof data === 'string' ? data : Buffer.from(data))
        .digest(),
    // Both signatures are checked with node:crypto directly (the issuer's key parsed once per
    // certificate or federation key): the same checks jose's jwtVerify makes for ES256/384/512, without its WebCrypto round trips.
    verifier: async (data: string, signature: string) => verifyEcJws(`${data}.${signature}`, issuerKey, 0, nowSeconds) !== undefined,
    kbVerifier: async (data: string, signature: string, payload: unknown) => {
      const jwk = (payload as { cnf?: { jwk?: Record<string, unknown> } }).cnf?.jwk;
      const alg = decodeJws(`${data}.${signature}`)?.header.alg;
      const key = jwk && typeof alg === 'string' ? ecPublicKey(jwk, alg) : undefined;
      return key !== undefined && verifyEcJws(`${data}.${signature}`, key, 0, nowSeconds) !== undefined;
    },
  });
  // The library's own status step (fetch uncached, verify with the issuer's key) is turned off: the
  // status list is checked afterwards by StatusListChecker (status.ts), against the tenant's trust anchors.
  Object.assign(sdjwt, { verifyStatus: async () => {} });
  let payload: Record<string, unknown>;
  try {
    ({ payload } = (await sdjwt.verify(presentation, { requiredClaimKeys: ['vct'], keyBindingNonce: context.nonce })) as {
      payload: Record<string, unknown>;
    });
  } catch (err) {
    throw reject(`credential: ${err instanceof Error ? err.message : String(err)}`);
  }
  // With the issuer's signature verified: the Disclosures match the signed digests one to one, which @sd-jwt does not check.
  checkDisclosureReferences(decodeJwt(presentation.split('~')[0] as string), presentedDisclosures(presentation));
  checkKeyBinding(presentation, context);
  const exp = payload.exp as number | undefined;
  if (exp !== undefined && exp < context.now.getTime() / 1000) throw reject('credential: expired');
  const claims = Object.fromEntries(Object.entries(payload).filter(([key]) => !TECHNICAL_CLAIMS.includes(key)));
  const { x5c } = decodeProtectedHeader(presentation.split('~')[0] as string);
  return {
    format: 'dc+sd-jwt',
    vct: payload.vct as string,
    issuer: payload.iss as string,
    claims,
    ...(payload.status ? { status: payload.status as VerifiedSdJwt['status'] } : {}),
    ...(authority && { authority }),
    issuerChain: Array.isArray(x5c) ? x5c.filter((c): c is string => typeof c === 'string') : [],
  };
}
