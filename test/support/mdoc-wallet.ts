// The mdoc side of a test wallet for OpenID4VP 1.0 (appendix B.2): a DeviceResponse built with
// @owf/mdoc's Holder, the device signature over the OpenID4VP session transcript made with the holder
// key, ready to be sent base64url-encoded as a vp_token entry. Each input can be bent on its own.
import { createHash } from 'node:crypto';
import {
  DeviceRequest,
  DocRequest,
  Holder,
  IssuerSigned,
  ItemsRequest,
  type MdocContext,
  QrHandover,
  SessionTranscript,
  type SessionTranscriptOptions,
} from '@owf/mdoc';
import { Encoder } from 'cbor-x';
import type { JWK } from 'jose';
import { mdocContext } from '../../src/platform/crypto/mdoc-context.js';
import { coseSign, coseSigningKey } from '../../wallet/callbacks.js';
import type { ResolvedRequest } from './presenter.js';

/** The parts of a resolved request the mdoc wallet reads. */
export type MdocRequest = Pick<ResolvedRequest, 'clientId' | 'nonce' | 'responseUri' | 'responseMode' | 'payload'> &
  Pick<Partial<ResolvedRequest>, 'origin'>;

/** The service's verifier context plus signing with the holder key (P-256), as the demo wallet signs. */
export const walletContext: MdocContext = {
  ...mdocContext,
  cose: { ...mdocContext.cose, sign1: { ...mdocContext.cose.sign1, sign: coseSign } },
};

/** RFC 7638 SHA-256 thumbprint of the request's encryption key (EC), by hand. */
export function encryptionKeyThumbprint(request: MdocRequest): Uint8Array | undefined {
  const key = request.payload.client_metadata?.jwks?.keys?.[0] as JWK | undefined;
  if ((request.responseMode !== 'direct_post.jwt' && request.responseMode !== 'dc_api.jwt') || !key) return undefined;
  return createHash('sha256')
    .update(JSON.stringify({ crv: key.crv, kty: key.kty, x: key.x, y: key.y }))
    .digest();
}

export interface TranscriptInput {
  clientId: string;
  nonce: string;
  responseUri: string;
  jwkThumbprint?: Uint8Array;
}

export const transcriptOf = (request: MdocRequest): TranscriptInput => {
  const jwkThumbprint = encryptionKeyThumbprint(request);
  return { clientId: request.clientId, nonce: request.nonce, responseUri: request.responseUri, ...(jwkThumbprint && { jwkThumbprint }) };
};

export const deviceRequestFor = (docType: string, namespace: string, elements: string[]) =>
  DeviceRequest.create({
    docRequests: [
      DocRequest.create({
        itemsRequest: ItemsRequest.create({ docType, namespaces: { [namespace]: Object.fromEntries(elements.map((e) => [e, false])) } }),
      }),
    ],
  });

export interface MdocPresentationOptions {
  docType: string;
  namespace: string;
  /** The elements of `namespace` to disclose. */
  elements: string[];
  /** The holder's private JWK (the MSO device key). */
  holder: JWK;
  /** The credential as issued (OpenID4VCI encoding), or an IssuerSigned already parsed or bent. */
  credential?: string;
  issuerSigned?: IssuerSigned;
  /** Replaces parts of the request's session transcript. */
  transcript?: Partial<TranscriptInput>;
  /** The credential query id of the vp_token entry (default 'mdl'). */
  queryId?: string;
}

/** A DeviceResponse as a wallet builds it for `request` (or for a bent session transcript). */
export async function presentMdoc(request: MdocRequest, options: MdocPresentationOptions) {
  const issuerSigned = options.issuerSigned ?? (options.credential && IssuerSigned.fromEncodedForOid4Vci(options.credential));
  if (!issuerSigned) throw new Error('presentMdoc needs a credential or an IssuerSigned');
  // Over the DC API (request.origin set): the OpenID4VPDCAPIHandover over the origin (OpenID4VP 1.0 B.2.6.2).
  const transcript = { ...transcriptOf(request), ...options.transcript };
  const sessionTranscript = request.origin
    ? await SessionTranscript.forOid4VpDcApi(
        { origin: request.origin, nonce: transcript.nonce, ...(transcript.jwkThumbprint && { jwkThumbprint: transcript.jwkThumbprint }) },
        walletContext,
      )
    : await SessionTranscript.forOid4Vp(transcript, walletContext);
  const deviceResponse = await Holder.createDeviceResponseForDeviceRequest(
    {
      deviceRequest: deviceRequestFor(options.docType, options.namespace, options.elements),
      sessionTranscript,
      issuerSigned: [issuerSigned],
      signature: { signingKey: coseSigningKey(options.holder) },
    },
    walletContext,
  );
  return { deviceResponse, sessionTranscript, vpToken: { [options.queryId ?? 'mdl']: [deviceResponse.encodedForOid4Vp] } };
}

// ISO/IEC 18013-7 Annex C: the wallet's own session transcript [null, null, ["dcapi",
// SHA-256(CBOR([Base64EncryptionInfo, origin]))]], computed here with cbor-x, not with the service's code.
const annexCCbor = new Encoder({ mapsAsObjects: false, useRecords: false, tagUint8Array: false });
// @owf/mdoc ships no Annex C handover; like all its handovers, this one extends their common parent.
const HandoverParent = Object.getPrototypeOf(QrHandover) as new (structure: unknown) => SessionTranscriptOptions['handover'];
class WalletDcApiHandover extends HandoverParent {
  constructor(private readonly hash: Uint8Array) {
    super(hash);
  }
  override get encodedStructure() {
    return ['dcapi', this.hash] as never;
  }
}

/** The Annex C transcript as a wallet makes it: CBOR bytes (the HPKE info) and the @owf/mdoc object to sign over. */
export function annexCWalletTranscript(encryptionInfo: string, origin: string) {
  const hash = createHash('sha256')
    .update(annexCCbor.encode([encryptionInfo, origin]))
    .digest();
  const bytes = new Uint8Array(annexCCbor.encode([null, null, ['dcapi', new Uint8Array(hash)]]));
  return { bytes, sessionTranscript: SessionTranscript.create({ handover: new WalletDcApiHandover(new Uint8Array(hash)) }) };
}

/** A DeviceResponse (as @owf/mdoc's Holder builds it) signed over a given session transcript. */
export async function deviceResponseOver(sessionTranscript: SessionTranscript, options: MdocPresentationOptions) {
  const issuerSigned = options.issuerSigned ?? (options.credential && IssuerSigned.fromEncodedForOid4Vci(options.credential));
  if (!issuerSigned) throw new Error('deviceResponseOver needs a credential or an IssuerSigned');
  return Holder.createDeviceResponseForDeviceRequest(
    {
      deviceRequest: deviceRequestFor(options.docType, options.namespace, options.elements),
      sessionTranscript,
      issuerSigned: [issuerSigned],
      signature: { signingKey: coseSigningKey(options.holder) },
    },
    walletContext,
  );
}
