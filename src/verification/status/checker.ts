// The status of a presented credential (draft-ietf-oauth-status-list): fetch the status list token
// its `status.status_list.uri` names, verify it (typ, x5c signature, x5c chained to the tenant's trust
// anchors, sub, exp), and read the entry at `idx`. Anything short of a verified 0 (VALID) rejects the
// presentation: revoked, suspended, another value, and any fetch or verification failure (fail closed).
//
// Verified tokens of other issuers are cached per tenant and URI until the earlier of their exp and
// ttl, as the draft allows a Relying Party ("Status List Caching"); a status change reaches this
// verifier when that time has passed, or at once after DELETE /api/cache/status-list (the cache is
// registered there). This service's own lists are read in-process at every check instead: the token
// served shows every change committed before the read, so a revocation is seen by the next
// presentation on every instance, with no message between instances that could arrive late. Their
// verification is kept per token (stamped with its hash), so an unchanged list is not verified again.
//
// SSRF: the URI comes from the credential, so the request goes where the credential says. Only a
// credential whose signature and issuer chain have already been verified against the tenant's trust
// anchors reaches this step, so only an issuer the tenant trusts chooses the address; still, it is
// fetched through the outbound client (http(s) only, public addresses unless OUTBOUND_ALLOW_PRIVATE,
// no cross-origin redirects, bounded time and size), and nothing of the answer is echoed beyond a reason.
// A list of this service itself (under PUBLIC_URL) is read in-process instead (OwnUrlsFirst), so that
// a deployment verifies its own credentials wherever PUBLIC_URL leads from inside it.
import { createHash } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import { compactVerify, decodeProtectedHeader, importX509 } from 'jose';
import type { VerifiedSdJwt } from '../../formats/sd-jwt-vc/verify.js';
import type { UrlReader } from '../../platform/outbound/own-urls.js';
import { type FetchedStatusList, StampedCache, tenantKey } from '../../status-lists/cache.js';
import { type StatusListSignerQuestion, statusListSigner, type TenantTrust } from '../../trust/index.js';
import { PresentationRejected } from '../errors.js';

export const STATUS_LIST_JWT = 'application/statuslist+jwt';
const FETCH_TIMEOUT_MS = 5_000;
/** Largest token accepted, and largest list once decompressed (the largest this service issues: 100M entries of 8 bits). */
const MAX_TOKEN_BYTES = 32 * 1024 * 1024;
const MAX_LIST_BYTES = 100_000_000;
const CLOCK_SKEW_SECONDS = 60;
const BITS = [1, 2, 4, 8];
const STATUS_REASONS: Record<number, string> = { 1: 'status: revoked', 2: 'status: suspended' };

const reject = (reason: string) => new PresentationRejected(`status: ${reason}`);

/** The status list signer must be trusted by a framework of src/trust, for the credential whose status is read. */
export interface StatusCheckContext extends TenantTrust {
  /** The credential whose status is read, as the federation framework reads it (SD-JWT VC only). */
  credential?: StatusListSignerQuestion['credential'];
  now: Date;
}

export interface StatusListCheckerOptions {
  /** The outbound client, or OwnUrlsFirst in front of it. */
  reader: UrlReader;
  /** Where verified tokens are kept; registered with /api/cache so that it can be inspected and cleared. */
  cache?: StampedCache<FetchedStatusList>;
  timeoutMs?: number;
}

/** The stamp of other issuers' tokens (their own lists are stamped with the token's hash); expiry is checked on use. */
const STAMP = 'fetched';

export class StatusListChecker {
  private readonly cache: StampedCache<FetchedStatusList>;
  private readonly timeoutMs: number;
  private readonly reader: UrlReader;
  /** Fetches under way, so that concurrent presentations of one list fetch it once. */
  private readonly inFlight = new Map<string, Promise<FetchedStatusList>>();

  constructor(options: StatusListCheckerOptions) {
    this.reader = options.reader;
    this.cache = options.cache ?? new StampedCache<FetchedStatusList>(1_000);
    this.timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS;
  }

  /** Resolves when the credential carries no status list reference, or its entry is 0 (VALID); else throws PresentationRejected. */
  async check(tenantId: string, status: VerifiedSdJwt['status'], context: StatusCheckContext): Promise<void> {
    const reference = status?.status_list;
    if (reference === undefined) return;
    const { idx, uri } = reference as { idx: unknown; uri: unknown };
    if (!Number.isSafeInteger(idx) || (idx as number) < 0 || typeof uri !== 'string') {
      throw reject('the credential has a malformed status_list claim (idx, uri)');
    }
    const list = await this.list(tenantId, uri, context);
    // Checked on every use, not only at fetch: a change of the tenant's trust lists applies at once.
    const question = { x5c: list.x5c, now: context.now, ...(context.credential && { credential: context.credential }) };
    if ((await statusListSigner(context, question)) === undefined)
      throw reject('untrusted status list signer: the x5c chain leads to no trusted certificate');
    const bit = (idx as number) * list.bits;
    if (bit >> 3 >= list.list.length) throw reject(`index ${idx} is outside the status list`);
    const value = ((list.list[bit >> 3] as number) >> (bit & 7)) & ((1 << list.bits) - 1);
    if (value === 0) return;
    throw new PresentationRejected(STATUS_REASONS[value] ?? `status: invalid (value ${value})`);
  }

  private async list(tenantId: string, uri: string, context: StatusCheckContext): Promise<FetchedStatusList> {
    const url = statusListUrl(uri);
    const key = tenantKey(tenantId, uri);
    if (this.reader.owns?.(url)) return this.ownList(key, url, uri, context);
    const cached = this.cache.get(key, STAMP);
    if (cached && cached.until > context.now.getTime()) return cached;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.fetchToken(url, uri)
        .then((jwt) => this.verify(jwt, uri, context))
        .finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    const list = await pending;
    if (list.until > context.now.getTime()) this.cache.set(key, STAMP, list);
    return list;
  }

  /** A list of this service: the token it serves now, verified unless this very token was verified before. */
  private async ownList(key: string, url: URL, uri: string, context: StatusCheckContext): Promise<FetchedStatusList> {
    const jwt = await this.fetchToken(url, uri);
    const stamp = createHash('sha256').update(jwt).digest('base64url');
    const cached = this.cache.get(key, stamp);
    if (cached && cached.until > context.now.getTime()) return cached;
    const list = await this.verify(jwt, uri, context);
    if (list.until > context.now.getTime()) this.cache.set(key, stamp, list);
    return list;
  }

  private async verify(jwt: string, uri: string, context: StatusCheckContext): Promise<FetchedStatusList> {
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(jwt);
    } catch {
      throw reject('the status list token is not a JWT');
    }
    if (header.typ !== 'statuslist+jwt') throw reject('the status list token does not have typ statuslist+jwt');
    const x5c = header.x5c;
    if (!Array.isArray(x5c) || x5c.length === 0 || x5c.some((c) => typeof c !== 'string')) {
      throw reject('the status list token carries no x5c chain');
    }
    // Whether the signer is trusted is decided on every use (check); here only that it signed the token.
    let payload: Record<string, unknown>;
    try {
      const key = await importX509(`-----BEGIN CERTIFICATE-----\n${x5c[0]}\n-----END CERTIFICATE-----`, header.alg as string);
      const verified = await compactVerify(jwt, key, {
        algorithms: ['ES256', 'ES384', 'ES512', 'EdDSA', 'PS256', 'PS384', 'PS512', 'RS256'],
      });
      payload = JSON.parse(new TextDecoder().decode(verified.payload)) as Record<string, unknown>;
    } catch {
      throw reject('the status list token signature does not verify with its x5c certificate');
    }
    if (payload.sub !== uri) throw reject("the status list token's sub is not the credential's status list uri");
    const now = context.now.getTime() / 1000;
    const { exp, ttl } = payload;
    if (exp !== undefined && typeof exp !== 'number') throw reject('the status list token has a malformed exp');
    if (exp !== undefined && exp <= now) throw reject('the status list token has expired');
    if (typeof payload.nbf === 'number' && payload.nbf > now + CLOCK_SKEW_SECONDS) throw reject('the status list token is not valid yet');
    const statusList = payload.status_list as { bits?: unknown; lst?: unknown } | undefined;
    if (!statusList || !BITS.includes(statusList.bits as number) || typeof statusList.lst !== 'string') {
      throw reject('the status list token has no valid status_list (bits, lst)');
    }
    let list: Uint8Array;
    try {
      list = new Uint8Array(inflateSync(Buffer.from(statusList.lst, 'base64url'), { maxOutputLength: MAX_LIST_BYTES }));
    } catch {
      throw reject('the status list could not be decompressed');
    }
    // Kept until the earlier of exp and ttl (from now); with neither, not kept at all.
    const limits = [exp, typeof ttl === 'number' && ttl > 0 ? now + ttl : undefined].filter((t): t is number => t !== undefined);
    const until = limits.length > 0 ? Math.min(...limits) * 1000 : 0;
    return { bits: statusList.bits as number, list, x5c: x5c as string[], until };
  }

  private async fetchToken(url: URL, uri: string): Promise<string> {
    try {
      const response = await this.reader.request(url, {
        headers: { accept: STATUS_LIST_JWT },
        timeoutMs: this.timeoutMs,
        maxBytes: MAX_TOKEN_BYTES,
      });
      if (!response.ok) throw reject(`the status list at ${uri} answered HTTP ${response.status}`);
      return response.body.toString('utf8').trim();
    } catch (err) {
      if (err instanceof PresentationRejected) throw err;
      const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
      throw reject(`the status list at ${uri} could not be fetched (${err instanceof Error ? err.message : String(err)}${cause})`);
    }
  }
}

function statusListUrl(uri: string): URL {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw reject('the status list uri is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw reject('the status list uri is not an http(s) URL');
  return url;
}
