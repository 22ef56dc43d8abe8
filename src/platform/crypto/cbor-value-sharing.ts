// CBOR value sharing (tags 28 "shareable" and 29 "sharedref") is refused in everything this process
// decodes. No ISO 18013-5/7 structure uses it, and it lets a few bytes of a wallet's answer name one
// item thousands of times, each then checked (a digest, a signature, a certificate chain). cbor-x
// keeps its tag handlers per process, for @owf/mdoc's decoding too, so the first import of this module
// refuses them everywhere; each module that decodes CBOR from outside imports it.
import { addExtension } from 'cbor-x';

export class CborValueSharingRefused extends Error {}

for (const tag of [28, 29]) {
  // Decoding only: cbor-x registers no encoder when an extension names no class (its types want one).
  addExtension({
    tag,
    decode: () => {
      throw new CborValueSharingRefused(`CBOR value sharing (tag ${tag}) is not accepted`);
    },
  } as unknown as Parameters<typeof addExtension>[0]);
}
