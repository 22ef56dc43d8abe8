// Whose key verifies an SD-JWT VC's issuer signature, and why the verifier trusts it: the trust
// frameworks of the tenant's mode decide (src/trust: an X.509 chain to its LoTE trust lists, or an
// OpenID Federation trust chain from iss to a trust anchor); a refusal rejects the presentation.
import type { KeyObject } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { issuerKey, TrustRefused } from '../../trust/index.js';
import type { PresentationContext } from '../presentation-context.js';
import { PresentationRejected } from '../presentation-rejected.js';

export interface TrustedIssuerKey {
  key: KeyObject;
  /** The authority the credential was trusted through, as DCQL trusted_authorities name it (federation only). */
  authority?: { type: 'openid_federation'; values: [string] };
}

const reject = (reason: string) => new PresentationRejected(reason);

function issuerJwtParts(presentation: string) {
  const [issuerJwt] = presentation.split('~');
  try {
    return { header: decodeProtectedHeader(issuerJwt as string), payload: decodeJwt(issuerJwt as string) };
  } catch {
    throw reject('the presentation is not an SD-JWT');
  }
}

/** The key that must verify the credential's issuer signature, from the trust that admits its issuer. */
export async function trustedIssuerKey(presentation: string, context: PresentationContext): Promise<TrustedIssuerKey> {
  const { header, payload } = issuerJwtParts(presentation);
  try {
    const decision = await issuerKey(context, {
      header,
      iss: payload.iss,
      ...(context.federationAnchors && { queryAnchors: context.federationAnchors }),
      now: context.now,
    });
    const { value: key, anchor } = decision;
    return decision.framework === 'federation' ? { key, authority: { type: 'openid_federation', values: [anchor as string] } } : { key };
  } catch (err) {
    if (err instanceof TrustRefused) throw reject(err.message);
    throw err;
  }
}
