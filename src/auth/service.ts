// The integrated token server: OAuth 2.0 client credentials, nothing else. Failed attempts are
// counted per caller address in the database, so every instance enforces the same limit.
import type { ClientService } from '../clients/service.js';
import type { TokenSigner } from '../platform/auth/tokens.js';
import type { Executor } from '../platform/db/values.js';
import { OAuthError } from '../platform/http/problem.js';
import { tooManyRequests } from '../platform/http/request-limits.js';
import { countFailure, failuresInWindow } from './store.js';

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
  constructor(
    private readonly db: Executor,
    private readonly clients: ClientService,
    private readonly signer: TokenSigner,
    private readonly limits: { failures: number; windowSeconds: number },
  ) {}

  async issue(credentials: ClientCredentials, callerAddress: string): Promise<TokenResponse> {
    const key = `token:${callerAddress}`;
    await this.refuseIfThrottled(key);
    if (credentials.grantType !== 'client_credentials') {
      throw new OAuthError(400, 'unsupported_grant_type', 'only the client_credentials grant is supported');
    }
    const claims = await this.clients.authenticate(credentials.clientId, credentials.clientSecret);
    if (!claims) {
      await countFailure(this.db, key, new Date(), this.limits.windowSeconds);
      const challenge = credentials.method === 'client_secret_basic' ? { 'www-authenticate': 'Basic realm="svc"' } : undefined;
      throw new OAuthError(401, 'invalid_client', 'unknown client or wrong secret', challenge);
    }
    await this.clients.noteTokenIssued(claims.clientId);
    return { access_token: await this.signer.sign(claims), token_type: 'Bearer', expires_in: this.signer.expiresIn };
  }

  private async refuseIfThrottled(key: string) {
    const now = new Date();
    const { count, window_start } = await failuresInWindow(this.db, key, now, this.limits.windowSeconds);
    if (count < this.limits.failures) return;
    throw tooManyRequests('too many failed attempts', window_start, this.limits.windowSeconds, now);
  }
}
