// Trust marks a verifier requires (OpenID Federation 1.0 section 7.3): an entity resolved to a trust
// anchor whose settings name requiredTrustMarks must hold a mark of each type in the trust_marks of
// its entity configuration. A mark counts when its sub is the entity, it has not expired, its issuer
// is one the anchor lists for the type in trust_mark_issuers, it is signed with a federation key of
// that issuer as the issuer's own trust chain to the same anchor vouches for it, and, when the
// issuer publishes a federation_trust_mark_status_endpoint, that endpoint says active (fail closed:
// an issuer that cannot be asked refuses the mark). Delegated marks (trust_mark_owners, delegation)
// are not supported: a mark with a delegation claim is refused.
import type { Clock } from '../../platform/clock.js';
import { decodeJws, ecPublicKey, verifyEcJws } from '../../platform/crypto/ec-jws.js';
import { isJsonObject } from '../../platform/json.js';
import type { OutboundClient } from '../../platform/outbound/client.js';
import { CLOCK_SKEW_SECONDS, FederationRefused } from './entity-statement.js';
import { FETCH_TIMEOUT_MS, MAX_STATEMENT_BYTES, type ResolvedTrust } from './resolver.js';
import { TRUST_MARK_STATUS_MEDIA_TYPE, TRUST_MARK_STATUS_TYP, TRUST_MARK_TYP } from './trust-marks.js';

/** Marks of one type tried at most: each may cost a chain resolution and a status request. */
const MAX_MARKS_TRIED = 3;
const STEP = 'trust marks';

/** A mark that does not count, and why. */
class MarkRefused extends Error {}

/** A member of an object from outside, only when it is its own (never one of Object.prototype). */
const own = (object: Record<string, unknown>, name: string): unknown => (Object.hasOwn(object, name) ? object[name] : undefined);

export class TrustMarkCheck {
  constructor(
    private readonly outbound: Pick<OutboundClient, 'request'>,
    private readonly clock: Clock,
  ) {}

  /**
   * Every type of `required` held by the entity `trust` resolved; `issuerTrust` resolves a mark
   * issuer's own chain to the same anchor. Throws FederationRefused naming the type and why.
   */
  async check(trust: ResolvedTrust, required: string[], issuerTrust: (issuer: string) => Promise<ResolvedTrust>): Promise<void> {
    const entity = decodeJws(trust.chain[0] ?? '')?.payload ?? {};
    const anchor = decodeJws(trust.chain.at(-1) ?? '')?.payload ?? {};
    const entityId = String(entity.sub);
    const held = Array.isArray(entity.trust_marks) ? entity.trust_marks.filter(isJsonObject) : [];
    const issuersByType = isJsonObject(anchor.trust_mark_issuers) ? anchor.trust_mark_issuers : {};
    for (const type of required) {
      const listed = own(issuersByType, type);
      const issuers = Array.isArray(listed) ? listed.filter((issuer): issuer is string => typeof issuer === 'string') : [];
      const candidates = held
        .filter((entry) => entry.trust_mark_type === type && typeof entry.trust_mark === 'string')
        .slice(0, MAX_MARKS_TRIED)
        .map((entry) => entry.trust_mark as string);
      const reasons: string[] = [];
      let valid = false;
      for (const jwt of candidates) {
        try {
          await this.verify(jwt, type, entityId, issuers, trust.anchor, issuerTrust);
          valid = true;
          break;
        } catch (err) {
          if (!(err instanceof MarkRefused)) throw err;
          reasons.push(err.message);
        }
      }
      if (!valid)
        throw new FederationRefused(
          STEP,
          `${entityId} holds no valid trust mark of type ${type}${reasons.length ? `: ${reasons.join('; ')}` : ' in its trust_marks'}`,
        );
    }
  }

  private async verify(
    jwt: string,
    type: string,
    entityId: string,
    issuers: string[],
    anchorId: string,
    issuerTrust: (issuer: string) => Promise<ResolvedTrust>,
  ) {
    const decoded = decodeJws(jwt);
    if (!decoded) throw new MarkRefused('not a compact JWS');
    const { header, payload } = decoded;
    if (header.typ !== TRUST_MARK_TYP) throw new MarkRefused(`typ is not ${TRUST_MARK_TYP}`);
    if (typeof header.kid !== 'string') throw new MarkRefused('the header names no kid');
    if ((payload.trust_mark_type ?? payload.id) !== type) throw new MarkRefused(`its trust_mark_type is not ${type}`);
    if (payload.sub !== entityId) throw new MarkRefused(`its sub is not ${entityId}`);
    if (payload.delegation !== undefined) throw new MarkRefused('delegated trust marks are not supported');
    const { iss } = payload;
    if (typeof iss !== 'string') throw new MarkRefused('iss is missing');
    if (!issuers.includes(iss)) throw new MarkRefused(`its issuer ${iss} is not in the trust_mark_issuers of ${anchorId} for the type`);
    const now = this.clock.now().getTime() / 1000;
    if (typeof payload.exp === 'number' && payload.exp <= now - CLOCK_SKEW_SECONDS) throw new MarkRefused('it has expired (exp)');
    let issuer: ResolvedTrust;
    try {
      issuer = await issuerTrust(iss);
    } catch (err) {
      if (err instanceof FederationRefused) throw new MarkRefused(`its issuer ${iss} does not resolve to ${anchorId}: ${err.message}`);
      throw err;
    }
    // The issuer's federation keys: those of its entity configuration, which its chain vouches for.
    const issuerConfiguration = decodeJws(issuer.chain[0] ?? '')?.payload ?? {};
    const keys =
      isJsonObject(issuerConfiguration.jwks) && Array.isArray(issuerConfiguration.jwks.keys) ? issuerConfiguration.jwks.keys : [];
    const verified = (token: string, kid: unknown, alg: unknown) => {
      const jwk = keys.find((key) => isJsonObject(key) && key.kid === kid);
      const key = isJsonObject(jwk) && typeof alg === 'string' ? ecPublicKey(jwk, alg) : undefined;
      return key ? verifyEcJws(token, key, CLOCK_SKEW_SECONDS, now) : undefined;
    };
    if (!verified(jwt, header.kid, header.alg)) throw new MarkRefused(`its signature does not verify with the federation keys of ${iss}`);
    const federationEntity = issuer.metadata.federation_entity;
    const endpoint = isJsonObject(federationEntity) ? own(federationEntity, 'federation_trust_mark_status_endpoint') : undefined;
    if (typeof endpoint === 'string') await this.askStatus(endpoint, jwt, iss, verified);
  }

  /** The issuer's status endpoint (section 8.4, 1.0 final: POST trust_mark) must say active, in a response it signed. */
  private async askStatus(
    endpoint: string,
    jwt: string,
    iss: string,
    verified: (token: string, kid: unknown, alg: unknown) => ReturnType<typeof verifyEcJws>,
  ) {
    let reply: Awaited<ReturnType<OutboundClient['request']>>;
    try {
      reply = await this.outbound.request(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: TRUST_MARK_STATUS_MEDIA_TYPE },
        body: new URLSearchParams({ trust_mark: jwt }).toString(),
        timeoutMs: FETCH_TIMEOUT_MS,
        maxBytes: MAX_STATEMENT_BYTES,
      });
    } catch (err) {
      throw new MarkRefused(`its status endpoint ${endpoint} could not be asked (${err instanceof Error ? err.message : String(err)})`);
    }
    if (!reply.ok) throw new MarkRefused(`its status endpoint ${endpoint} answered ${reply.status}`);
    const response = reply.body.toString('utf8').trim();
    const decoded = decodeJws(response);
    const status = decoded && verified(response, decoded.header.kid, decoded.header.alg);
    if (!status || decoded.header.typ !== TRUST_MARK_STATUS_TYP || status.payload.iss !== iss || status.payload.trust_mark !== jwt)
      throw new MarkRefused(`its status endpoint ${endpoint} answered no status response about it signed by ${iss}`);
    if (status.payload.status !== 'active') throw new MarkRefused(`its issuer says it is ${String(status.payload.status)}`);
  }
}
