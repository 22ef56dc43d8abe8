// OAuth 2.0 Attestation-Based Client Authentication (draft-ietf-oauth-attestation-based-client-auth,
// as OpenID4VCI 1.0 and HAIP use it) at PAR and the token endpoint. A wallet instance sends a client
// attestation JWT its wallet provider signed (x5c chaining to a provider the issuer trusts, `cnf.jwk`
// the instance key) and a proof of possession of that key for this authorization server. `check`
// lists the steps in the order they apply; each fails with the error the draft names. A given
// attestation is always verified in full; the issuer settings decide whether one is required and
// whether its proof must carry a challenge from the challenge endpoint.

import { z } from 'zod';
import type { Clock } from '../../platform/clock.js';
import { certificateKey, chainsToTrusted, MAX_CHAIN_LENGTH } from '../../platform/crypto/certificate-chains.js';
import { decodeJws, EC_JWS_ALGORITHMS, ecPublicKey, ecThumbprint, fitsAlgorithm, verifiesWith } from '../../platform/crypto/ec-jws.js';
import type { OnceInsert } from '../../platform/db/values.js';
import { OAuthError } from '../../platform/http/problem.js';
import type { AttestationHeaders } from '../client-request.js';
import { invalidClient } from '../errors.js';
import type { Issuer, IssuerDirectory } from '../issuers.js';
import type { NonceStore } from '../nonce/store.js';
import type { IssuerSettings } from '../settings/service.js';

export const ATTESTATION_AUTH_METHOD = 'attest_jwt_client_auth';
export const ATTESTATION_ALGORITHMS = EC_JWS_ALGORITHMS;
const ATTESTATION_TYPE = 'oauth-client-attestation+jwt';
const POP_TYPE = 'oauth-client-attestation-pop+jwt';
const CHALLENGE_PURPOSE = 'attestation-challenge';
const POP_JTI_PURPOSE = 'attestation-pop-jti';
export const CHALLENGE_LIFETIME_SECONDS = 300;
const POP_MAX_AGE_SECONDS = 300;
const CLOCK_SKEW_SECONDS = 60;
/** A proof's jti is remembered for as long as its iat would be accepted. */
const POP_JTI_LIFETIME_SECONDS = POP_MAX_AGE_SECONDS + CLOCK_SKEW_SECONDS;

/** The draft's challenge header, as fastify names it (lower case); client-request.ts reads the others. */
const CHALLENGE_HEADER = 'oauth-client-attestation-challenge';

/** The proof lacks a challenge this server issued; the answer carries a fresh one to retry with. */
const useAttestationChallenge = (description: string, challenge: string) =>
  new OAuthError(400, 'use_attestation_challenge', description, { [CHALLENGE_HEADER]: challenge });

const NumericDate = z.number().finite();

const AttestationClaims = z.object({
  iss: z.string().min(1),
  sub: z.string().min(1),
  exp: NumericDate,
  iat: NumericDate.optional(),
  nbf: NumericDate.optional(),
  cnf: z.object({ jwk: z.record(z.string(), z.unknown()) }),
});

const PopClaims = z.object({
  /** Dropped by later drafts; when a wallet still sends it, it names the client. */
  iss: z.string().optional(),
  aud: z.union([z.string(), z.array(z.string())]),
  jti: z.string().min(1).max(256),
  iat: NumericDate,
  exp: NumericDate.optional(),
  challenge: z.string().min(1).max(256).optional(),
});
type PopClaims = z.infer<typeof PopClaims>;

/** What a verified attestation tells about the client: its client_id and which wallet instance it is. */
export interface WalletAttestation {
  clientId: string;
  /** RFC 7638 thumbprint of the wallet instance key. */
  instanceJkt: string;
}

export class WalletAttestations {
  constructor(
    private readonly issuers: IssuerDirectory,
    /** Issues challenges (single use) and remembers proof ids until they are too old anyway. */
    private readonly nonces: NonceStore,
    private readonly clock: Clock,
  ) {}

  /** The challenge endpoint: a fresh single-use challenge for the issuer's next proof. */
  async challenge(tenantId: string): Promise<string> {
    const issuer = await this.issuers.get(tenantId);
    return this.newChallenge(issuer.tenantId);
  }

  private newChallenge(tenantId: string): Promise<string> {
    return this.nonces.issue(tenantId, CHALLENGE_PURPOSE, CHALLENGE_LIFETIME_SECONDS);
  }

  /**
   * Verifies the request's client attestation, if any (required when the issuer says so). clientId is
   * the one the request names; undefined where the request need not name one (the attestation does).
   * audience: the identifier of the authorization server called (the built-in one by default).
   */
  async check(
    issuer: Issuer,
    clientId: string | undefined,
    headers: AttestationHeaders,
    audience: string = issuer.urls.issuer,
  ): Promise<WalletAttestation | undefined> {
    const verified = await this.verifyAllButNovelty(issuer, clientId, headers, audience);
    if (!verified) return undefined;
    // Each proof is used once: its jti is remembered for as long as its iat would be accepted.
    if (!(await this.nonces.remember(issuer.tenantId, POP_JTI_PURPOSE, verified.jti, POP_JTI_LIFETIME_SECONDS))) {
      throw replayedAttestationProof();
    }
    return verified.attested;
  }

  /**
   * `check` but for the proof's novelty: the attestation and `replay`, the statement that remembers
   * the proof's jti (adding no row when it was used before), for the caller to send along with its
   * own statement (the session read of PAR or of the token request) and to refuse the proof with
   * `replayedAttestationProof()` when it added nothing.
   */
  async verify(
    issuer: Issuer,
    clientId: string | undefined,
    headers: AttestationHeaders,
    audience: string = issuer.urls.issuer,
  ): Promise<{ attested: WalletAttestation; replay: OnceInsert } | undefined> {
    const verified = await this.verifyAllButNovelty(issuer, clientId, headers, audience);
    if (!verified) return undefined;
    const replay = this.nonces.remembering(issuer.tenantId, POP_JTI_PURPOSE, verified.jti, POP_JTI_LIFETIME_SECONDS);
    return { attested: verified.attested, replay };
  }

  private async verifyAllButNovelty(issuer: Issuer, clientId: string | undefined, headers: AttestationHeaders, audience: string) {
    if (!checkPresence(issuer.settings, headers)) return undefined;
    const now = this.clock.now();
    const attestation = checkAttestation(headers.attestation as string, await issuer.walletProviderAnchors(), now);
    checkSubject(attestation.claims.sub, clientId);
    const pop = checkPop(headers.pop as string, attestation.instanceKey, audience, attestation.claims.sub, now);
    await this.checkChallenge(issuer, pop.challenge);
    return { attested: { clientId: attestation.claims.sub, instanceJkt: ecThumbprint(attestation.instanceKey) }, jti: pop.jti };
  }

  /** A challenge this server issued and nobody used yet; required when the issuer says so. */
  private async checkChallenge({ tenantId, settings }: Issuer, challenge: string | undefined) {
    if (challenge === undefined) {
      if (!settings.walletAttestationChallengeRequired) return;
      throw useAttestationChallenge(
        'the client attestation proof must carry a challenge from the challenge endpoint',
        await this.newChallenge(tenantId),
      );
    }
    if (!(await this.nonces.consume(tenantId, CHALLENGE_PURPOSE, challenge))) {
      throw useAttestationChallenge('the challenge is unknown, expired or used', await this.newChallenge(tenantId));
    }
  }
}

export const replayedAttestationProof = () => invalidClient('this client attestation proof was used before');

/** Both headers or neither; neither only when the issuer does not require attestation. */
function checkPresence(settings: IssuerSettings, headers: AttestationHeaders): boolean {
  if (headers.attestation === undefined && headers.pop === undefined) {
    if (settings.walletAttestationRequired) {
      throw invalidClient('this issuer requires wallet attestation: send OAuth-Client-Attestation and OAuth-Client-Attestation-PoP');
    }
    return false;
  }
  if (headers.attestation === undefined) throw invalidClient('OAuth-Client-Attestation is missing');
  if (headers.pop === undefined) throw invalidClient('OAuth-Client-Attestation-PoP is missing');
  return true;
}

/** Signed by its x5c leaf (EC, alg on the key's curve), the chain valid now up to a trusted wallet provider, and not expired. */
function checkAttestation(jwt: string, anchors: string[], at: Date) {
  const decoded = decodeJws(jwt);
  if (!decoded) throw invalidClient('the client attestation is not a JWT');
  const { header } = decoded;
  if (header.typ !== ATTESTATION_TYPE) throw invalidClient(`the client attestation typ must be ${ATTESTATION_TYPE}`);
  const alg = header.alg;
  if (typeof alg !== 'string' || !ATTESTATION_ALGORITHMS.includes(alg)) {
    throw invalidClient(`the client attestation alg must be one of ${ATTESTATION_ALGORITHMS.join(', ')}`);
  }
  if (header.crit !== undefined) throw invalidClient('crit is not supported');
  const x5c = header.x5c;
  if (!Array.isArray(x5c) || !x5c.length || !x5c.every((c) => typeof c === 'string')) {
    throw invalidClient('the client attestation must carry its certificate chain (x5c)');
  }
  if (x5c.length > MAX_CHAIN_LENGTH) throw invalidClient(`the client attestation x5c holds more than ${MAX_CHAIN_LENGTH} certificates`);
  const leafKey = leafKeyOf(x5c[0] as string);
  if (!leafKey || !fitsAlgorithm(leafKey, alg) || !verifiesWith(alg, leafKey, decoded)) {
    throw invalidClient('the client attestation signature does not verify with its x5c certificate');
  }
  if (!chainsToTrusted(x5c as string[], anchors, at)) {
    throw invalidClient('the client attestation is not signed by a trusted wallet provider (or its chain is not valid now)');
  }
  const parsed = AttestationClaims.safeParse(decoded.payload);
  if (!parsed.success) throw invalidClient('the client attestation needs iss, sub, exp and cnf.jwk');
  const claims = parsed.data;
  const now = at.getTime() / 1000;
  if (claims.exp <= now - CLOCK_SKEW_SECONDS) throw invalidClient('the client attestation has expired');
  if (claims.nbf !== undefined && claims.nbf > now + CLOCK_SKEW_SECONDS) throw invalidClient('the client attestation is not yet valid');
  if (claims.iat !== undefined && claims.iat > now + CLOCK_SKEW_SECONDS)
    throw invalidClient('the client attestation was issued in the future');
  const instanceKey = claims.cnf.jwk;
  if (instanceKey.kty !== 'EC' || instanceKey.d !== undefined) throw invalidClient('cnf.jwk must be a public EC key');
  return { claims, instanceKey };
}

function leafKeyOf(der: string) {
  try {
    return certificateKey(der);
  } catch {
    return undefined;
  }
}

/** The attestation is for the client the request names (sub = client_id). */
function checkSubject(sub: string, clientId: string | undefined) {
  if (clientId !== undefined && sub !== clientId)
    throw invalidClient('the client attestation was issued to another client (sub is not client_id)');
}

/** Signed by the instance key, for this authorization server, recent. */
function checkPop(jwt: string, instanceKey: Record<string, unknown>, audience: string, clientId: string, at: Date): PopClaims {
  const decoded = decodeJws(jwt);
  if (!decoded) throw invalidClient('the client attestation proof is not a JWT');
  const { header } = decoded;
  if (header.typ !== POP_TYPE) throw invalidClient(`the client attestation proof typ must be ${POP_TYPE}`);
  const alg = header.alg;
  if (typeof alg !== 'string' || !ATTESTATION_ALGORITHMS.includes(alg) || header.crit !== undefined) {
    throw invalidClient(`the client attestation proof alg must be one of ${ATTESTATION_ALGORITHMS.join(', ')}`);
  }
  const key = ecPublicKey(instanceKey, alg);
  if (!key || !verifiesWith(alg, key, decoded))
    throw invalidClient('the client attestation proof is not signed by the attested key (cnf.jwk)');
  const parsed = PopClaims.safeParse(decoded.payload);
  if (!parsed.success) throw invalidClient('the client attestation proof needs aud, jti and iat');
  const claims = parsed.data;
  if (claims.iss !== undefined && claims.iss !== clientId) throw invalidClient('the client attestation proof iss must be the client_id');
  const audiences = typeof claims.aud === 'string' ? [claims.aud] : claims.aud;
  if (!audiences.includes(audience)) throw invalidClient('the client attestation proof aud must be this authorization server');
  const now = at.getTime() / 1000;
  if (claims.iat > now + CLOCK_SKEW_SECONDS || claims.iat < now - POP_MAX_AGE_SECONDS) {
    throw invalidClient('the client attestation proof iat is not recent');
  }
  if (claims.exp !== undefined && claims.exp <= now - CLOCK_SKEW_SECONDS) throw invalidClient('the client attestation proof has expired');
  return claims;
}
