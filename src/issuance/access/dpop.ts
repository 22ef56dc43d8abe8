// DPoP proofs (RFC 9449): accepted whenever a wallet sends one, required when the issuer says so.
// `verify` checks, in order: the proof's form, its key and signature, the request it names, its age,
// its binding to the access token, the server nonce when the issuer requires one, and that it was
// never used before.

import { createHash, createHmac, type KeyObject } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import { deriveSecretKey } from '../../platform/crypto/derive.js';
import { decodeJws, EC_JWS_ALGORITHMS, ecPublicKey, ecThumbprint, verifiesWith, withinValidity } from '../../platform/crypto/ec-jws.js';
import { sameSecret } from '../../platform/crypto/secrets.js';
import type { OnceInsert } from '../../platform/db/values.js';
import { invalidDpopProof, invalidRequest, useDpopNonce } from '../errors.js';
import type { NonceStore } from '../nonce/store.js';
import type { IssuerSettings } from '../settings/service.js';

const MAX_AGE_SECONDS = 300;
const CLOCK_SKEW_SECONDS = 60;
export const DPOP_ALGORITHMS = EC_JWS_ALGORITHMS;

export interface DpopCheck {
  tenantId: string;
  method: string;
  url: string;
  /** At a resource endpoint: the access token the proof must be bound to (ath). */
  accessToken?: string;
  settings: Pick<IssuerSettings, 'dpopNonceRequired'>;
}

/**
 * Server nonces (RFC 9449 section 8), stateless so that every instance accepts every other's: the
 * time window they were made in, MACed with the tenant. A nonce is good in its window and the next,
 * so it lives between one and two windows.
 */
export class DpopNonces {
  private static readonly WINDOW_SECONDS = 300;
  private readonly key: KeyObject;

  constructor(
    masterSecret: string,
    private readonly clock: Clock,
  ) {
    this.key = deriveSecretKey(masterSecret, 'dpop-nonce');
  }

  issue(tenantId: string): string {
    return this.make(tenantId, this.window());
  }

  accepts(tenantId: string, nonce: unknown): boolean {
    if (typeof nonce !== 'string') return false;
    const now = this.window();
    return [now, now - 1].some((window) => sameSecret(nonce, this.make(tenantId, window)));
  }

  private window(): number {
    return Math.floor(this.clock.now().getTime() / 1000 / DpopNonces.WINDOW_SECONDS);
  }

  private make(tenantId: string, window: number): string {
    return `${window.toString(36)}.${createHmac('sha256', this.key).update(`${tenantId}\n${window}`).digest('base64url')}`;
  }
}

type TokenEndpointRequest = { tenantId: string; url: string; dpop?: string };
type TokenEndpointSettings = DpopCheck['settings'] & { dpopRequired: boolean };

export class DpopProofs {
  constructor(
    /** Remembers the jti of every proof until it is too old to be accepted anyway. */
    private readonly replays: NonceStore,
    private readonly serverNonces: DpopNonces,
    private readonly clock: Clock,
  ) {}

  /** At the token endpoint: the key of the wallet's DPoP proof, if it sent one (required when the issuer says so). */
  async keyOf(request: TokenEndpointRequest, settings: TokenEndpointSettings) {
    const proof = this.proofOf(request, settings);
    if (proof && !(await proof.replay.executeTakeFirst()).numInsertedOrUpdatedRows) throw replayedProof();
    return proof?.thumbprint;
  }

  /** keyOf without remembering the jti: its statement is returned, for the caller to send with its own read (`check`). */
  proofOf(request: TokenEndpointRequest, settings: TokenEndpointSettings) {
    if (!request.dpop) {
      if (settings.dpopRequired) throw invalidRequest('this issuer requires DPoP: send a DPoP proof');
      return undefined;
    }
    return this.check(request.dpop, { tenantId: request.tenantId, method: 'POST', url: request.url, settings });
  }

  /** Verifies a DPoP proof and returns the thumbprint of its key. */
  async verify(proof: string, check: DpopCheck): Promise<string> {
    const { thumbprint, replay } = this.check(proof, check);
    if (!(await replay.executeTakeFirst()).numInsertedOrUpdatedRows) throw replayedProof();
    return thumbprint;
  }

  /**
   * Checks all of a proof but its novelty: its key's thumbprint, and `replay`, the statement that
   * remembers its jti (adding no row when it was used before), for the caller to send along with its
   * own read (insertAndRead) and to refuse the proof with `replayedProof()` when it added nothing.
   */
  check(proof: string, check: DpopCheck): { thumbprint: string; replay: OnceInsert } {
    const { payload, jwk } = checkProof(proof, check, this.clock.now().getTime() / 1000);
    if (check.settings.dpopNonceRequired && !this.serverNonces.accepts(check.tenantId, payload.nonce)) {
      throw useDpopNonce(this.serverNonces.issue(check.tenantId), check.accessToken !== undefined);
    }
    const replay = this.replays.remembering(check.tenantId, 'dpop-jti', payload.jti as string, MAX_AGE_SECONDS + CLOCK_SKEW_SECONDS);
    return { thumbprint: ecThumbprint(jwk), replay };
  }
}

export const replayedProof = () => invalidDpopProof('this DPoP proof was used before');

/** Everything about a proof that needs no state: its form, signature, request, age and access token binding. */
function checkProof(proof: string, check: DpopCheck, now: number) {
  const decoded = decodeJws(proof);
  if (!decoded) throw invalidDpopProof('the DPoP header is not a JWT');
  const { header, payload } = decoded;
  if (header.typ !== 'dpop+jwt') throw invalidDpopProof('typ must be dpop+jwt');
  const alg = header.alg;
  if (typeof alg !== 'string' || !DPOP_ALGORITHMS.includes(alg)) throw invalidDpopProof(`alg must be one of ${DPOP_ALGORITHMS.join(', ')}`);
  if (header.crit !== undefined) throw invalidDpopProof('crit is not supported');
  const jwk = header.jwk as Record<string, unknown> | undefined;
  if (!jwk || typeof jwk !== 'object' || jwk.d !== undefined) throw invalidDpopProof('the header must carry the public jwk');
  const key = ecPublicKey(jwk, alg);
  if (!key || !verifiesWith(alg, key, decoded)) {
    throw invalidDpopProof('the DPoP proof signature does not verify');
  }
  if (!withinValidity(payload, CLOCK_SKEW_SECONDS, now)) throw invalidDpopProof('the DPoP proof has expired or is not yet valid');
  if (payload.htm !== check.method) throw invalidDpopProof('htm does not match the request method');
  if (payload.htu !== withoutQuery(check.url)) throw invalidDpopProof('htu does not match the request URL');
  const iat = payload.iat;
  if (typeof iat !== 'number' || iat > now + CLOCK_SKEW_SECONDS || iat < now - MAX_AGE_SECONDS)
    throw invalidDpopProof('iat is missing or not recent');
  if (typeof payload.jti !== 'string' || !payload.jti) throw invalidDpopProof('jti is missing');
  if (check.accessToken !== undefined && payload.ath !== createHash('sha256').update(check.accessToken).digest('base64url')) {
    throw invalidDpopProof('ath does not match the access token');
  }
  return { payload, jwk };
}

const withoutQuery = (url: string) => url.split(/[?#]/)[0];
