// Verifying a W3C Verifiable Presentation as a JWT (OpenID4VP 1.0 appendix B.1.3.1): the holder's
// VP JWT, whose nonce and aud must be the request's, carries VC JWTs. Each credential is checked
// (issuer trust and signature, validity period, type) and bound to the holder: its
// credentialSubject.id is a did:jwk or did:key, and that key must have signed the VP JWT. Both
// shapes are read: VCDM 2.0 (the payload is the presentation, credentials enveloped as
// data:application/vc+jwt URLs or given as JWTs) and VCDM 1.1 (the presentation in the vp claim).
import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { didOfUrl, keyOfLocalDid } from '../../dids/encoding.js';
import { decodeJws, fitsAlgorithm, verifiesWith, withinValidity } from '../../platform/crypto/ec-jws.js';
import { isJsonObject, PrototypeMemberRefused, parseOutsideJson } from '../../platform/json.js';
import type { PresentationContext } from '../presentation-context.js';
import { PresentationRejected } from '../presentation-rejected.js';
import { VC_TYPE } from './issue.js';
import { issuerIdOf, trustedVcIssuerKey } from './issuer-trust.js';

const reject = (reason: string) => new PresentationRejected(reason);

export interface VerifiedW3cVc {
  format: 'jwt_vc_json';
  /** The credential's type values. */
  types: string[];
  issuer: string;
  /** The credential as issued (VCDM 2.0 members), without the JWT's own claims: what DCQL claim paths select from. */
  claims: Record<string, unknown>;
  /** The issuer's certificate chain (empty without one), for trusted_authorities; not kept with the result. */
  issuerChain: string[];
  /** No status yet (Bitstring Status List is to come): the status check has nothing to read. */
  status?: undefined;
}

const CLOCK_SKEW_SECONDS = 60;
const MAX_CREDENTIALS = 10;
const ENVELOPE_PREFIX = 'data:application/vc+jwt,';
/** The JWT claims VC-JOSE-COSE lets a VC JWT repeat; they are not the credential's claims. */
const JWT_CLAIMS = ['iss', 'sub', 'iat', 'nbf', 'exp', 'jti', 'aud', 'cnf'];

/** Every segment is outside JSON: one naming __proto__, constructor or prototype is refused before anything reads it. */
function parsed(jwt: string, what: string) {
  for (const [i, segment] of jwt.split('.').slice(0, 2).entries()) {
    try {
      parseOutsideJson(Buffer.from(segment, 'base64url').toString('utf8'), `${what} ${i === 0 ? 'header' : 'payload'}`);
    } catch (err) {
      if (err instanceof PrototypeMemberRefused) throw reject(`${what}: ${err.message}`);
    }
  }
  const decoded = decodeJws(jwt);
  if (!decoded) throw reject(`${what}: not a JWT`);
  return decoded;
}

/** The VC JWTs of the presentation: strings, or EnvelopedVerifiableCredential objects with a data: URL. */
function credentialJwts(presentation: Record<string, unknown>): string[] {
  const listed = presentation.verifiableCredential;
  const entries = Array.isArray(listed) ? listed : listed === undefined ? [] : [listed];
  if (entries.length === 0) throw reject('presentation: verifiableCredential holds no credential');
  if (entries.length > MAX_CREDENTIALS) throw reject(`presentation: more than ${MAX_CREDENTIALS} credentials`);
  return entries.map((entry) => {
    if (typeof entry === 'string') return entry.startsWith(ENVELOPE_PREFIX) ? entry.slice(ENVELOPE_PREFIX.length) : entry;
    if (isJsonObject(entry) && typeof entry.id === 'string' && entry.id.startsWith(ENVELOPE_PREFIX))
      return entry.id.slice(ENVELOPE_PREFIX.length);
    throw reject('presentation: a verifiableCredential entry is neither a VC JWT nor an enveloped one (data:application/vc+jwt)');
  });
}

const typesOf = (value: unknown): string[] =>
  (Array.isArray(value) ? value : [value]).filter((type): type is string => typeof type === 'string');

/** A date-time member (validFrom, validUntil) in seconds; undefined when absent, rejected when not a date-time. */
function secondsOf(value: unknown, what: string): number | undefined {
  if (value === undefined) return undefined;
  const time = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(time)) throw reject(`credential: ${what} is not a date-time`);
  return time / 1000;
}

function checkValidity(credential: Record<string, unknown>, now: number) {
  const from = secondsOf(credential.validFrom, 'validFrom') ?? (typeof credential.nbf === 'number' ? credential.nbf : undefined);
  const until = secondsOf(credential.validUntil, 'validUntil');
  const exp = typeof credential.exp === 'number' ? credential.exp : undefined;
  if (from !== undefined && from > now + CLOCK_SKEW_SECONDS) throw reject('credential: not yet valid (validFrom)');
  if ((until !== undefined && until < now) || (exp !== undefined && exp < now)) throw reject('credential: expired');
}

/** The holder's DID and key: credentialSubject.id, a did:jwk or did:key. */
function holderOf(credential: Record<string, unknown>): { did: string; key: KeyObject } {
  const subjects = Array.isArray(credential.credentialSubject) ? credential.credentialSubject : [credential.credentialSubject];
  const [subject] = subjects;
  if (subjects.length !== 1 || !isJsonObject(subject) || typeof subject.id !== 'string')
    throw reject('holder binding: the credential has no credentialSubject.id naming the holder');
  const jwk = keyOfLocalDid(subject.id);
  if (!jwk) throw reject('holder binding: credentialSubject.id is not a did:jwk or did:key of an EC key');
  try {
    return { did: didOfUrl(subject.id), key: createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }) };
  } catch {
    throw reject('holder binding: credentialSubject.id names no usable public key');
  }
}

async function verifyCredential(jwt: string, context: PresentationContext, now: number) {
  const { header, payload } = parsed(jwt, 'credential');
  if (header.typ !== undefined && header.typ !== 'vc+jwt' && header.typ !== 'JWT') throw reject('credential: typ must be vc+jwt');
  // VCDM 1.1 JWTs carry the credential in vc; 2.0 ones are the credential.
  const credential = isJsonObject(payload.vc) ? { ...payload.vc, ...pick(payload, JWT_CLAIMS) } : payload;
  const issuer = issuerIdOf(credential) ?? (typeof payload.iss === 'string' ? payload.iss : undefined);
  if (!issuer) throw reject('credential: no issuer');
  if (payload.iss !== undefined && payload.iss !== issuer) throw reject('credential: iss and issuer differ');
  const trusted = await trustedVcIssuerKey(header, issuer, context);
  if (!signedBy(jwt, trusted.key)) throw reject('credential: the issuer signature does not verify');
  const types = typesOf(credential.type);
  if (!types.includes(VC_TYPE)) throw reject(`credential: type does not include ${VC_TYPE}`);
  checkValidity(credential, now);
  const holder = holderOf(credential);
  const claims = Object.fromEntries(Object.entries(credential).filter(([name]) => !JWT_CLAIMS.includes(name)));
  return { verified: { format: 'jwt_vc_json' as const, types, issuer, claims, issuerChain: trusted.chain }, holder };
}

/**
 * Whether the JWS is signed by `key` (an alg of its curve, no crit). Its validity period is judged
 * apart, at the request's time, so that an expired credential is refused as expired.
 */
function signedBy(jws: string, key: KeyObject): boolean {
  const decoded = decodeJws(jws);
  const alg = decoded?.header.alg;
  return (
    !!decoded && typeof alg === 'string' && fitsAlgorithm(key, alg) && decoded.header.crit === undefined && verifiesWith(alg, key, decoded)
  );
}

const pick = (from: Record<string, unknown>, names: string[]) =>
  Object.fromEntries(names.filter((n) => Object.hasOwn(from, n)).map((n) => [n, from[n]]));

/** The VP JWT's binding to this request: aud (the client_id, or the audiences the context accepts), nonce, and exp/nbf when present. */
function checkBinding(payload: Record<string, unknown>, context: PresentationContext) {
  const audiences = context.audiences ?? [context.clientId];
  const aud = typesOf(payload.aud);
  if (!aud.some((value) => audiences.includes(value))) throw reject('presentation: aud is not this verifier');
  if (payload.nonce !== context.nonce) throw reject('presentation: nonce does not match the request');
}

export async function verifyVpJwt(presentation: string, context: PresentationContext): Promise<VerifiedW3cVc[]> {
  const vp = parsed(presentation, 'presentation');
  const body = isJsonObject(vp.payload.vp) ? vp.payload.vp : vp.payload;
  if (!typesOf(body.type).includes('VerifiablePresentation')) throw reject('presentation: type does not include VerifiablePresentation');
  checkBinding(vp.payload, context);
  const now = context.now.getTime() / 1000;
  const credentials = [];
  for (const jwt of credentialJwts(body)) credentials.push(await verifyCredential(jwt, context, now));
  // One holder signs the presentation: every credential names its key, and the presentation names no other holder.
  const [first] = credentials;
  const holder = first?.holder as { did: string; key: KeyObject };
  if (credentials.some((c) => !c.holder.key.equals(holder.key))) throw reject('holder binding: the credentials name different holders');
  const named = [body.holder, vp.payload.iss].find((value) => value !== undefined);
  const namedId = isJsonObject(named) ? named.id : named;
  if (namedId !== undefined && namedId !== holder.did) throw reject('holder binding: the presentation names another holder');
  if (typeof vp.header.kid === 'string' && vp.header.kid.startsWith('did:') && didOfUrl(vp.header.kid) !== holder.did)
    throw reject('holder binding: kid names another holder');
  if (!signedBy(presentation, holder.key) || !withinValidity(vp.payload, CLOCK_SKEW_SECONDS, now))
    throw reject("holder binding: the presentation is not signed by the key of the credential's subject, or is outside its exp/nbf");
  return credentials.map((c) => c.verified);
}
