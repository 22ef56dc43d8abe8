// Whether a certificate chain (x5c, leaf first) leads to a trusted certificate: an issuer's to the
// tenant's trust lists, a wallet provider's to its anchors, signed schema metadata to the trust lists.
import { createHash, type KeyObject, X509Certificate } from 'node:crypto';

interface Parsed {
  cert: X509Certificate;
  notBefore: number;
  notAfter: number;
  key?: KeyObject;
}

// The same issuer chains and trust anchors come with every presentation: each is parsed once.
// Certificates are immutable, so a parsed one can serve any tenant; the cache is bounded.
const parsed = new Map<string, Parsed>();
const PARSED_MAX = 2_000;
/** Far beyond any real chain (leaf, an intermediate or two, the root); longer ones are refused unparsed. */
export const MAX_CHAIN_LENGTH = 10;

function parse(encoded: string, form: 'der-base64' | 'pem'): Parsed {
  const known = parsed.get(encoded);
  if (known) return known;
  const cert = new X509Certificate(form === 'pem' ? encoded : Buffer.from(encoded, 'base64'));
  const entry = { cert, notBefore: Date.parse(cert.validFrom), notAfter: Date.parse(cert.validTo) };
  if (parsed.size >= PARSED_MAX) parsed.clear();
  parsed.set(encoded, entry);
  return entry;
}

// The same wallet provider chain comes with every PAR and token request, the same issuer chain with
// every presentation: a chain found to lead to the trusted certificates is remembered, keyed by the
// chain and those certificates (so the trust anchors of one tenant never vouch for a chain under
// another's), with the time span in which every certificate its acceptance rested on is valid. Only
// acceptances are remembered, and only for that span: outside it, and for a chain not accepted
// before, the chain is checked in full. Whether a chain leads to anchors depends on nothing else
// (certificates are immutable; revocation is not part of this check). The cache is bounded.
interface Acceptance {
  from: number;
  until: number;
}
const acceptances = new Map<string, Acceptance>();
const ACCEPTANCES_MAX = 1_000;

const acceptanceKey = (x5c: string[], trustedPems: string[]) =>
  createHash('sha256')
    .update(JSON.stringify([x5c, trustedPems]))
    .digest('base64url');

/**
 * True when some certificate of the chain is trusted itself, or is issued and signed by a trusted CA
 * certificate, with every link of the chain up to there issued and signed by the next, which must be
 * a CA (a leaf's key signs no certificates), and valid now.
 */
export function chainsToTrusted(x5c: string[], trustedPems: string[], now: Date): boolean {
  if (x5c.length > MAX_CHAIN_LENGTH) return false;
  const at = now.getTime();
  const key = acceptanceKey(x5c, trustedPems);
  const known = acceptances.get(key);
  if (known && known.from <= at && at <= known.until) return true;
  const accepted = checkChain(x5c, trustedPems, at);
  if (!accepted) return false;
  if (acceptances.size >= ACCEPTANCES_MAX) acceptances.clear();
  acceptances.set(key, accepted);
  return true;
}

/** chainsToTrusted's check in full; when accepted, the span in which all it relied on is valid. */
function checkChain(x5c: string[], trustedPems: string[], at: number): Acceptance | undefined {
  let chain: Parsed[];
  let trusted: Parsed[];
  try {
    chain = x5c.map((der) => parse(der, 'der-base64'));
    trusted = trustedPems.map((pem) => parse(pem, 'pem'));
  } catch {
    return undefined;
  }
  const valid = (c: Parsed) => c.notBefore <= at && at <= c.notAfter;
  const span: Acceptance = { from: Number.NEGATIVE_INFINITY, until: Number.POSITIVE_INFINITY };
  const relyOn = (c: Parsed) => {
    span.from = Math.max(span.from, c.notBefore);
    span.until = Math.min(span.until, c.notAfter);
  };
  for (let i = 0; i < chain.length; i++) {
    const link = chain[i] as Parsed;
    if (!valid(link)) return undefined;
    if (i > 0 && !issuedBy(chain[i - 1] as Parsed, link)) return undefined;
    relyOn(link);
    if (trusted.some((t) => t.cert.raw.equals(link.cert.raw))) return span;
    const anchor = trusted.find((t) => valid(t) && issuedBy(link, t));
    if (anchor) {
      relyOn(anchor);
      return span;
    }
  }
  return undefined;
}

/** `subject` names `issuer` as its issuer and is signed by its key, and `issuer` is a CA. */
function issuedBy(subject: Parsed, issuer: Parsed): boolean {
  return issuer.cert.ca && subject.cert.checkIssued(issuer.cert) && subject.cert.verify(issuer.cert.publicKey);
}

/** The public key of a certificate (base64 DER, as in x5c), parsed once. */
export function certificateKey(der: string): KeyObject {
  const entry = parse(der, 'der-base64');
  entry.key ??= entry.cert.publicKey;
  return entry.key;
}
