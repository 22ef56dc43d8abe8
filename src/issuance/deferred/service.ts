// Deferred issuance (OpenID4VCI 1.0 section 9): the integrator completes a transaction with claims
// (or fails it) through the management API, and the wallet polls with its transaction_id.
import type { JWK } from 'jose';
import { type CredentialConfigService, defaultClaims } from '../../credential-configs/service.js';
import type { RequestContext } from '../../platform/auth/principal.js';
import type { Sealer } from '../../platform/crypto/sealed.js';
import type { Executor } from '../../platform/db/values.js';
import { conflict, notFound } from '../../platform/http/problem.js';
import type { SessionService } from '../../sessions/service.js';
import type { WalletAccessCheck } from '../access/wallet-access.js';
import { mergeClaims } from '../claim-sources.js';
import type { ResourceRequest } from '../client-request.js';
import { type DeferredStatus, findTransaction, moveTransaction } from '../credential-request/deferred-store.js';
import type { CredentialEncryption, WalletAnswer } from '../credential-request/encryption.js';
import { DEFERRED_INTERVAL_SECONDS } from '../credential-request/endpoint.js';
import type { CredentialMinter } from '../credential-request/minter.js';
import { issuedRecord } from '../credential-request/store.js';
import { invalidTransactionId } from '../errors.js';
import type { IssuerDirectory } from '../issuers.js';
import { parseDeferredRequest } from './schemas.js';

export interface DeferredTransactionResult {
  transactionId: string;
  status: DeferredStatus;
  message?: string;
}

export class DeferredService {
  constructor(
    private readonly db: Executor,
    private readonly issuers: IssuerDirectory,
    private readonly access: WalletAccessCheck,
    private readonly configs: CredentialConfigService,
    private readonly sessions: SessionService,
    private readonly minter: CredentialMinter,
    /** Encrypts holder keys and ready credentials until the wallet takes them. */
    private readonly sealer: Sealer,
    private readonly encryption: CredentialEncryption,
  ) {}

  /** Management: the claims arrived; the credentials are made now and wait for the wallet. */
  async complete(
    ctx: RequestContext,
    tenantId: string,
    transactionId: string,
    claims: Record<string, unknown>,
  ): Promise<DeferredTransactionResult> {
    const row = await this.pending(tenantId, transactionId);
    const config = await this.configs.get(tenantId, row.credential_configuration_id);
    const { holderJwks } = this.sealer.openJson<{ holderJwks: JWK[] }>(row.request, transactionId);
    const issuer = await this.issuers.get(tenantId);
    const credentials = await this.minter.mint({
      urls: issuer.urls,
      federationEntityId: issuer.settings.federation?.entityId,
      tenantId,
      config,
      claims: mergeClaims(defaultClaims(config), claims),
      holderJwks,
      sessionId: row.session_id,
    });
    // Made before the move, which alone decides: a completion or failure that raced this one leaves
    // these credentials unused, and the integrator is told the transaction moved on.
    const moved = await moveTransaction(this.db, tenantId, transactionId, 'pending', 'ready', this.sessions.clock.now(), {
      credentials: this.sealer.sealJson(credentials, transactionId),
    });
    if (!moved) throw await this.notPending(tenantId, transactionId);
    await this.sessions.log(row.session_id, 'info', 'deferred credential ready', {
      transactionId,
      transactionStatus: 'ready',
      by: ctx.principal.clientId,
    });
    return { transactionId, status: 'ready' };
  }

  async fail(ctx: RequestContext, tenantId: string, transactionId: string): Promise<DeferredTransactionResult> {
    const row = await this.pending(tenantId, transactionId);
    const message = 'the issuer failed this transaction';
    if (!(await moveTransaction(this.db, tenantId, transactionId, 'pending', 'failed', this.sessions.clock.now(), { message }))) {
      throw await this.notPending(tenantId, transactionId);
    }
    await this.sessions.log(row.session_id, 'warn', 'deferred credential failed', {
      transactionId,
      transactionStatus: 'failed',
      by: ctx.principal.clientId,
    });
    await this.sessions.update(tenantId, row.session_id, { status: 'failed', errorReason: 'deferred issuance failed' });
    return { transactionId, status: 'failed', message };
  }

  private async pending(tenantId: string, transactionId: string) {
    const row = await findTransaction(this.db, tenantId, transactionId, this.sessions.clock.now());
    if (!row) throw notFound('deferred transaction', transactionId);
    if (row.status !== 'pending') throw conflict(`the transaction is ${row.status}, not pending`);
    return row;
  }

  /** The conflict to answer when a move from pending lost to another one. */
  private async notPending(tenantId: string, transactionId: string) {
    const row = await findTransaction(this.db, tenantId, transactionId, this.sessions.clock.now());
    return conflict(`the transaction is ${row?.status ?? 'gone'}, not pending`);
  }

  /**
   * The wallet's poll: 202 while pending, the credentials once ready (then never again). The request
   * may come encrypted (`encryptedBody`), and the answer is encrypted when this request asks for it.
   */
  async retrieve(request: ResourceRequest, encryptedBody?: string): Promise<WalletAnswer> {
    const { issuer, session } = await this.access.authenticate(request);
    const opened = await this.encryption.openRequest(issuer, request.body, encryptedBody);
    const { status, body } = await this.poll(request.tenantId, session.id, opened.body);
    return this.encryption.answer(status, body, opened.responseEncryption);
  }

  private async poll(tenantId: string, sessionId: string, body: Record<string, unknown>) {
    const { transactionId } = parseDeferredRequest(body);
    const row = await findTransaction(this.db, tenantId, transactionId, this.sessions.clock.now());
    if (!row || row.session_id !== sessionId) throw invalidTransactionId('unknown transaction_id');
    if (row.status === 'pending')
      return { status: 202 as const, body: { transaction_id: transactionId, interval: DEFERRED_INTERVAL_SECONDS } };
    if (row.status !== 'ready' || !row.credentials) throw invalidTransactionId(`the transaction is ${row.status}`);
    const credentials = this.sealer.openJson<string[]>(row.credentials, transactionId);
    // Handed out once: of racing polls, only the one that moves the transaction gets the credentials.
    if (
      !(await moveTransaction(this.db, tenantId, transactionId, 'ready', 'retrieved', this.sessions.clock.now(), { credentials: null }))
    ) {
      throw invalidTransactionId('the transaction is retrieved');
    }
    const config = await this.configs.get(tenantId, row.credential_configuration_id);
    await issuedRecord(this.db, tenantId, sessionId, config.id, config.config.format, this.sessions.clock.now()).query.execute();
    await this.sessions.log(sessionId, 'info', 'deferred credential retrieved', { transactionId, transactionStatus: 'retrieved' });
    await this.sessions.update(tenantId, sessionId, { status: 'completed' });
    // OpenID4VCI 1.0 allows a notification_id here, but @openid4vc/openid4vci 0.4.6 (as used by
    // Credo-based wallets) rejects a deferred response carrying one, so it is left out.
    return { status: 200 as const, body: { credentials: credentials.map((credential) => ({ credential })) } };
  }
}
