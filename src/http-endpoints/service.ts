// Attribute providers and webhook endpoints: systems of a tenant that the service calls during
// issuance (to fetch claims, to send notifications), each with a URL and how to authenticate there.
// Both kinds have one shape, so one class serves both, each instance bound to its own table. The
// authentication is stored encrypted; a header value leaves the service only through resolve().

import type { AuditService } from '../audit/service.js';
import type { RequestContext } from '../platform/auth/principal.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, inTransaction, isUniqueViolation } from '../platform/db/values.js';
import { conflict, invalidFields, notFound } from '../platform/http/problem.js';
import type { OutboundClient } from '../platform/outbound/client.js';
import { endpointOwner, type WebhookSecrets } from '../webhooks/secrets.js';
import { type AuthInput, type AuthView, type CreateEndpoint, type HttpEndpoint, MASK, type UpdateEndpoint } from './schemas.js';
import type { EndpointRow, EndpointTable } from './store.js';
import * as store from './store.js';

export interface EndpointKind {
  table: EndpointTable;
  /** As messages name it: 'attribute provider'. */
  label: string;
  /** Prefix of its audit actions: 'attribute_provider'. */
  auditName: string;
}

export const ATTRIBUTE_PROVIDERS: EndpointKind = {
  table: 'attribute_providers',
  label: 'attribute provider',
  auditName: 'attribute_provider',
};
export const WEBHOOK_ENDPOINTS: EndpointKind = { table: 'webhook_endpoints', label: 'webhook endpoint', auditName: 'webhook_endpoint' };

/** Names what refers to an endpoint (for the 409 on delete); empty when nothing does. */
export type EndpointUsageCheck = (db: Executor, tenantId: string, id: string) => Promise<string[]>;

/** What a caller of the endpoint needs: where to send the request and the headers that authenticate it. */
export interface ResolvedEndpoint {
  url: string;
  headers: Record<string, string>;
  /** Webhook endpoints: the Standard Webhooks secrets that sign now (none for one made before signing existed). */
  signingSecrets?: string[];
}

const masked = (auth: AuthInput): AuthView =>
  auth.type === 'header' ? { type: 'header', header: { name: auth.header.name, value: MASK } } : { type: 'none' };

export class HttpEndpointService {
  private readonly usageChecks: EndpointUsageCheck[] = [];

  constructor(
    private readonly db: Executor,
    /** One sealer per kind (its own purpose label), so a sealed value opens only in its own table. */
    private readonly sealer: Sealer,
    private readonly audit: AuditService,
    readonly kind: EndpointKind,
    /** Judges a URL when it is stored; a name is judged again by what it resolves to when called. */
    private readonly outbound: OutboundClient,
    private readonly clock: Clock,
    /** Webhook endpoints only: their signing secrets. */
    private readonly secrets?: WebhookSecrets,
  ) {}

  private checkUrl(url: string | undefined) {
    const refusal = url === undefined ? undefined : this.outbound.urlRefusal(url);
    if (refusal) throw invalidFields([{ field: 'body.url', message: refusal }]);
  }

  onUsageCheck(check: EndpointUsageCheck) {
    this.usageChecks.push(check);
  }

  /** Binds the sealed auth to its row: copied into another row or tenant it no longer opens. */
  private sealingContext(tenantId: string, id: string) {
    return `${this.kind.table}:${tenantId}:${id}`;
  }

  private openAuth(row: EndpointRow): AuthInput {
    return this.sealer.openJson<AuthInput>(row.auth, this.sealingContext(row.tenant_id, row.id));
  }

  private toEndpoint(row: EndpointRow): HttpEndpoint {
    return {
      id: row.id,
      tenantId: row.tenant_id,
      name: row.name,
      description: row.description,
      url: row.url,
      auth: masked(this.openAuth(row)),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  private async row(tenantId: string, id: string, db: Executor = this.db): Promise<EndpointRow> {
    const row = await store.findEndpoint(tenantDb(db, tenantId), this.kind.table, id);
    if (!row) throw notFound(this.kind.label, id);
    return row;
  }

  async list(tenantId: string): Promise<HttpEndpoint[]> {
    return (await store.listEndpoints(tenantDb(this.db, tenantId), this.kind.table)).map((row) => this.toEndpoint(row));
  }

  async get(tenantId: string, id: string, db: Executor = this.db): Promise<HttpEndpoint> {
    return this.toEndpoint(await this.row(tenantId, id, db));
  }

  /** For the features that call the endpoint: its URL and the headers to send, decrypted. */
  async resolve(tenantId: string, id: string, db: Executor = this.db): Promise<ResolvedEndpoint> {
    const row = await this.row(tenantId, id, db);
    const auth = this.openAuth(row);
    const headers = auth.type === 'header' ? { [auth.header.name]: auth.header.value } : {};
    if (!this.secrets) return { url: row.url, headers };
    return { url: row.url, headers, signingSecrets: await this.secrets.signing(tenantId, endpointOwner(id), db) };
  }

  /**
   * For features that store a reference to an endpoint, inside their transaction `trx`: true when it
   * exists, and then it stays locked until `trx` ends, so a concurrent remove() waits and sees the
   * reference (or, when the remove came first, this finds the endpoint gone).
   */
  lockForReference(trx: Executor, tenantId: string, id: string): Promise<boolean> {
    return store.lockEndpoint(tenantDb(trx, tenantId), this.kind.table, id);
  }

  /** A webhook endpoint's answer carries its signing secret, this once. */
  async create(
    ctx: RequestContext,
    tenantId: string,
    input: CreateEndpoint,
    db: Executor = this.db,
  ): Promise<HttpEndpoint & { signingSecret?: string }> {
    this.checkUrl(input.url);
    return inTransaction(db, async (trx) => {
      const now = this.clock.now().toISOString();
      try {
        await store.insertEndpoint(tenantDb(trx, tenantId), this.kind.table, {
          id: input.id,
          name: input.name,
          description: input.description ?? null,
          url: input.url,
          auth: this.sealer.sealJson(input.auth, this.sealingContext(tenantId, input.id)),
          created_at: now,
          updated_at: now,
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`${this.kind.label} '${input.id}' already exists`);
        throw err;
      }
      const created = await this.get(tenantId, input.id, trx);
      // The audit sees the masked view only: the header value never reaches the audit writer.
      await this.audit.record(ctx, { tenantId, actionType: `${this.kind.auditName}.created`, after: { ...created } }, trx);
      const signingSecret = await this.secrets?.issue(trx, tenantId, endpointOwner(input.id));
      return { ...created, ...(signingSecret && { signingSecret }) };
    });
  }

  async update(ctx: RequestContext, tenantId: string, id: string, input: UpdateEndpoint, db: Executor = this.db): Promise<HttpEndpoint> {
    this.checkUrl(input.url);
    return inTransaction(db, async (trx) => {
      const before = await this.get(tenantId, id, trx);
      if (input.id !== undefined && input.id !== id) {
        throw invalidFields([{ field: 'body.id', message: `cannot change: the path names ${this.kind.label} '${id}'` }]);
      }
      await store.updateEndpoint(tenantDb(trx, tenantId), this.kind.table, id, {
        ...(input.name !== undefined && { name: input.name }),
        ...(input.description !== undefined && { description: input.description }),
        ...(input.url !== undefined && { url: input.url }),
        ...(input.auth !== undefined && { auth: this.sealer.sealJson(input.auth, this.sealingContext(tenantId, id)) }),
        updated_at: this.clock.now().toISOString(),
      });
      const after = await this.get(tenantId, id, trx);
      // A replaced header value looks the same masked; authReplaced makes the replacement visible in the trail.
      const afterView = { ...after, ...(input.auth !== undefined && { authReplaced: true }) };
      await this.audit.record(
        ctx,
        { tenantId, actionType: `${this.kind.auditName}.updated`, before: { ...before }, after: afterView },
        trx,
      );
      return after;
    });
  }

  async remove(ctx: RequestContext, tenantId: string, id: string): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      const before = await this.get(tenantId, id, trx);
      // Deleted first, checked second: the delete locks the row (see lockForReference), so a
      // reference saved concurrently is either committed and found here, or finds the row gone.
      await store.deleteEndpoint(tenantDb(trx, tenantId), this.kind.table, id);
      const users = (await Promise.all(this.usageChecks.map((check) => check(trx, tenantId, id)))).flat();
      if (users.length) throw conflict(`${this.kind.label} '${id}' is in use: ${users.join('; ')}`);
      await this.audit.record(ctx, { tenantId, actionType: `${this.kind.auditName}.deleted`, before: { ...before } }, trx);
      await this.secrets?.drop(trx, tenantId, endpointOwner(id));
    });
  }

  /**
   * Webhook endpoints: a new signing secret, answered this once; the previous one keeps signing
   * beside it for WEBHOOK_SECRET_ROTATION_GRACE_SECONDS. An endpoint made before signing existed gets its first.
   */
  async rotateSecret(ctx: RequestContext, tenantId: string, id: string): Promise<{ signingSecret: string }> {
    const { secrets } = this;
    if (!secrets) throw new Error(`a ${this.kind.label} has no signing secret`);
    return inTransaction(this.db, async (trx) => {
      await this.row(tenantId, id, trx);
      const signingSecret = await secrets.rotate(trx, tenantId, endpointOwner(id));
      await this.audit.record(ctx, { tenantId, actionType: `${this.kind.auditName}.secret_rotated`, after: { id } }, trx);
      return { signingSecret };
    });
  }
}
