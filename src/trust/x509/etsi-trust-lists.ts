// The certificates of a trusted list a DCQL query names by URL (trusted_authorities of type etsi_tl,
// OpenID4VP 1.0 section 6.1.1.1), fetched through the outbound client and kept a while per instance.
// Two encodings are read: the JSON list of trusted entities of ETSI TS 119 602 (LoTE, as svc serves
// its own trust lists: a compact JWS, or the bare document), and the XML trusted list of ETSI TS 119
// 612, whose X509Certificate elements are taken wherever they stand. Pointers to other lists (a list
// of lists) are not followed, and the list's own signature is not checked: the list is trusted
// because the tenant named its URL in its query, as a trust list it adds itself is. A list that is
// the LOTL or a national list of a tenant's EU trusted lists (src/trust/etsi-tsl) is read from its
// verified copy instead: only its services of status granted count.
import { X509Certificate } from 'node:crypto';
import { toPem } from '../../platform/crypto/x509.js';
import { isJsonObject, parseOutsideJson } from '../../platform/json.js';
import type { OutboundClient } from '../../platform/outbound/client.js';
import { TtlCache } from '../../platform/ttl-cache.js';

/** National trusted lists run to a few MiB; the EU list of lists is far smaller. */
const MAX_LIST_BYTES = 8 * 1024 * 1024;
const MAX_CERTIFICATES = 10_000;
const LIST_TTL_MS = 10 * 60_000;
/** A list that could not be read is not fetched again for each presentation that names it. */
const FAILURE_TTL_MS = 30_000;

/** Why a trusted list gave no certificates; the presentation that named it is rejected with it. */
export class TrustListUnreadable extends Error {
  override name = 'TrustListUnreadable';
}

// Each X509Certificate element's base64 content, with or without a namespace prefix. The content
// class holds no '<', so a match never spans elements and the scan stays linear.
const XML_CERTIFICATE = /<(?:[A-Za-z_][\w.-]*:)?X509Certificate(?:\s[^>]*)?>([^<]*)<\/(?:[A-Za-z_][\w.-]*:)?X509Certificate>/g;

/** The base64 DER certificates of a LoTE document: every service digital identity of every entity. */
function loteCertificates(document: unknown): string[] {
  const lote = isJsonObject(document) ? document.LoTE : undefined;
  const entities = isJsonObject(lote) && Array.isArray(lote.TrustedEntitiesList) ? lote.TrustedEntitiesList : [];
  const certificates: string[] = [];
  for (const entity of entities) {
    const services = isJsonObject(entity) && Array.isArray(entity.TrustedEntityServices) ? entity.TrustedEntityServices : [];
    for (const service of services) {
      const information = isJsonObject(service) ? service.ServiceInformation : undefined;
      const identity = isJsonObject(information) ? information.ServiceDigitalIdentity : undefined;
      const listed = isJsonObject(identity) && Array.isArray(identity.X509Certificates) ? identity.X509Certificates : [];
      for (const item of listed) if (isJsonObject(item) && typeof item.val === 'string') certificates.push(item.val);
    }
  }
  return certificates;
}

/** The payload of a compact JWS, or the text itself when it is not one. */
function jwsPayloadOrText(text: string): string {
  const parts = text.trim().split('.');
  if (parts.length !== 3 || !parts.every((part) => /^[A-Za-z0-9_-]*$/.test(part))) return text;
  return Buffer.from(parts[1] as string, 'base64url').toString('utf8');
}

/** The base64 DER certificates the list holds, by its encoding (XML, LoTE JSON, LoTE JWS). */
export function listedCertificates(body: string): string[] {
  const text = body.trimStart();
  if (text.startsWith('<')) return [...text.matchAll(XML_CERTIFICATE)].map((match) => (match[1] as string).replace(/\s+/g, ''));
  try {
    return loteCertificates(parseOutsideJson(jwsPayloadOrText(text)));
  } catch {
    throw new TrustListUnreadable(
      'it is neither an XML trusted list (ETSI TS 119 612) nor a JSON list of trusted entities (ETSI TS 119 602)',
    );
  }
}

/** PEM certificates from base64 DER; an entry that is not a certificate is left out. */
function asPem(certificates: string[]): string[] {
  const pems: string[] = [];
  for (const base64 of certificates.slice(0, MAX_CERTIFICATES)) {
    try {
      pems.push(toPem([new X509Certificate(Buffer.from(base64, 'base64'))]));
    } catch {
      // A malformed entry trusts nothing; the others still count.
    }
  }
  return pems;
}

export class EtsiTrustLists {
  private readonly lists = new TtlCache<string[]>(LIST_TTL_MS, { maxEntries: 200, failureTtlMs: FAILURE_TTL_MS });

  constructor(
    private readonly outbound: OutboundClient,
    /** The certificates of a verified copy of the list at a URL (a tenant's EU trusted lists), when one is kept. */
    private readonly verified: (url: string) => string[] | undefined = () => undefined,
  ) {}

  /** The PEM certificates of the list at `url`; TrustListUnreadable says why there are none. */
  async certificates(url: string): Promise<string[]> {
    return this.verified(url) ?? this.lists.get(url, () => this.load(url));
  }

  private async load(url: string): Promise<string[]> {
    let reply: Awaited<ReturnType<OutboundClient['request']>>;
    try {
      reply = await this.outbound.request(url, { maxBytes: MAX_LIST_BYTES });
    } catch (err) {
      throw new TrustListUnreadable(`it could not be fetched (${err instanceof Error ? err.message : String(err)})`);
    }
    if (!reply.ok) throw new TrustListUnreadable(`it answered HTTP ${reply.status}`);
    const pems = asPem(listedCertificates(reply.body.toString('utf8')));
    if (pems.length === 0) throw new TrustListUnreadable('it lists no certificate');
    return pems;
  }
}
