// Deferred issuance: the wallet polls with its transaction_id (OpenID4VCI 1.0 section 9) while the
// integrator completes the transaction with claims, or fails it.
import type { JWK } from 'jose';
import type { RequestContext } from '../platform/auth/principal.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import { nowIso } from '../platform/db/values.js';
import { conflict, notFound } from '../platform/http/problem.js';
import { hashHandle } from '../sessions/service.js';
import { mergeClaims } from './claims.js';
import { authenticateWallet, type ResourceRequest } from './credential-endpoint.js';
import { buildCredentials, recordIssued } from './credentials.js';
import type { IssuanceDeps } from './deps.js';
import { invalidCredentialRequest, invalidTransactionId } from './errors.js';

export type DeferredStatus = 'pending' | 'ready' | 'retrieved' | 'expired' | 'failed';

export interface DeferredTransactionResult {
  transactionId: string;
  status: DeferredStatus;
  message?: string;
}

export class DeferredService {
  constructor(private readonly deps: IssuanceDeps) {}

  private async find(tenantId: string, transactionId: string) {
    const row = await tenantDb(this.deps.db, tenantId)
      .selectFrom('deferred_transactions')
      .selectAll()
      .where('hash', '=', hashHandle(transactionId))
      .executeTakeFirst();
    if (!row) return undefined;
    const expired = row.status === 'pending' && Date.parse(row.expires_at) <= Date.now();
    return { ...row, status: (expired ? 'expired' : row.status) as DeferredStatus };
  }

  /** Management: the claims arrived; the credentials are made now and wait for the wallet. */
  async complete(
    ctx: RequestContext,
    tenantId: string,
    transactionId: string,
    claims: Record<string, unknown>,
  ): Promise<DeferredTransactionResult> {
    const row = await this.find(tenantId, transactionId);
    if (!row) throw notFound('deferred transaction', transactionId);
    if (row.status !== 'pending') throw conflict(`the transaction is ${row.status}, not pending`);
    const config = await this.deps.configs.get(tenantId, row.credential_configuration_id);
    const { holderJwks } = this.deps.sealer.openJson<{ holderJwks: JWK[] }>(row.request, transactionId);
    const merged = mergeClaims(this.deps.configs.defaultClaims(config), claims);
    const credentials = await buildCredentials(this.deps, tenantId, config, merged, holderJwks, row.session_id);
    await this.setStatus(tenantId, transactionId, 'ready', { credentials: this.deps.sealer.sealJson(credentials, transactionId) });
    await this.deps.sessions.log(row.session_id, 'info', 'deferred credential ready', { transactionId, by: ctx.principal.clientId });
    return { transactionId, status: 'ready' };
  }

  async fail(ctx: RequestContext, tenantId: string, transactionId: string): Promise<DeferredTransactionResult> {
    const row = await this.find(tenantId, transactionId);
    if (!row) throw notFound('deferred transaction', transactionId);
    if (row.status !== 'pending') throw conflict(`the transaction is ${row.status}, not pending`);
    await this.setStatus(tenantId, transactionId, 'failed', { message: 'the issuer failed this transaction' });
    await this.deps.sessions.log(row.session_id, 'warn', 'deferred credential failed', { transactionId, by: ctx.principal.clientId });
    await this.deps.sessions.update(tenantId, row.session_id, { status: 'failed', errorReason: 'deferred issuance failed' });
    return { transactionId, status: 'failed', message: 'the issuer failed this transaction' };
  }

  private async setStatus(
    tenantId: string,
    transactionId: string,
    status: DeferredStatus,
    extra: { credentials?: string | null; message?: string } = {},
  ) {
    await tenantDb(this.deps.db, tenantId)
      .updateTable('deferred_transactions')
      .set({ status, updated_at: nowIso(), ...extra })
      .where('hash', '=', hashHandle(transactionId))
      .execute();
  }

  /** The wallet's poll: 202 while pending, the credentials once ready (then never again). */
  async retrieve(request: ResourceRequest) {
    const settings = await this.deps.settings.get(request.tenantId);
    const { session } = await authenticateWallet(this.deps, request, settings);
    const transactionId = request.body.transaction_id;
    if (typeof transactionId !== 'string' || !transactionId) throw invalidCredentialRequest('transaction_id is required');
    const row = await this.find(request.tenantId, transactionId);
    if (!row || row.session_id !== session.id) throw invalidTransactionId('unknown transaction_id');
    if (row.status === 'pending') return { status: 202 as const, body: { transaction_id: transactionId, interval: 5 } };
    if (row.status !== 'ready' || !row.credentials) throw invalidTransactionId(`the transaction is ${row.status}`);
    const credentials = this.deps.sealer.openJson<string[]>(row.credentials, transactionId);
    await this.setStatus(request.tenantId, transactionId, 'retrieved', { credentials: null });
    const config = await this.deps.configs.get(request.tenantId, row.credential_configuration_id);
    await recordIssued(this.deps.db, request.tenantId, session.id, config);
    await this.deps.sessions.log(session.id, 'info', 'deferred credential retrieved', { transactionId });
    await this.deps.sessions.update(request.tenantId, session.id, { status: 'completed' });
    // OpenID4VCI 1.0 allows a notification_id here, but @openid4vc/openid4vci 0.4.6 (as used by
    // Credo-based wallets) rejects a deferred response carrying one, so it is left out.
    return { status: 200 as const, body: { credentials: credentials.map((credential) => ({ credential })) } };
  }
}
