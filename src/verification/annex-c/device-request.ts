// The DeviceRequest of an Annex C request (ISO 18013-5 8.3.2.1.2.1, version 1.1): one DocRequest
// per mso_mdoc credential query of the presentation configuration's DCQL, its ItemsRequest naming the
// docType and the [namespace, element] paths of the query's claims, and a ReaderAuth: a COSE_Sign1
// with a detached payload over ReaderAuthenticationBytes = #6.24(bstr .cbor ["ReaderAuthentication",
// SessionTranscript, ItemsRequestBytes]), signed with the tenant's access key chain, its certificate
// chain in the unprotected header (x5chain, label 33).
import { Tag } from 'cbor-x';
import type { Signer } from '../../key-chains/signing.js';
import { badRequest } from '../../platform/http/problem.js';
import { nullRecord } from '../../platform/json.js';
import { type AnnexCTranscript, cbor } from './transcript.js';

const DEVICE_REQUEST_VERSION = '1.1';
const ENCODED_CBOR_TAG = 24;
/** COSE header labels and algorithm identifiers (RFC 9052, RFC 9053). */
const COSE_ALG_LABEL = 1;
const COSE_X5CHAIN_LABEL = 33;
const COSE_ALG: Record<Signer['algorithm'], number> = { ES256: -7, ES384: -35, ES512: -36 };

/** What one DocRequest asks for, and the credential query it answers. */
export interface ItemsRequestOf {
  queryId: string;
  docType: string;
  /** namespace → element → intent to retain */
  nameSpaces: Record<string, Record<string, boolean>>;
}

interface DcqlClaim {
  path?: unknown;
  intent_to_retain?: unknown;
}
interface DcqlCredentialQuery {
  id?: unknown;
  format?: unknown;
  meta?: { doctype_value?: unknown };
  claims?: DcqlClaim[];
}

const refuse = (message: string) =>
  badRequest(`requestId: ${message}`, [{ field: 'body.requestId', message: `response_type 'iso-18013-7': ${message}` }]);

/**
 * The items each credential query asks for. Annex C carries mso_mdoc only, and a DeviceRequest names
 * the elements it wants, so every query must be mso_mdoc with a doctype_value and claims; its
 * documents come back by docType, so two queries may not share one. Values and credential sets are
 * not expressible here: the DCQL check of the response decides them, as for the other flows.
 */
export function itemsRequestsOf(dcqlQuery: Record<string, unknown>): ItemsRequestOf[] {
  const queries = (dcqlQuery.credentials as DcqlCredentialQuery[] | undefined) ?? [];
  if (queries.length === 0) throw refuse('the DCQL query has no credential query');
  const seen = new Set<string>();
  return queries.map((query) => {
    const id = String(query.id);
    if (query.format !== 'mso_mdoc') throw refuse(`credential query '${id}' is ${String(query.format)}; Annex C carries mso_mdoc only`);
    const docType = query.meta?.doctype_value;
    if (typeof docType !== 'string' || !docType) throw refuse(`credential query '${id}' has no meta.doctype_value`);
    if (seen.has(docType)) throw refuse(`two credential queries ask for ${docType}; a DeviceResponse could not tell them apart`);
    seen.add(docType);
    if (!query.claims?.length) throw refuse(`credential query '${id}' names no claims; a DeviceRequest must name the elements it asks for`);
    // Namespaces and elements are the query's names: records without a prototype hold them.
    const nameSpaces = nullRecord<Record<string, boolean>>();
    for (const claim of query.claims) {
      const path = claim.path;
      if (!Array.isArray(path) || path.length !== 2 || typeof path[0] !== 'string' || typeof path[1] !== 'string')
        throw refuse(`credential query '${id}': an mso_mdoc claim path is [namespace, element]`);
      const [namespace, element] = path as [string, string];
      nameSpaces[namespace] ??= nullRecord();
      nameSpaces[namespace][element] = claim.intent_to_retain === true;
    }
    return { queryId: id, docType, nameSpaces };
  });
}

function itemsRequestBytes(items: ItemsRequestOf): Uint8Array {
  const nameSpaces = new Map(
    Object.entries(items.nameSpaces).map(([namespace, elements]) => [namespace, new Map(Object.entries(elements))]),
  );
  return new Uint8Array(
    cbor.encode(
      new Map<string, unknown>([
        ['docType', items.docType],
        ['nameSpaces', nameSpaces],
      ]),
    ),
  );
}

/** ReaderAuthenticationBytes for one ItemsRequest (as its encoded bytes) and the transcript. */
export function readerAuthenticationBytes(transcript: AnnexCTranscript, itemsRequest: Uint8Array): Uint8Array {
  const readerAuthentication = cbor.encode(['ReaderAuthentication', transcript.structure, new Tag(itemsRequest, ENCODED_CBOR_TAG)]);
  return new Uint8Array(cbor.encode(new Tag(readerAuthentication, ENCODED_CBOR_TAG)));
}

/** COSE_Sign1 [protected, unprotected, null, signature]: the payload is detached, the verifier rebuilds it. */
async function readerAuth(signer: Signer, detachedPayload: Uint8Array) {
  const protectedHeader = new Uint8Array(cbor.encode(new Map([[COSE_ALG_LABEL, COSE_ALG[signer.algorithm]]])));
  const chain = signer.x5c.map((der) => new Uint8Array(Buffer.from(der, 'base64')));
  const unprotected = new Map<number, unknown>([[COSE_X5CHAIN_LABEL, chain.length === 1 ? chain[0] : chain]]);
  const toBeSigned = cbor.encode(['Signature1', protectedHeader, new Uint8Array(), detachedPayload]);
  const signature = await signer.sign(toBeSigned);
  return [protectedHeader, unprotected, null, new Uint8Array(signature)];
}

/** The DeviceRequest as base64url CBOR, each DocRequest signed by `signer` over `transcript`. */
export async function deviceRequest(items: ItemsRequestOf[], transcript: AnnexCTranscript, signer: Signer): Promise<string> {
  const docRequests = [];
  for (const request of items) {
    const encoded = itemsRequestBytes(request);
    docRequests.push(
      new Map<string, unknown>([
        ['itemsRequest', new Tag(encoded, ENCODED_CBOR_TAG)],
        ['readerAuth', await readerAuth(signer, readerAuthenticationBytes(transcript, encoded))],
      ]),
    );
  }
  const request = new Map<string, unknown>([
    ['version', DEVICE_REQUEST_VERSION],
    ['docRequests', docRequests],
  ]);
  return Buffer.from(cbor.encode(request)).toString('base64url');
}
