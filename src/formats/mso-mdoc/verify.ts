// Verifying an mso_mdoc presentation (ISO 18013-5 DeviceResponse) for a presentation request
// (OpenID4VP 1.0 appendix B.2: the vp_token entry is the base64url-encoded DeviceResponse).
//
// @owf/mdoc's Verifier checks, per document: the device signature over DeviceAuthentication (with
// the OpenID4VP session transcript), the issuer signature of the MSO, the document signer chain to a
// trusted certificate, the MSO validity window and the digest of every presented element. It reports
// each check through onCheck; any FAILED one rejects. What it leaves to us is checked here: a
// non-empty document list without errors, a detached device signature payload (an attached one would
// be verified instead of this session's DeviceAuthentication), and a document docType that is the one
// the issuer signed. The certificates the signer chain must lead to are the trust layer's answer
// (src/trust issuerChainAnchors). The MSO's `status` entry (Token Status List, "Referenced Token in
// COSE": a text key `status` holding {"status_list": {"idx", "uri"}}) is returned for the status
// check (status.ts).
import { X509Certificate } from 'node:crypto';
import {
  DataItem,
  DateOnly,
  DeviceResponse,
  type Document,
  type IssuerSignedItem,
  SessionTranscript,
  type VerificationAssessment,
  Verifier,
} from '@owf/mdoc';
import { calculateJwkThumbprint } from 'jose';
import { CborValueSharingRefused } from '../../platform/crypto/cbor-value-sharing.js';
import { mdocContext } from '../../platform/crypto/mdoc-context.js';
import { x509 } from '../../platform/crypto/x509-library.js';
import { issuerChainAnchors } from '../../trust/index.js';
import type { PresentationContext } from '../presentation-context.js';
import { PresentationRejected } from '../presentation-rejected.js';

const reject = (reason: string) => new PresentationRejected(reason);

export interface VerifiedMdoc {
  format: 'mso_mdoc';
  docType: string;
  /** Issuer-signed elements by namespace, JSON-friendly (see toJson). */
  claims: Record<string, Record<string, unknown>>;
  /** The subject of the document signer certificate. */
  issuer?: string;
  /** The MSO's status list reference, as signed by the issuer; checked by StatusListChecker. */
  status?: { status_list?: { idx: number; uri: string } };
  /** The x5chain of the issuer signature (base64 DER, signer first), for trusted_authorities; not kept with the result. */
  issuerChain: string[];
}

const CLOCK_SKEW_SECONDS = 30;
/**
 * Far beyond what one request asks for. Each document costs signature and chain checks: the count is
 * bounded before anything is verified (CBOR shared references, which would let a few bytes name one
 * document thousands of times, are refused as the response is decoded: cbor-value-sharing.ts).
 */
const MAX_DOCUMENTS = 10;
const CATEGORY: Record<VerificationAssessment['category'], string> = {
  DOCUMENT_FORMAT: 'mdoc document format',
  DEVICE_AUTH: 'mdoc device authentication (device signature over the session transcript of this request)',
  ISSUER_AUTH: 'mdoc issuer authentication',
  DATA_INTEGRITY: 'mdoc data integrity',
  READER_AUTH: 'mdoc reader authentication',
};

/**
 * OpenID4VP 1.0 B.2.6.1: SessionTranscript [null, null, ["OpenID4VPHandover", sha-256(CBOR([client_id,
 * nonce, jwkThumbprint or null, response_uri]))]], jwkThumbprint being the SHA-256 JWK thumbprint
 * (RFC 7638) of the key the response was encrypted to. Over the DC API (B.2.6.2):
 * [null, null, ["OpenID4VPDCAPIHandover", sha-256(CBOR([origin, nonce, jwkThumbprint or null]))]].
 */
export async function oid4vpSessionTranscript(
  context: Pick<PresentationContext, 'clientId' | 'nonce' | 'responseUri' | 'encryptionJwk' | 'origin'>,
) {
  const jwkThumbprint = context.encryptionJwk
    ? Buffer.from(await calculateJwkThumbprint(context.encryptionJwk, 'sha256'), 'base64url')
    : undefined;
  if (context.origin !== undefined)
    return SessionTranscript.forOid4VpDcApi(
      { origin: context.origin, nonce: context.nonce, ...(jwkThumbprint && { jwkThumbprint }) },
      mdocContext,
    );
  return SessionTranscript.forOid4Vp(
    { clientId: context.clientId, nonce: context.nonce, responseUri: context.responseUri, ...(jwkThumbprint && { jwkThumbprint }) },
    mdocContext,
  );
}

/** Element values as JSON: tdate as an ISO date-time, full-date as YYYY-MM-DD, bytes as base64url, maps as objects. */
function toJson(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw reject('mdoc: an element holds an invalid date');
    return value.toISOString();
  }
  if (value instanceof DateOnly) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64url');
  if (value instanceof DataItem) return toJson(value.data);
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Array.isArray(value)) return value.map(toJson);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), toJson(v)]));
  if (typeof value === 'object') {
    const tagged = value as { tag?: unknown; value?: unknown };
    if (typeof tagged.tag === 'number' && 'value' in tagged) return toJson(tagged.value);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJson(v)]));
  }
  return value;
}

function decode(presentation: string): DeviceResponse {
  if (!/^[A-Za-z0-9_-]+$/.test(presentation)) throw reject('mdoc: the presentation is not a base64url-encoded DeviceResponse');
  try {
    return DeviceResponse.fromEncodedForOid4Vp(presentation);
  } catch (err) {
    const sharing = err instanceof CborValueSharingRefused ? ` (${err.message})` : '';
    throw reject(`mdoc: the presentation is not a base64url-encoded DeviceResponse${sharing}`);
  }
}

/** The rules the library does not check. */
function checkStructure(response: DeviceResponse): Document[] {
  if (response.status !== 0) throw reject(`mdoc: the DeviceResponse has status ${response.status}, not OK (0)`);
  if (response.documentErrors?.length) throw reject('mdoc: the DeviceResponse reports documentErrors');
  const documents = response.documents ?? [];
  if (documents.length === 0) throw reject('mdoc: the DeviceResponse holds no document');
  if (documents.length > MAX_DOCUMENTS) throw reject(`mdoc: the DeviceResponse holds more than ${MAX_DOCUMENTS} documents`);
  for (const document of documents) {
    if (document.errors && document.errors.size > 0) throw reject(`mdoc: document ${document.docType} reports errors for some elements`);
    const { deviceSignature } = document.deviceSigned.deviceAuth;
    if (!deviceSignature)
      throw reject(`mdoc device authentication: document ${document.docType} has no device signature (MAC is not supported)`);
    if (deviceSignature.payload !== null && deviceSignature.payload !== undefined) {
      throw reject(`mdoc device authentication: the device signature of ${document.docType} must have a detached payload`);
    }
    const msoDocType = document.issuerSigned.issuerAuth.mobileSecurityObject.docType;
    if (msoDocType !== document.docType)
      throw reject(`mdoc: document docType ${document.docType} is not the docType the issuer signed (${msoDocType})`);
  }
  return documents;
}

/**
 * The `status` entry of a verified document's MSO. @owf/mdoc's MobileSecurityObject has no field for
 * it but keeps additional keys of the MSO map, decoded (maps as Map) from the very payload whose
 * issuer signature was verified. Without a status_list reference there is nothing to check. A status
 * entry or status_list that is not a map rejects (fail closed); idx and uri are checked by StatusListChecker.
 */
function msoStatus(document: Document): VerifiedMdoc['status'] {
  const entries: Map<unknown, unknown> = document.issuerSigned.issuerAuth.mobileSecurityObject.decodedStructure.toMap();
  if (!entries.has('status')) return undefined;
  const status = entries.get('status');
  if (!(status instanceof Map)) throw reject(`mdoc: the MSO of ${document.docType} has a malformed status entry (not a map)`);
  if (!status.has('status_list')) return undefined;
  const list = status.get('status_list');
  if (!(list instanceof Map)) throw reject(`mdoc: the MSO of ${document.docType} has a malformed status_list (not a map)`);
  // As JSON (a bigint idx becomes a number when safe, a string otherwise, which the status check refuses).
  return { status_list: toJson(list) as { idx: number; uri: string } };
}

const describe = (check: VerificationAssessment) =>
  `${CATEGORY[check.category] ?? check.category}: ${check.check}${check.reason && check.reason !== check.check ? ` (${check.reason})` : ''}`;

/** The trust anchors as DER, and a note for each that cannot be read as an X.509 certificate (left out). */
function readTrustAnchors(pems: string[]) {
  const trustedCertificates: Uint8Array[] = [];
  const unreadable: string[] = [];
  pems.forEach((pem, index) => {
    try {
      trustedCertificates.push(new Uint8Array(new X509Certificate(pem).raw));
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      unreadable.push(`trusted certificate ${index + 1} of ${pems.length} could not be read (${why}) and was left out`);
    }
  });
  return { trustedCertificates, unreadable };
}

/**
 * `sessionTranscript`, when given, replaces the OpenID4VP one the context implies: ISO 18013-7
 * Annex C binds the device signature to its own handover (annex-c/transcript.ts).
 */
export async function verifyMdocPresentation(
  presentation: string,
  context: PresentationContext,
  sessionTranscript?: SessionTranscript,
): Promise<VerifiedMdoc[]> {
  const response = decode(presentation);
  let documents: Document[];
  try {
    documents = checkStructure(response);
  } catch (err) {
    if (err instanceof PresentationRejected) throw err;
    throw reject(`mdoc: malformed document (${err instanceof Error ? err.message : String(err)})`);
  }
  const { trustedCertificates, unreadable } = readTrustAnchors(await issuerChainAnchors(context));
  // An anchor that cannot be read trusts nothing; a refusal says so, since a missing anchor may be why.
  const refuse = (reason: string) => reject(unreadable.length ? `${reason}; ${unreadable.join('; ')}` : reason);
  const transcript = sessionTranscript ?? (await oid4vpSessionTranscript(context));
  const checks: VerificationAssessment[] = [];
  try {
    await Verifier.verifyDeviceResponse(
      {
        deviceResponse: response,
        sessionTranscript: transcript,
        trustedCertificates,
        disableCertificateChainValidation: false,
        now: context.now,
        skewSeconds: CLOCK_SKEW_SECONDS,
        onCheck: (check) => checks.push(check),
      },
      mdocContext,
    );
  } catch (err) {
    const failedSoFar = checks.filter((c) => c.status === 'FAILED');
    if (failedSoFar.length) throw refuse(failedSoFar.map(describe).join('; '));
    throw refuse(`mdoc: the DeviceResponse could not be verified (${err instanceof Error ? err.message : String(err)})`);
  }
  // Every failed check is named, the first one first.
  const failed = checks.filter((c) => c.status === 'FAILED');
  if (failed.length) throw refuse(failed.map(describe).join('; '));
  // The checks a verified document must have passed: a library change that skipped one fails closed.
  for (const required of [
    'Device signature must be valid',
    'Issuer certificate must be valid',
    'Issuer auth signature is invalid',
    'The MSO must be valid at the time of verification',
  ]) {
    const passed = checks.filter((c) => c.status === 'PASSED' && c.check === required).length;
    if (passed < documents.length) throw refuse(`mdoc: the check '${required}' did not run for every document`);
  }
  return documents.map((document) => {
    // fromEntries defines own properties, so an element named __proto__ stays an element
    const namespaces = [...(document.issuerSigned.issuerNamespaces?.issuerNamespaces ?? new Map<string, IssuerSignedItem[]>())];
    const claims = Object.fromEntries(
      namespaces.map(([namespace, items]) => [
        namespace,
        Object.fromEntries(items.map((item) => [item.elementIdentifier, toJson(item.elementValue)])),
      ]),
    );
    const signer = new x509.X509Certificate(new Uint8Array(document.issuerSigned.issuerAuth.certificate));
    const status = msoStatus(document);
    const issuerChain = document.issuerSigned.issuerAuth.certificateChain.map((der) => Buffer.from(der).toString('base64'));
    return {
      format: 'mso_mdoc' as const,
      docType: document.docType,
      claims,
      issuer: signer.subject,
      ...(status && { status }),
      issuerChain,
    };
  });
}
