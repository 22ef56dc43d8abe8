// The integrated token server: OAuth 2.0 client credentials (token exchange: exchange.ts). Failed attempts are
// counted per caller address in the database (the service's one window counter, request_windows), so
// every instance enforces the same limit; each failure is counted at once, since there are few.
import type { ClientService } from '../clients/service.js';
import type { TokenSigner } from '../platform/auth/tokens.js';
import type { Executor } from '../platform/db/values.js';
import { OAuthError } from '../platform/http/problem.js';
import { DatabaseWindows } from '../platform/rate-limits/windows.js';
import { TOKEN_EXCHANGE_GRANT } from './exchange.js';

export interface ClientCredentials {
  grantType: string;
  clientId: string;
  clientSecret: string;
  /** How the client authenticated; RFC 6749 wants the Basic challenge echoed on failure. */
  method: 'client_secret_basic' | 'client_secret_post';
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

export class TokenService {
  private readonly failures: DatabaseWindows;

  constructor(
    db: Executor,
    private readonly clients: ClientService,
    private readonly signer: TokenSigner,
    private readonly limits: { failures: number; windowSeconds: number },
  ) {
    this.failures = new DatabaseWindows(db);
  }

  async issue(credentials: ClientCredentials, callerAddress: string): Promise<TokenResponse> {
    const key = `auth-failures:${callerAddress}`;
    await this.refuseIfThrottled(key);
    if (credentials.grantType !== 'client_credentials') {
      throw new OAuthError(400, 'unsupported_grant_type', `only the client_credentials and ${TOKEN_EXCHANGE_GRANT} grants are supported`);
    }
    const claims = await this.clients.authenticate(credentials.clientId, credentials.clientSecret);
    if (!claims) {
      await this.failures.countOne(key, this.limits.windowSeconds, Date.now());
      const challenge = credentials.method === 'client_secret_basic' ? { 'www-authenticate': 'Basic realm="svc"' } : undefined;
      throw new OAuthError(401, 'invalid_client', 'unknown client or wrong secret', challenge);
    }
    await this.clients.noteTokenIssued(claims.clientId);
    return { access_token: await this.signer.sign(claims), token_type: 'Bearer', expires_in: this.signer.expiresIn };
  }

  private async refuseIfThrottled(key: string) {
    // Throttling counts requests per window of elapsed time, as the rate limiter does: the system clock.
    const now = Date.now();
    const { count, windowStartMs } = await this.failures.countSince(key, this.limits.windowSeconds, now);
    if (count < this.limits.failures) return;
    const retryAfter = Math.max(1, Math.ceil((windowStartMs + this.limits.windowSeconds * 1000 - now) / 1000));
    throw new OAuthError(429, 'invalid_request', `too many failed attempts; retry in ${retryAfter} s`, {
      'retry-after': String(retryAfter),
    });
  }
}
