// The session transcript of ISO/IEC 18013-7 Annex C (mdoc requests over the W3C Digital Credentials
// API): [null, null, ["dcapi", SHA-256(CBOR([Base64EncryptionInfo, origin]))]]. No device engagement
// and no reader key: the handover binds the response to the encryption parameters of this session
// (the recipient key and nonce, as the base64url text the page passed on) and to the browser's origin.
// Its CBOR encoding is the HPKE `info` of the encrypted response, and it is the transcript the
// ReaderAuth and the device signature are made over.
import { createHash } from 'node:crypto';
import { QrHandover, SessionTranscript, type SessionTranscriptOptions } from '@owf/mdoc';
import { Encoder } from 'cbor-x';

export const DCAPI = 'dcapi';

/** Definite lengths, byte strings as major type 2, maps kept as Map: the plain CBOR of 18013-5. */
export const cbor = new Encoder({ mapsAsObjects: false, useRecords: false, tagUint8Array: false, variableMapSize: true });

export interface AnnexCTranscript {
  /** The SessionTranscript as a CBOR data model value, to embed in ReaderAuthentication. */
  structure: [null, null, [typeof DCAPI, Uint8Array]];
  /** CBOR(SessionTranscript): the HPKE info. */
  bytes: Uint8Array;
  /** The same transcript for @owf/mdoc's device authentication check. */
  forMdoc: SessionTranscript;
}

type MdocHandover = SessionTranscriptOptions['handover'];

// @owf/mdoc knows the OpenID4VP handovers but not the Annex C one, and exports no Handover base class;
// every handover it ships extends that class, so the Annex C one is made from the same parent. It is
// only ever encoded (into DeviceAuthentication), never decoded, so encodedStructure is all it needs.
const HandoverBase = Object.getPrototypeOf(QrHandover) as new (structure: unknown) => MdocHandover;

class DcApiHandover extends HandoverBase {
  constructor(private readonly infoHash: Uint8Array) {
    super(infoHash);
  }

  override get encodedStructure(): [typeof DCAPI, Uint8Array] {
    return [DCAPI, this.infoHash];
  }
}

/** The Annex C transcript for the EncryptionInfo (as its base64url text) and the page's origin. */
export function annexCTranscript(encryptionInfo: string, origin: string): AnnexCTranscript {
  const infoHash = new Uint8Array(
    createHash('sha256')
      .update(cbor.encode([encryptionInfo, origin]))
      .digest(),
  );
  const structure: AnnexCTranscript['structure'] = [null, null, [DCAPI, infoHash]];
  const bytes = new Uint8Array(cbor.encode(structure));
  const forMdoc = SessionTranscript.create({ handover: new DcApiHandover(infoHash) });
  // The library encodes DeviceAuthentication with its own CBOR encoder: should it ever encode this
  // transcript differently, every device signature check would be made over other bytes. Fail closed.
  if (!Buffer.from(forMdoc.encode()).equals(bytes)) throw new Error('the mdoc library encodes the Annex C session transcript differently');
  return { structure, bytes, forMdoc };
}
