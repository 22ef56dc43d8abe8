// The offer session behind an authorization request: whether it can still be authorized.
import type { SessionState } from '../../sessions/model.js';
import { issuancePublic } from '../session.js';

/** Why the offer can no longer be authorized, or undefined while it can. */
export function offerRefusal(session: SessionState): string | undefined {
  if (session.status === 'expired') return 'the credential offer has expired';
  if (session.status === 'failed' || issuancePublic(session).tokensRevoked) return 'the credential offer is no longer valid';
  if (session.consumed) return 'the credential offer has already been redeemed';
  return undefined;
}
