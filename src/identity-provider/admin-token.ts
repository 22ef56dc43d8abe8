// The admin client's (OIDC_CLIENT_ID) access token for the provider's admin API. The token obtained
// at start-up is reused until shortly before it expires; then, or when the admin API refuses it,
// it is renewed with its refresh token, and by client credentials again when that fails (a refresh
// token expires too). Concurrent callers share one renewal.
import { z } from 'zod';
import type { Clock } from '../platform/clock.js';
import { jsonObjectOf, type OutboundClient, readAnswer } from '../platform/outbound/client.js';

/** Renewed this long before its expiry, so a token never runs out on the way to the provider. */
const EXPIRY_MARGIN_MS = 30_000;

/**
 * The provider's token answer (RFC 6749 section 5.1) as far as the admin client uses it. An
 * expires_in or refresh_token of the wrong type is taken as absent (the token is then renewed after
 * a minute, by client credentials), as a provider that leaves them out.
 */
export const TokenAnswerSchema = z.looseObject({
  access_token: z.string(),
  refresh_token: z.string().optional().catch(undefined),
  expires_in: z.number().optional().catch(undefined),
});
export type TokenAnswer = z.infer<typeof TokenAnswerSchema>;

export class AdminToken {
  private current: { token: string; refreshToken?: string; expiresAt: number };
  private renewal: Promise<string> | undefined;

  constructor(
    private readonly outbound: Pick<OutboundClient, 'request'>,
    private readonly tokenEndpoint: string,
    private readonly credentials: { clientId: string; secret: string },
    first: TokenAnswer,
    private readonly clock: Clock,
  ) {
    this.current = this.held(first);
  }

  /** A token the admin API should accept. */
  async get(): Promise<string> {
    if (this.current.expiresAt - EXPIRY_MARGIN_MS > this.clock.now().getTime()) return this.current.token;
    return this.renew(this.current.token);
  }

  /** A new token, unless another caller has already replaced `refused` meanwhile. */
  renew(refused: string): Promise<string> {
    if (this.current.token !== refused) return Promise.resolve(this.current.token);
    this.renewal ??= this.obtain().finally(() => {
      this.renewal = undefined;
    });
    return this.renewal;
  }

  private async obtain(): Promise<string> {
    const { refreshToken } = this.current;
    const answer =
      (refreshToken && (await this.grant({ grant_type: 'refresh_token', refresh_token: refreshToken }).catch(() => undefined))) ||
      (await this.grant({ grant_type: 'client_credentials' }));
    this.current = this.held(answer);
    return answer.access_token;
  }

  private async grant(form: Record<string, string>): Promise<TokenAnswer> {
    const { clientId, secret } = this.credentials;
    const reply = await this.outbound.request(this.tokenEndpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`,
      },
      body: new URLSearchParams(form).toString(),
    });
    const body = jsonObjectOf(reply);
    const answer = readAnswer(TokenAnswerSchema, body);
    if (!reply.ok || 'wrong' in answer) {
      const reason = typeof body?.error === 'string' ? body.error : reply.ok && 'wrong' in answer ? answer.wrong : `HTTP ${reply.status}`;
      throw new Error(`the admin client '${clientId}' got no token (${reason})`);
    }
    return answer.value;
  }

  private held(answer: TokenAnswer) {
    // A token without expires_in is used for a minute, then renewed: safe whatever its real lifetime.
    const lifetime = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : 60;
    return { token: answer.access_token, refreshToken: answer.refresh_token, expiresAt: this.clock.now().getTime() + lifetime * 1000 };
  }
}
