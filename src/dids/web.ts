// did:web (W3C CCG did:web method): the DID of an issuer URL, the URL of a did:web's document, the
// DID document the service serves for a tenant, and resolving another one's key through the
// service's outbound client (with its address policy; the service's own documents are read in-process).
import type { JWK } from 'jose';
import { isJsonObject, parseOutsideJson } from '../platform/json.js';
import type { UrlReader } from '../platform/outbound/own-urls.js';
import { publicEcJwk } from './encoding.js';

const DID_CONTEXT = ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/suites/jws-2020/v1'];
const MAX_DOCUMENT_BYTES = 256 * 1024;

/** did:web of an https URL's host and path: the port percent-encoded, path segments joined by ':'. */
export function didWebOf(url: string): string {
  const parsed = new URL(url);
  const segments = parsed.pathname.split('/').filter(Boolean).map(encodeURIComponent);
  return ['did:web', encodeURIComponent(parsed.host), ...segments].join(':');
}

/**
 * Where a did:web's document is: https://{host}/{path}/did.json, or /.well-known/did.json without a
 * path. `ownOrigin` (PUBLIC_URL's origin) replaces https://{host} when the host is the service's own,
 * so that its own DIDs resolve where it serves them (http outside production, in-process anyway).
 */
export function didWebDocumentUrl(did: string, ownOrigin?: string): URL | undefined {
  if (!did.startsWith('did:web:')) return undefined;
  const [encodedHost, ...segments] = did.slice('did:web:'.length).split(':');
  let host: string;
  let path: string[];
  try {
    host = decodeURIComponent(encodedHost ?? '');
    path = segments.map(decodeURIComponent);
  } catch {
    return undefined;
  }
  if (!host || host.includes('/') || path.some((segment) => !segment || segment.includes('/') || segment === '..')) return undefined;
  const own = ownOrigin ? new URL(ownOrigin) : undefined;
  const origin = own && own.host === host ? own.origin : `https://${host}`;
  try {
    return new URL(`${origin}/${path.length ? `${path.join('/')}/did.json` : '.well-known/did.json'}`);
  } catch {
    return undefined;
  }
}

/** The DID document of an issuer: each of its keys a JsonWebKey verification method `{did}#{kid}`, all for assertions. */
export function didDocument(did: string, keys: JWK[]) {
  const methods = keys.map((key) => ({
    id: `${did}#${key.kid}`,
    type: 'JsonWebKey',
    controller: did,
    // A key's certificate chain (x5c) stays: a verifier may trust the key through it.
    publicKeyJwk: { ...publicEcJwk(key), ...(key.x5c && { x5c: key.x5c }) },
  }));
  return {
    '@context': DID_CONTEXT,
    id: did,
    verificationMethod: methods,
    assertionMethod: methods.map((method) => method.id),
  };
}

export class DidResolutionFailed extends Error {}

/** What verifiers ask of DID resolution: the key of an assertion method. */
export type DidKeyResolver = Pick<DidWebResolver, 'assertionKey'>;

/** Reads did:web documents through the outbound client (OwnUrlsFirst in front of it: the service's own are read in-process). */
export class DidWebResolver {
  constructor(
    private readonly reader: UrlReader,
    /** PUBLIC_URL: its host's DIDs are the service's own. */
    private readonly publicUrl: string,
  ) {}

  /**
   * The public JWK of an assertion method of a did:web, by its DID URL (did:web:...#key), with the
   * x5c its publicKeyJwk carries; throws DidResolutionFailed.
   */
  async assertionKey(didUrl: string): Promise<JWK> {
    const [did = '', fragment] = didUrl.split('#');
    const url = didWebDocumentUrl(did, this.publicUrl);
    if (!url || !fragment) throw new DidResolutionFailed(`${didUrl} is not a did:web DID URL with a key fragment`);
    let document: unknown;
    try {
      const reply = await this.reader.request(url, {
        headers: { accept: 'application/did+json, application/json' },
        maxBytes: MAX_DOCUMENT_BYTES,
      });
      if (!reply.ok) throw new Error(`${url} answered ${reply.status}`);
      document = parseOutsideJson(reply.body.toString('utf8'), 'DID document');
    } catch (err) {
      throw new DidResolutionFailed(`${did} does not resolve: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!isJsonObject(document) || document.id !== did)
      throw new DidResolutionFailed(`the DID document of ${did} does not name it as its id`);
    const wanted = new Set([didUrl, `#${fragment}`]);
    const asserting = Array.isArray(document.assertionMethod) ? document.assertionMethod : [];
    const listed = asserting.some((entry) =>
      typeof entry === 'string' ? wanted.has(entry) : isJsonObject(entry) && wanted.has(String(entry.id)),
    );
    if (!listed) throw new DidResolutionFailed(`${didUrl} is not an assertion method of ${did}`);
    const methods = [...(Array.isArray(document.verificationMethod) ? document.verificationMethod : []), ...asserting];
    const method = methods.find((entry) => isJsonObject(entry) && wanted.has(String(entry.id)));
    const jwk = isJsonObject(method) ? method.publicKeyJwk : undefined;
    if (!isJsonObject(jwk) || jwk.kty !== 'EC' || jwk.d !== undefined)
      throw new DidResolutionFailed(`${didUrl} names no public EC key as publicKeyJwk`);
    const x5c = Array.isArray(jwk.x5c) && jwk.x5c.every((c) => typeof c === 'string') ? (jwk.x5c as string[]) : undefined;
    return { ...publicEcJwk(jwk as JWK), ...(x5c && { x5c }) };
  }
}
