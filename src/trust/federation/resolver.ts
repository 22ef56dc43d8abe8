// Trust chain resolution (OpenID Federation 1.0 section 10), bottom-up: the issuer's entity
// configuration, then for each authority hint the superior's entity configuration and the
// subordinate statement it issues about the entity below (from its federation_fetch_endpoint), until
// a trust anchor the caller accepts. Every statement's signature, issuer, subject and expiry is
// checked; the leaf's metadata comes out with its superiors' policies applied. Everything an issuer
// controls is bounded: how many statements are read, how deep the chain goes, how large and slow
// each answer may be, and how long the whole resolution may take. Callers that need the same chain at
// the same time share one resolution. Every fetch goes through the outbound client and its address policy.

import type { Clock } from '../../platform/clock.js';
import { isJsonObject } from '../../platform/json.js';
import type { OutboundClient } from '../../platform/outbound/client.js';
import {
  ENTITY_STATEMENT_MEDIA_TYPE,
  type EntityStatement,
  entityConfigurationUrl,
  FederationRefused,
  readEntityStatement,
  verifyStatementSignature,
} from './entity-statement.js';
import { applyPolicy, combinePolicies, type Metadata, withSuperiorMetadata } from './policy.js';

/** Superiors between the issuer and its trust anchor, at most. */
export const MAX_INTERMEDIATES = 4;
/** Statements read for one resolution, at most (entity configurations and subordinate statements). */
export const MAX_FETCHES = 24;
export const MAX_STATEMENT_BYTES = 64 * 1024;
export const FETCH_TIMEOUT_MS = 3_000;
/** Resolved chains kept per instance, at most. */
const MAX_CACHED = 2_000;
/**
 * How long a refusal is kept at most (within cacheTtlSeconds): an entity that is not in the federation
 * (an authorization server without an entity configuration, say) is not asked again on every request,
 * and one that joins is seen soon.
 */
const REFUSAL_TTL_MS = 30_000;

export interface TrustAnchorRef {
  entityId: string;
  /** Where its entity configuration is read; default {entityId}/.well-known/openid-federation. */
  entityConfigurationUri?: string;
}

export interface ResolvedTrust {
  /** The trust anchor the chain ends at. */
  anchor: string;
  /** The issuer's metadata after the chain's policies. */
  metadata: Metadata;
  /** When the earliest statement of the chain expires (seconds). */
  expiresAt: number;
  /** The chain as signed: the issuer's entity configuration, the subordinate statements upward, the anchor's entity configuration. */
  chain: string[];
}

interface Path {
  /** Subordinate statements, the one about the issuer first. */
  statements: EntityStatement[];
  anchor: EntityStatement;
}

/** The statements one resolution may still read, and the time it has left. */
class Budget {
  private fetches = 0;
  /** Aborts the fetch under way when the deadline passes. */
  readonly deadline: AbortSignal;

  constructor(private readonly deadlineMs: number) {
    this.deadline = AbortSignal.timeout(deadlineMs);
  }

  spend() {
    this.checkDeadline();
    if (++this.fetches > MAX_FETCHES) throw new FederationRefused('trust chain', `more than ${MAX_FETCHES} statements would be read`);
  }

  /** Step 'trust chain': no other authority hint is tried once the time is up. */
  checkDeadline() {
    if (this.deadline.aborted) throw new FederationRefused('trust chain', `not resolved within the deadline of ${this.deadlineMs} ms`);
  }
}

export class TrustChainResolver {
  private readonly cache = new Map<string, { until: number; value: Promise<ResolvedTrust> }>();
  /** Resolutions under way, by cache key: a caller asking for one of them waits for it instead of fetching again. */
  private readonly inFlight = new Map<string, Promise<ResolvedTrust>>();

  constructor(
    private readonly outbound: Pick<OutboundClient, 'request'>,
    /** How long one resolution may take, all its statements together (FEDERATION_RESOLUTION_DEADLINE_MS). */
    private readonly deadlineMs: number,
    /** What time it is for the statements' validity and the cached decisions. */
    private readonly clock: Clock,
  ) {}

  /**
   * The issuer's trust through a chain to one of `anchors`, kept for `cacheTtlSeconds` (never past
   * the chain's expiry) under `scope` (the tenant: one tenant's decisions never answer another's).
   * Throws FederationRefused naming the step that failed.
   */
  resolve(scope: string, issuer: string, anchors: TrustAnchorRef[], cacheTtlSeconds: number): Promise<ResolvedTrust> {
    const key = [scope, issuer, ...anchors.map((a) => `${a.entityId} ${a.entityConfigurationUri ?? ''}`).sort()].join('\u0000');
    if (cacheTtlSeconds <= 0) return this.shared(key, issuer, anchors);
    const now = this.clock.now().getTime();
    const cached = this.cache.get(key);
    if (cached && cached.until > now) return cached.value;
    const value = this.shared(key, issuer, anchors);
    this.cache.delete(key);
    this.cache.set(key, { until: now + cacheTtlSeconds * 1000, value });
    value.then(
      (trust) => {
        const entry = this.cache.get(key);
        if (entry?.value === value) entry.until = Math.min(entry.until, trust.expiresAt * 1000);
      },
      () => {
        const entry = this.cache.get(key);
        if (entry?.value === value) entry.until = Math.min(entry.until, this.clock.now().getTime() + REFUSAL_TTL_MS);
      },
    );
    while (this.cache.size > MAX_CACHED) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
    return value;
  }

  /** Forgets the decisions kept under `scope`; a resolution under way is not joined by later callers. */
  forget(scope: string) {
    for (const entries of [this.cache, this.inFlight])
      for (const key of [...entries.keys()]) if (key.startsWith(`${scope}\u0000`)) entries.delete(key);
  }

  /** The resolution under way for `key`, or a new one, kept in inFlight until it settles. */
  private shared(key: string, issuer: string, anchors: TrustAnchorRef[]): Promise<ResolvedTrust> {
    const running = this.inFlight.get(key);
    if (running) return running;
    const value = this.resolveUncached(issuer, anchors);
    this.inFlight.set(key, value);
    const settled = () => {
      if (this.inFlight.get(key) === value) this.inFlight.delete(key);
    };
    value.then(settled, settled);
    return value;
  }

  private async resolveUncached(issuer: string, anchors: TrustAnchorRef[]): Promise<ResolvedTrust> {
    if (anchors.length === 0) throw new FederationRefused('trust anchors', 'none is accepted');
    const budget = new Budget(this.deadlineMs);
    const leaf = await this.entityConfiguration(issuer, entityConfigurationUrl(issuer), 'issuer entity configuration', budget);
    const failures: string[] = [];
    const path = await this.climb(leaf, anchors, new Set([issuer]), 0, budget, failures);
    if (!path) {
      const accepted = anchors.map((a) => a.entityId).join(', ');
      const why = failures.length ? failures.join('; ') : `no authority_hints of ${issuer} lead to ${accepted}`;
      throw new FederationRefused('trust chain', why);
    }
    return this.resolvedFrom(leaf, path);
  }

  /** The leaf's metadata through the path: its immediate superior's metadata, then every superior's policy, the anchor's first. */
  private resolvedFrom(leaf: EntityStatement, path: Path): ResolvedTrust {
    checkPathLengths(path.statements);
    const [immediate] = path.statements;
    const policies = [...path.statements].reverse().map((s) => ({ policy: s.metadata_policy, crit: s.metadata_policy_crit ?? [] }));
    const metadata = applyPolicy(withSuperiorMetadata((leaf.metadata ?? {}) as Metadata, immediate?.metadata), combinePolicies(policies));
    const all = [leaf, ...path.statements, path.anchor];
    return {
      anchor: path.anchor.sub,
      metadata,
      expiresAt: Math.min(...all.map((s) => s.exp)),
      chain: all.map((s) => s.jwt),
    };
  }

  /** A path from `subject` up to an accepted anchor through its authority hints, depth first; undefined when none holds. */
  private async climb(
    subject: EntityStatement,
    anchors: TrustAnchorRef[],
    visited: Set<string>,
    depth: number,
    budget: Budget,
    failures: string[],
  ): Promise<Path | undefined> {
    for (const superiorId of subject.authority_hints ?? []) {
      if (visited.has(superiorId)) continue; // a loop of hints leads nowhere new
      try {
        const anchor = anchors.find((a) => a.entityId === superiorId);
        const superior = await this.entityConfiguration(
          superiorId,
          anchor?.entityConfigurationUri ?? entityConfigurationUrl(superiorId),
          anchor ? 'trust anchor entity configuration' : 'superior entity configuration',
          budget,
        );
        const statement = await this.subordinateStatement(superior, subject.sub, budget);
        // The superior vouches for the subject's keys: the subject's own configuration must be signed with one of them.
        verifyStatementSignature(
          subject,
          statement.jwks,
          'subordinate statement',
          `the keys ${superiorId} gives for ${subject.sub}`,
          this.nowSeconds(),
        );
        if (anchor) return { statements: [statement], anchor: superior };
        if (depth + 1 > MAX_INTERMEDIATES) {
          failures.push(`trust chain: more than ${MAX_INTERMEDIATES} intermediates above ${subject.sub}`);
          continue;
        }
        const above = await this.climb(superior, anchors, new Set([...visited, superiorId]), depth + 1, budget, failures);
        if (above) return { statements: [statement, ...above.statements], anchor: above.anchor };
      } catch (err) {
        if (!(err instanceof FederationRefused)) throw err;
        failures.push(err.message);
        if (err.step === 'trust chain') throw err; // the budget is spent: no other hint may be tried
      }
    }
    return undefined;
  }

  /** The clock's time in seconds since the epoch, as entity statements count it. */
  /**
   * An entity's own configuration, read and checked as a chain's first statement is (fetched through
   * the outbound client within the deadline, self-signed, iss = sub = the entity); not cached.
   * Throws FederationRefused.
   */
  entityConfigurationOf(entityId: string): Promise<EntityStatement> {
    return this.entityConfiguration(entityId, entityConfigurationUrl(entityId), 'entity configuration', new Budget(this.deadlineMs));
  }

  private nowSeconds() {
    return this.clock.now().getTime() / 1000;
  }

  /** An entity's configuration: iss = sub = the entity, signed by a key of its own jwks. */
  private async entityConfiguration(entityId: string, url: string, step: string, budget: Budget): Promise<EntityStatement> {
    const statement = readEntityStatement(await this.fetchStatement(url, step, budget), step, this.nowSeconds());
    if (statement.iss !== entityId || statement.sub !== entityId)
      throw new FederationRefused(step, `${url} is not the configuration of ${entityId}`);
    verifyStatementSignature(statement, statement.jwks, step, `its own jwks (${entityId})`, this.nowSeconds());
    return statement;
  }

  /** What `superior` says about `subjectId`, read from its federation_fetch_endpoint and signed by a key of its configuration. */
  private async subordinateStatement(superior: EntityStatement, subjectId: string, budget: Budget): Promise<EntityStatement> {
    const step = 'subordinate statement';
    const entity = superior.metadata?.federation_entity;
    const endpoint = isJsonObject(entity) ? entity.federation_fetch_endpoint : undefined;
    if (typeof endpoint !== 'string') throw new FederationRefused(step, `${superior.sub} publishes no federation_fetch_endpoint`);
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw new FederationRefused(step, `the federation_fetch_endpoint of ${superior.sub} is not a URL`);
    }
    url.searchParams.set('sub', subjectId);
    const statement = readEntityStatement(await this.fetchStatement(url.toString(), step, budget), step, this.nowSeconds());
    if (statement.iss !== superior.sub || statement.sub !== subjectId)
      throw new FederationRefused(step, `the statement from ${superior.sub} is not about ${subjectId} by ${superior.sub}`);
    verifyStatementSignature(statement, superior.jwks, step, `its issuer ${superior.sub}`, this.nowSeconds());
    return statement;
  }

  private async fetchStatement(url: string, step: string, budget: Budget): Promise<string> {
    budget.spend();
    let reply: Awaited<ReturnType<OutboundClient['request']>>;
    try {
      reply = await this.outbound.request(url, {
        headers: { accept: ENTITY_STATEMENT_MEDIA_TYPE },
        timeoutMs: FETCH_TIMEOUT_MS,
        maxBytes: MAX_STATEMENT_BYTES,
        signal: budget.deadline,
      });
    } catch (err) {
      budget.checkDeadline();
      throw new FederationRefused(step, `${url} could not be read (${err instanceof Error ? err.message : String(err)})`);
    }
    if (!reply.ok) throw new FederationRefused(step, `${url} answered ${reply.status}`);
    const type = String(reply.headers['content-type'] ?? '');
    if (!type.includes(ENTITY_STATEMENT_MEDIA_TYPE))
      throw new FederationRefused(step, `${url} answered ${type || 'no content type'}, not ${ENTITY_STATEMENT_MEDIA_TYPE}`);
    return reply.body.toString('utf8').trim();
  }
}

/**
 * constraints.max_path_length (section 6.2.1): how many intermediates a superior allows between itself
 * and the chain's subject. The statement at index i (the one about the issuer first) is made by the
 * superior with i intermediates below it.
 */
function checkPathLengths(statements: EntityStatement[]) {
  statements.forEach((statement, intermediatesBelow) => {
    const max = statement.constraints?.max_path_length;
    if (typeof max === 'number' && intermediatesBelow > max)
      throw new FederationRefused(
        'constraints',
        `${statement.iss} allows at most ${max} intermediates below it, the chain has ${intermediatesBelow}`,
      );
  });
}
