// An SD-JWT VC the service issued, verified independently of the service's code: the issuer
// signature by the x5c leaf (with jose), the leaf chained to the tenant's root (node:crypto), and
// the disclosures (with @sd-jwt/sd-jwt-vc). With `statusListRoot`, the status list token the library
// fetches is verified the same way by its own x5c, chained to that root (a separate status list key).
import { createHash, X509Certificate } from 'node:crypto';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { decodeProtectedHeader, importX509, jwtVerify } from 'jose';
import { expect } from 'vitest';

/** The x5c leaf of a compact JWS, checked to be signed by `rootCertificate`. */
function leafUnder(jws: string, rootCertificate: string) {
  const header = decodeProtectedHeader(jws.split('~')[0] as string);
  const leaf = new X509Certificate(Buffer.from((header.x5c as string[])[0] as string, 'base64'));
  expect(leaf.verify(new X509Certificate(rootCertificate).publicKey)).toBe(true);
  return { header, leaf };
}

export async function verifySdJwtIndependently(credential: string, rootCertificate: string, options: { statusListRoot?: string } = {}) {
  const { header, leaf } = leafUnder(credential, rootCertificate);
  const { statusListRoot } = options;
  const sdjwt = new SDJwtVcInstance({
    hasher: (data: string | ArrayBuffer) =>
      createHash('sha256')
        .update(typeof data === 'string' ? data : Buffer.from(data))
        .digest(),
    verifier: async (data: string, signature: string) =>
      jwtVerify(`${data}.${signature}`, await importX509(leaf.toString(), 'ES256')).then(
        () => true,
        () => false,
      ),
    ...(statusListRoot && {
      statusVerifier: async (data: string, signature: string) => {
        const jws = `${data}.${signature}`;
        const statusLeaf = leafUnder(jws, statusListRoot).leaf;
        return jwtVerify(jws, await importX509(statusLeaf.toString(), 'ES256')).then(
          () => true,
          () => false,
        );
      },
    }),
  });
  const verified = await sdjwt.verify(credential);
  return { header, payload: verified.payload as Record<string, any>, claims: (await sdjwt.getClaims(credential)) as Record<string, any> };
}
