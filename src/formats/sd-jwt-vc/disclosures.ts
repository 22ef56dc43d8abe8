// RFC 9901 section 7.1 (step 3): the Disclosures of an SD-JWT and the digests that reference them
// must match one to one. Every presented Disclosure is referenced by exactly one digest, in the
// Issuer-signed JWT or (recursively) in the value of another referenced Disclosure, no digest
// appears twice, and a Disclosure fits the place that references it (an object property from an
// `_sd` array, an array element from a `{"...": digest}` element, never a claim its object already
// has in the clear). @sd-jwt checks none of this: it skips a Disclosure no digest references, takes
// a digest that appears twice, and lets a Disclosure replace a claim in the clear, so a presentation
// carrying what the issuer never signed passed. The rules are checked here, over the Issuer-signed
// payload and the Disclosures exactly as presented.
//
// A refusal names the Disclosure by its position, claim name (or "an array element") and digest,
// never by its value: the reason is kept in the session log, and values are personal data.
import { createHash } from 'node:crypto';
import { PresentationRejected } from '../presentation-rejected.js';

/**
 * The digest algorithms (`_sd_alg`, IANA "Named Information Hash Algorithm" names) this verifier
 * takes. sha-256 only: the KB-JWT's sd_hash and @sd-jwt's hasher (sd-jwt-vc.ts) are SHA-256 too, so
 * a credential with another algorithm could not be verified consistently.
 */
const DIGEST_ALGORITHMS = new Map([['sha-256', 'sha256']]);
const ARRAY_ELEMENT_KEY = '...';
const RESERVED_CLAIM_NAMES = new Set(['_sd', ARRAY_ELEMENT_KEY]);

interface Disclosure {
  /** 1-based position among the presented Disclosures, as the refusal names it. */
  position: number;
  digest: string;
  /** The claim name of an object property; undefined for an array element. */
  name?: string;
  value: unknown;
  referenced: boolean;
}

const reject = (reason: string) => new PresentationRejected(`credential: ${reason}`);

/** A claim name as a refusal may show it: error_description characters only (RFC 6749 appendix A.7), at most 64. */
const shown = (name: string) => `'${name.replace(/[^\x20-\x21\x23-\x26\x28-\x5B\x5D-\x7E]/g, '?').slice(0, 64)}'`;

const describe = (disclosure: Disclosure) =>
  `disclosure ${disclosure.position} (${disclosure.name === undefined ? 'an array element' : `claim ${shown(disclosure.name)}`}, digest ${disclosure.digest})`;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The Disclosures of a presentation `<issuer-jwt>~<disclosure>~...~<kb-jwt>`, as presented (the KB-JWT part may be empty). */
export function presentedDisclosures(presentation: string): string[] {
  return presentation.split('~').slice(1, -1);
}

/**
 * Refuses (PresentationRejected) unless every Disclosure is referenced exactly once by a digest of
 * the Issuer-signed JWT `payload` or of another referenced Disclosure, and no digest appears twice.
 */
export function checkDisclosureReferences(payload: Record<string, unknown>, encodedDisclosures: string[]) {
  const algorithm = payload._sd_alg ?? 'sha-256';
  // A Map, not an object: `constructor` or `toString` named by the credential must not find an inherited member.
  const hash = typeof algorithm === 'string' ? DIGEST_ALGORITHMS.get(algorithm) : undefined;
  if (!hash) throw reject(`_sd_alg ${shown(String(algorithm))} is not supported (sha-256 only)`);
  const byDigest = new Map<string, Disclosure>();
  encodedDisclosures.forEach((encoded, index) => {
    // The digest is over the base64url string exactly as presented (RFC 9901 section 4.2.3), not a re-encoding.
    const disclosure = { ...decode(encoded, index + 1), digest: createHash(hash).update(encoded, 'ascii').digest('base64url') };
    const earlier = byDigest.get(disclosure.digest);
    if (earlier) throw reject(`${describe(disclosure)} is presented twice (also as disclosure ${earlier.position})`);
    byDigest.set(disclosure.digest, disclosure);
  });
  walk(payload, byDigest, new Set());
  const unreferenced = [...byDigest.values()].find((disclosure) => !disclosure.referenced);
  if (unreferenced) throw reject(`${describe(unreferenced)} is referenced by no digest of the credential (RFC 9901 section 7.1)`);
}

/** [salt, name, value] (an object property) or [salt, value] (an array element), salt and name strings. */
function decode(encoded: string, position: number): Omit<Disclosure, 'digest'> {
  const malformed = () => reject(`disclosure ${position} is not a base64url-encoded JSON array [salt, name, value] or [salt, value]`);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) throw malformed();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  if (!Array.isArray(parsed) || typeof parsed[0] !== 'string') throw malformed();
  if (parsed.length === 2) return { position, value: parsed[1], referenced: false };
  if (parsed.length !== 3 || typeof parsed[1] !== 'string') throw malformed();
  if (RESERVED_CLAIM_NAMES.has(parsed[1])) throw reject(`disclosure ${position} discloses the reserved name ${shown(parsed[1])}`);
  return { position, name: parsed[1], value: parsed[2], referenced: false };
}

/** Marks the Disclosure `digest` references (if one was presented) and returns it; a digest seen before refuses. */
function reference(digest: unknown, byDigest: Map<string, Disclosure>, seen: Set<string>): Disclosure | undefined {
  if (typeof digest !== 'string') throw reject('a digest of the credential is not a string');
  if (seen.has(digest)) throw reject(`digest ${shown(digest)} appears more than once in the credential (RFC 9901 section 7.1)`);
  seen.add(digest);
  const disclosure = byDigest.get(digest);
  if (disclosure) disclosure.referenced = true;
  return disclosure;
}

/**
 * Every digest in `node`, and in the values of the Disclosures they reference (recursive
 * Disclosures). A digest is followed once (a second sighting refuses), so this ends.
 */
function walk(node: unknown, byDigest: Map<string, Disclosure>, seen: Set<string>) {
  if (Array.isArray(node)) {
    for (const element of node) {
      const isDigest = isObject(element) && Object.keys(element).length === 1 && ARRAY_ELEMENT_KEY in element;
      if (!isDigest) {
        walk(element, byDigest, seen);
        continue;
      }
      const disclosure = reference(element[ARRAY_ELEMENT_KEY], byDigest, seen);
      if (!disclosure) continue;
      if (disclosure.name !== undefined) throw reject(`${describe(disclosure)} is an object property, referenced as an array element`);
      walk(disclosure.value, byDigest, seen);
    }
    return;
  }
  if (!isObject(node)) return;
  const names = new Set(Object.keys(node).filter((key) => key !== '_sd'));
  if ('_sd' in node) {
    if (!Array.isArray(node._sd)) throw reject('an _sd member of the credential is not an array of digests');
    for (const digest of node._sd) {
      const disclosure = reference(digest, byDigest, seen);
      if (!disclosure) continue;
      if (disclosure.name === undefined) throw reject(`${describe(disclosure)} is an array element, referenced from an object's _sd`);
      if (names.has(disclosure.name)) throw reject(`${describe(disclosure)} discloses a claim its object already has`);
      names.add(disclosure.name);
      walk(disclosure.value, byDigest, seen);
    }
  }
  for (const [key, value] of Object.entries(node)) if (key !== '_sd') walk(value, byDigest, seen);
}
