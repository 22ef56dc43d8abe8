// A trusted list of ETSI TS 119 612 (XML, namespace http://uri.etsi.org/02231/v2#), read only after
// its XML-DSig signature verifies against certificates pinned for it. The signature must be
// enveloped over the whole list (Reference URI "" or "#" + the root's Id), and what is read is the
// canonical XML the signature covers (xml-crypto's getSignedReferences()), parsed again: nothing is
// read from the document as it came, so content wrapped around or beside the signed list (signature
// wrapping) is never seen.
import { createVerify, X509Certificate } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';

export const TSL_NAMESPACE = 'http://uri.etsi.org/02231/v2#';
const DSIG_NAMESPACE = 'http://www.w3.org/2000/09/xmldsig#';
/** National lists run to a few MiB (the largest near 10); the list of lists is far smaller. */
export const MAX_LIST_BYTES = 16 * 1024 * 1024;

/** Why a trusted list is not used; the message says what was wrong with it. */
export class TrustedListRefused extends Error {
  override name = 'TrustedListRefused';
}

export interface ServiceStatusPeriod {
  status: string;
  since: Date;
}

export interface TrustService {
  provider: string;
  type: string;
  name: string;
  /** Base64 DER certificates of its ServiceDigitalIdentity. */
  certificates: string[];
  /** Its current status (ServiceInformation) and its past ones (ServiceHistory), newest first. */
  statuses: ServiceStatusPeriod[];
}

export interface ListPointer {
  location: string;
  territory?: string;
  mimeType?: string;
  /** Base64 DER certificates that may sign the pointed list (ServiceDigitalIdentities). */
  signers: string[];
}

export interface TrustedList {
  sequenceNumber: number;
  territory: string;
  issued: Date;
  /** NextUpdate/dateTime; absent for a closed list. */
  nextUpdate?: Date;
  pointers: ListPointer[];
  services: TrustService[];
}

/** The statuses under which a service counts (TS 119 612 clause 5.5.4; EUDI lists use granted too). */
export const TRUSTED_STATUSES: ReadonlySet<string> = new Set([
  'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted',
  'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/recognisedatnationallevel',
]);

/** The service's status at `now`: that of the newest period begun by then. */
export function statusAt(service: TrustService, now: Date): string | undefined {
  const begun = service.statuses.filter((period) => period.since.getTime() <= now.getTime());
  begun.sort((a, b) => b.since.getTime() - a.since.getTime());
  return begun[0]?.status;
}

// ECDSA of XML-DSig (RFC 4051 section 2.3.6): the value is r || s, as Node's ieee-p1363 encoding.
function ecdsa(hash: string, uri: string) {
  return class {
    getSignature(): never {
      throw new Error('verification only');
    }
    verifySignature(material: string, key: string, signatureValue: string) {
      return createVerify(hash).update(material).verify({ key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signatureValue, 'base64'));
    }
    getAlgorithmName() {
      return uri;
    }
  };
}

/** The parse of XML from outside: no DOCTYPE (so no entities), any error refuses it. */
function parseXml(xml: string, what: string): Document {
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new TrustedListRefused(`${what}: a DOCTYPE or entity declaration is not accepted`);
  const errors: string[] = [];
  const doc = new DOMParser({
    locator: {},
    errorHandler: { warning: () => {}, error: (message) => errors.push(message), fatalError: (message) => errors.push(message) },
  }).parseFromString(xml, 'text/xml');
  if (errors.length || !doc?.documentElement)
    throw new TrustedListRefused(`${what}: it is not well-formed XML (${errors[0] ?? 'no root'})`);
  return doc as unknown as Document;
}

const isTsl = (element: Element | null) => element?.namespaceURI === TSL_NAMESPACE && element.localName === 'TrustServiceStatusList';

/** The element children of `parent` named `name` in the TSL namespace (or `namespace`). */
function children(parent: Element | undefined, name: string, namespace = TSL_NAMESPACE): Element[] {
  if (!parent) return [];
  const found: Element[] = [];
  for (let node = parent.firstChild; node; node = node.nextSibling)
    if (node.nodeType === 1 && (node as Element).localName === name && (node as Element).namespaceURI === namespace)
      found.push(node as Element);
  return found;
}
const child = (parent: Element | undefined, ...path: string[]): Element | undefined =>
  path.reduce<Element | undefined>((at, name) => children(at, name)[0], parent);
const text = (element: Element | undefined) => element?.textContent?.trim() ?? '';
/** The base64 DER of each X509Certificate under DigitalId elements of `identity`. */
const digitalIds = (identity: Element | undefined) =>
  children(identity, 'DigitalId').flatMap((id) => children(id, 'X509Certificate').map((c) => text(c).replace(/\s+/g, '')));

/** A multilingual name's first value (English first when there is one). */
function nameOf(names: Element | undefined): string {
  const all = children(names, 'Name');
  const english = all.find((name) => name.getAttribute('xml:lang') === 'en');
  return text(english ?? all[0]);
}

function dateOf(element: Element | undefined, field: string): Date {
  const date = new Date(text(element));
  if (!element || Number.isNaN(date.getTime())) throw new TrustedListRefused(`${field}: not a date`);
  return date;
}

/**
 * Verifies the list's signature against `signers` (PEM or base64 DER certificates) and returns the
 * signed document. Refused with the reason when the list is malformed, not signed by one of them,
 * or its signature does not cover the whole list.
 */
export function verifiedList(xml: string, signers: readonly string[]): Document {
  if (Buffer.byteLength(xml) > MAX_LIST_BYTES) throw new TrustedListRefused(`it is larger than ${MAX_LIST_BYTES} bytes`);
  const doc = parseXml(xml, 'the list');
  const root = doc.documentElement;
  if (!isTsl(root)) throw new TrustedListRefused('its root is not a TrustServiceStatusList of ETSI TS 119 612');
  const signatures = Array.from(doc.getElementsByTagNameNS(DSIG_NAMESPACE, 'Signature'));
  const enveloped = children(root, 'Signature', DSIG_NAMESPACE);
  if (signatures.length !== 1 || enveloped.length !== 1)
    throw new TrustedListRefused('it must carry exactly one XML signature, enveloped in its root');
  const rootId = root.getAttribute('Id');
  let lastReason = 'it is signed by none of the certificates pinned for it';
  for (const signer of signers) {
    const pem = new X509Certificate(signer.includes('-----BEGIN') ? signer : Buffer.from(signer, 'base64')).toString();
    // The key is the pinned certificate's, never one the list's KeyInfo offers.
    const check = new SignedXml({ publicCert: pem, getCertFromKeyInfo: () => null });
    check.SignatureAlgorithms = {
      'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256': check.SignatureAlgorithms['http://www.w3.org/2001/04/xmldsig-more#rsa-sha256'],
      'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512': check.SignatureAlgorithms['http://www.w3.org/2001/04/xmldsig-more#rsa-sha512'],
      'http://www.w3.org/2007/05/xmldsig-more#sha256-rsa-MGF1':
        check.SignatureAlgorithms['http://www.w3.org/2007/05/xmldsig-more#sha256-rsa-MGF1'],
      'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256': ecdsa('SHA256', 'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256'),
      'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384': ecdsa('SHA384', 'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384'),
      'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512': ecdsa('SHA512', 'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512'),
    } as typeof check.SignatureAlgorithms;
    check.loadSignature(enveloped[0] as unknown as Node);
    const references = check.getReferences();
    const wholeList = references.length === 1 && (references[0]?.uri === '' || (rootId !== null && references[0]?.uri === `#${rootId}`));
    if (!wholeList) throw new TrustedListRefused('its signature must have one reference, to the whole list (URI "" or its root Id)');
    try {
      if (check.checkSignature(xml)) {
        const [signed] = check.getSignedReferences();
        const signedDoc = parseXml(signed ?? '', 'the signed list');
        if (!isTsl(signedDoc.documentElement)) throw new TrustedListRefused('what its signature covers is not the TrustServiceStatusList');
        return signedDoc;
      }
      lastReason = 'its signature does not cover the list as it came (a reference digest differs)';
    } catch (err) {
      if (err instanceof TrustedListRefused) throw err;
      lastReason = `its signature does not verify (${err instanceof Error ? err.message.slice(0, 200) : String(err)})`;
    }
  }
  throw new TrustedListRefused(signers.length ? lastReason : 'no certificate is pinned for it');
}

/** What a verified list says (its SchemeInformation, pointers and services). */
export function readList(doc: Document): TrustedList {
  const root = doc.documentElement;
  const scheme = child(root, 'SchemeInformation');
  if (!scheme) throw new TrustedListRefused('it has no SchemeInformation');
  if (children(root, 'TrustServiceProviderList').length > 1) throw new TrustedListRefused('it has more than one TrustServiceProviderList');
  const sequenceNumber = Number(text(child(scheme, 'TSLSequenceNumber')));
  const nextUpdate = child(scheme, 'NextUpdate', 'dateTime');
  const pointers = children(child(scheme, 'PointersToOtherTSL'), 'OtherTSLPointer').map((pointer): ListPointer => {
    const information = children(child(pointer, 'AdditionalInformation'), 'OtherInformation');
    const field = (name: string) =>
      information.flatMap((info) => Array.from(info.getElementsByTagNameNS('*', name))).map((element) => text(element))[0];
    return {
      location: text(child(pointer, 'TSLLocation')),
      territory: field('SchemeTerritory'),
      mimeType: field('MimeType'),
      signers: children(child(pointer, 'ServiceDigitalIdentities'), 'ServiceDigitalIdentity').flatMap(digitalIds),
    };
  });
  const services: TrustService[] = [];
  for (const provider of children(child(root, 'TrustServiceProviderList'), 'TrustServiceProvider')) {
    const providerName = nameOf(child(provider, 'TSPInformation', 'TSPName'));
    for (const service of children(child(provider, 'TSPServices'), 'TSPService')) {
      const information = child(service, 'ServiceInformation');
      const periods = [information, ...children(child(service, 'ServiceHistory'), 'ServiceHistoryInstance')].map((period) => ({
        status: text(child(period, 'ServiceStatus')),
        since: dateOf(child(period, 'StatusStartingTime'), 'StatusStartingTime'),
      }));
      services.push({
        provider: providerName,
        type: text(child(information, 'ServiceTypeIdentifier')),
        name: nameOf(child(information, 'ServiceName')),
        certificates: digitalIds(child(information, 'ServiceDigitalIdentity')),
        statuses: periods,
      });
    }
  }
  return {
    sequenceNumber: Number.isSafeInteger(sequenceNumber) ? sequenceNumber : 0,
    territory: text(child(scheme, 'SchemeTerritory')),
    issued: dateOf(child(scheme, 'ListIssueDateTime'), 'ListIssueDateTime'),
    ...(nextUpdate && text(nextUpdate) && { nextUpdate: dateOf(nextUpdate, 'NextUpdate') }),
    pointers,
    services,
  };
}
