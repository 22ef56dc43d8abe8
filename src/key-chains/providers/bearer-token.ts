// OAuth access tokens of the clouds whose KMS svc calls over REST (Microsoft Entra for Azure Key
// Vault, Google for Cloud KMS): fetched when first needed, kept until shortly before they expire, one
// fetch shared by the requests that wait for it. A token endpoint that refuses the credentials is
// told apart from one that is down: the first is the operator's file to fix (exit 78 at start).
import { z } from 'zod';
import { jsonObjectOf, type OutboundResponse, readAnswer } from '../../platform/outbound/client.js';

/** A token is fetched again this long before it expires (or at half its life, if that is shorter). */
const REFRESH_BEFORE_MS = 5 * 60_000;

/** The token endpoint refused the credentials (400/401/403): a configuration to fix, not an outage. */
export class TokenRefused extends Error {
  override name = 'TokenRefused';
}

export interface FetchedToken {
  accessToken: string;
  expiresInSeconds: number;
}

export class CachedToken {
  private current?: { accessToken: string; refreshAt: number };
  private pending?: Promise<string>;

  constructor(
    private readonly fetchToken: () => Promise<FetchedToken>,
    private readonly now: () => number = Date.now,
  ) {}

  /** A token valid for a while yet: the one kept, or a new one. */
  get(): Promise<string> {
    if (this.current && this.now() < this.current.refreshAt) return Promise.resolve(this.current.accessToken);
    this.pending ??= this.fetchToken()
      .then(({ accessToken, expiresInSeconds }) => {
        const lifetime = expiresInSeconds * 1000;
        this.current = { accessToken, refreshAt: this.now() + lifetime - Math.min(REFRESH_BEFORE_MS, lifetime / 2) };
        return accessToken;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  /** Forgets the kept token (the server did not take it): the next get fetches another. */
  drop(): void {
    this.current = undefined;
  }
}

/** expires_in is a number in OAuth answers, a string of digits in Azure IMDS's. */
const TokenAnswer = z.object({
  access_token: z.string().min(1),
  expires_in: z.union([z.number().int().positive(), z.string().regex(/^\d+$/).transform(Number)]),
});

/**
 * The token of a token endpoint's answer. `who` names the endpoint in errors; the endpoint's error
 * code (RFC 6749 `error`, e.g. invalid_client) is kept, its description is not (it may echo ids).
 */
export function readToken(reply: OutboundResponse, who: string): FetchedToken {
  const error = jsonObjectOf(reply)?.error;
  const code = typeof error === 'string' && /^[\w.-]{1,64}$/.test(error) ? `: ${error}` : '';
  if (reply.status === 400 || reply.status === 401 || reply.status === 403) {
    throw new TokenRefused(`${who} refuses the credentials (${reply.status}${code})`);
  }
  if (!reply.ok) throw new Error(`${who} answered ${reply.status}${code}`);
  const read = readAnswer(TokenAnswer, jsonObjectOf(reply));
  if ('wrong' in read) throw new Error(`${who} answered without a token (${read.wrong})`);
  return { accessToken: read.value.access_token, expiresInSeconds: read.value.expires_in };
}
