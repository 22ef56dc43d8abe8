// A tenant's link to an external registrar (EUDI relying-party registrar, TS11 catalog): where it is,
// and the account the service logs in with (OAuth 2.0 password grant at the registrar's identity
// provider). Credentials are tested before they are stored, kept encrypted, and never returned; the
// registrar token is cached per tenant and dropped whenever the configuration changes.

import type { AuditService } from '../audit/service.js';
import type { RequestContext } from '../platform/auth/principal.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import type { Db } from '../platform/db/connect.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import { invalidFields, notFound, Problem } from '../platform/http/problem.js';
import { jsonObjectOf, jsonOf, type OutboundClient, OutboundRefused } from '../platform/outbound/client.js';
import type { RegistrarConfig, RegistrarConfigChanges, RegistrarConfigInput } from './schemas.js';
import * as store from './store.js';

/** What is stored: the configuration with its secrets sealed (bound to the tenant). */
interface StoredDocument {
  registrarUrl: string;
  oidcUrl: string;
  clientId: string;
  username: string;
  registrationCertificateDefaults: Record<string, unknown> | null;
  sealedPassword: string;
  sealedClientSecret: string | null;
}

interface Credentials {
  oidcUrl: string;
  clientId: string;
  clientSecret?: string;
  username: string;
  password: string;
}

/** A token is reused until this close to its expiry. */
const TOKEN_MARGIN_MS = 5_000;
export type RegistrarMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface RegistrarCallOptions {
  /** JSON body. */
  body?: unknown;
  /** Send the bearer token (default); the catalog's reads are public. */
  auth?: boolean;
  /** A 404 of the registrar is a 404 here (a catalog entry that does not exist), not a 502. */
  notFoundAs404?: boolean;
}

const CREDENTIAL_FIELDS = ['oidcUrl', 'clientId', 'clientSecret', 'username', 'password'] as const;

export class RegistrarService {
  private readonly tokens = new Map<string, { token: string; until: number }>();

  constructor(
    private readonly db: Db['kysely'],
    private readonly sealer: Sealer,
    private readonly outbound: OutboundClient,
    private readonly audit: AuditService,
    /** Stamps the configuration, and tells when a registrar token has expired. */
    private readonly clock: Clock,
  ) {}

  async get(tenantId: string): Promise<RegistrarConfig> {
    const row = await store.findConfig(tenantDb(this.db, tenantId));
    if (!row) throw notFound('registrar configuration of tenant', tenantId);
    return view(JSON.parse(row.document) as StoredDocument, row.created_at, row.updated_at);
  }

  /** POST: creates or replaces the whole configuration, after its credentials log in. */
  async replace(ctx: RequestContext, tenantId: string, input: RegistrarConfigInput): Promise<RegistrarConfig> {
    await this.passwordGrant(input);
    return this.store(ctx, tenantId, {
      registrarUrl: input.registrarUrl,
      oidcUrl: input.oidcUrl,
      clientId: input.clientId,
      username: input.username,
      registrationCertificateDefaults: input.registrationCertificateDefaults ?? null,
      sealedPassword: this.sealer.seal(input.password, tenantId),
      sealedClientSecret: input.clientSecret ? this.sealer.seal(input.clientSecret, tenantId) : null,
    });
  }

  /** PATCH: the fields given replace the stored ones; the login is tested again only when one of its fields changed. */
  async update(ctx: RequestContext, tenantId: string, changes: RegistrarConfigChanges): Promise<RegistrarConfig> {
    const row = await store.findConfig(tenantDb(this.db, tenantId));
    if (!row) throw notFound('registrar configuration of tenant', tenantId);
    const before = JSON.parse(row.document) as StoredDocument;
    const current = this.credentialsOf(before, tenantId);
    const next: Credentials = {
      oidcUrl: changes.oidcUrl ?? current.oidcUrl,
      clientId: changes.clientId ?? current.clientId,
      clientSecret: changes.clientSecret === null ? undefined : (changes.clientSecret ?? current.clientSecret),
      username: changes.username ?? current.username,
      password: changes.password ?? current.password,
    };
    if (CREDENTIAL_FIELDS.some((field) => changes[field] !== undefined && changes[field] !== current[field])) {
      await this.passwordGrant(next);
    }
    return this.store(ctx, tenantId, {
      registrarUrl: changes.registrarUrl ?? before.registrarUrl,
      oidcUrl: next.oidcUrl,
      clientId: next.clientId,
      username: next.username,
      registrationCertificateDefaults:
        changes.registrationCertificateDefaults !== undefined
          ? changes.registrationCertificateDefaults
          : before.registrationCertificateDefaults,
      sealedPassword: this.sealer.seal(next.password, tenantId),
      sealedClientSecret: next.clientSecret ? this.sealer.seal(next.clientSecret, tenantId) : null,
    });
  }

  async remove(ctx: RequestContext, tenantId: string): Promise<void> {
    const before = await this.get(tenantId);
    await store.deleteConfig(tenantDb(this.db, tenantId));
    this.tokens.delete(tenantId);
    await this.audit.record(ctx, { tenantId, actionType: 'registrar_config.deleted', before: { ...before } });
  }

  /** The registrar's schema metadata catalog; empty when the tenant has no registrar. */
  async catalog(tenantId: string): Promise<unknown[]> {
    if (!(await this.configured(tenantId))) return [];
    const body = await this.call(tenantId, 'GET', '/schema-metadata', { auth: false });
    if (!Array.isArray(body)) throw new Problem(502, 'Bad Gateway', 'the registrar answered its catalog with something other than a list');
    return body;
  }

  async configured(tenantId: string): Promise<boolean> {
    return (await store.findConfig(tenantDb(this.db, tenantId))) !== undefined;
  }

  /**
   * One call of the tenant's registrar API (paths as in registrar-api.md, relative to registrarUrl),
   * with its bearer token unless `auth` is false; a token the registrar refuses is renewed once.
   * The parsed JSON answer (or the text, for a non-JSON one) on 2xx. Otherwise a problem: 404 when
   * `notFoundAs404` and the registrar says 404, else 502 carrying the registrar's message; 409 when
   * the registrar reports a conflict. 404 when the tenant has no registrar configuration.
   */
  async call(tenantId: string, method: RegistrarMethod, path: string, options: RegistrarCallOptions = {}): Promise<unknown> {
    const row = await store.findConfig(tenantDb(this.db, tenantId));
    if (!row) throw notFound('registrar configuration of tenant', tenantId);
    const url = `${(JSON.parse(row.document) as StoredDocument).registrarUrl.replace(/\/+$/, '')}${path}`;
    const auth = options.auth ?? true;
    let reply = await this.send(url, method, auth ? await this.token(tenantId) : undefined, options.body);
    if (auth && reply.status === 401) {
      this.tokens.delete(tenantId);
      reply = await this.send(url, method, await this.token(tenantId), options.body);
    }
    const body = jsonOf(reply) ?? (reply.body.length > 0 ? reply.body.toString('utf8') : undefined);
    if (reply.ok) return body;
    const message = registrarMessage(body);
    if (reply.status === 404 && options.notFoundAs404)
      throw new Problem(404, 'Not Found', `the registrar has no such entry${message ? `: ${message}` : ''}`);
    if (reply.status === 409) throw new Problem(409, 'Conflict', `the registrar refused: ${message ?? 'conflict'}`);
    throw new Problem(502, 'Bad Gateway', `the registrar answered ${reply.status}${message ? `: ${message}` : ''}`);
  }

  private async send(url: string, method: RegistrarMethod, token: string | undefined, body: unknown) {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await this.outbound.request(url, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
    } catch (err) {
      throw new Problem(502, 'Bad Gateway', `the registrar could not be reached: ${(err as Error).message}`);
    }
  }

  /** A token of the tenant's registrar account, reused while it is valid. */
  async token(tenantId: string): Promise<string> {
    const cached = this.tokens.get(tenantId);
    if (cached && cached.until > this.clock.now().getTime()) return cached.token;
    const row = await store.findConfig(tenantDb(this.db, tenantId));
    if (!row) throw notFound('registrar configuration of tenant', tenantId);
    const { token, expiresIn } = await this.passwordGrant(this.credentialsOf(JSON.parse(row.document) as StoredDocument, tenantId));
    this.tokens.set(tenantId, { token, until: this.clock.now().getTime() + expiresIn * 1000 - TOKEN_MARGIN_MS });
    return token;
  }

  private async store(ctx: RequestContext, tenantId: string, document: StoredDocument): Promise<RegistrarConfig> {
    const db = tenantDb(this.db, tenantId);
    const existing = await store.findConfig(db);
    const before = existing && view(JSON.parse(existing.document) as StoredDocument, existing.created_at, existing.updated_at);
    await store.saveConfig(db, JSON.stringify(document), this.clock.now().toISOString(), existing !== undefined);
    this.tokens.delete(tenantId);
    const after = await this.get(tenantId);
    await this.audit.record(ctx, {
      tenantId,
      actionType: before ? 'registrar_config.updated' : 'registrar_config.created',
      ...(before && { before: { ...before } }),
      after: { ...after },
    });
    return after;
  }

  private credentialsOf(document: StoredDocument, tenantId: string): Credentials {
    return {
      oidcUrl: document.oidcUrl,
      clientId: document.clientId,
      clientSecret: document.sealedClientSecret ? this.sealer.open(document.sealedClientSecret, tenantId) : undefined,
      username: document.username,
      password: this.sealer.open(document.sealedPassword, tenantId),
    };
  }

  /**
   * The registrar account's token (OAuth 2.0 password grant, Keycloak's layout). Also how credentials
   * are tested before they are stored: 400 naming the field when refused, 502 when unreachable.
   */
  private async passwordGrant(credentials: Credentials): Promise<{ token: string; expiresIn: number }> {
    const fieldPrefix = 'body';
    const tokenUrl = `${credentials.oidcUrl.replace(/\/+$/, '')}/protocol/openid-connect/token`;
    const form = new URLSearchParams({ grant_type: 'password', username: credentials.username, password: credentials.password });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (credentials.clientSecret) {
      headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(credentials.clientId)}:${encodeURIComponent(credentials.clientSecret)}`).toString('base64')}`;
    } else form.set('client_id', credentials.clientId);
    let reply: Awaited<ReturnType<OutboundClient['request']>>;
    try {
      reply = await this.outbound.request(tokenUrl, { method: 'POST', headers, body: form.toString() });
    } catch (err) {
      if (err instanceof OutboundRefused) throw invalidFields([{ field: `${fieldPrefix}.oidcUrl`, message: err.message }]);
      // A name that does not exist is a mistake in the configuration, not an outage of the provider.
      if ((err as NodeJS.ErrnoException).code === 'ENOTFOUND' || /\bENOTFOUND\b/.test((err as Error).message)) {
        throw invalidFields([{ field: `${fieldPrefix}.oidcUrl`, message: `no such host: ${new URL(tokenUrl).hostname}` }]);
      }
      throw new Problem(502, 'Bad Gateway', `the registrar's identity provider could not be reached: ${(err as Error).message}`);
    }
    const body = jsonObjectOf(reply);
    if (reply.ok && typeof body?.access_token === 'string') {
      return { token: body.access_token, expiresIn: typeof body.expires_in === 'number' ? body.expires_in : 3600 };
    }
    if (reply.status >= 500) throw new Problem(502, 'Bad Gateway', `the registrar's identity provider answered ${reply.status}`);
    const reason =
      typeof body?.error_description === 'string'
        ? body.error_description
        : typeof body?.error === 'string'
          ? body.error
          : `HTTP ${reply.status}`;
    throw invalidFields([{ field: `${fieldPrefix}.password`, message: `Failed to authenticate with registrar: ${reason}` }]);
  }
}

function view(document: StoredDocument, createdAt: string, updatedAt: string): RegistrarConfig {
  return {
    registrarUrl: document.registrarUrl,
    oidcUrl: document.oidcUrl,
    clientId: document.clientId,
    username: document.username,
    registrationCertificateDefaults: document.registrationCertificateDefaults,
    hasPassword: Boolean(document.sealedPassword),
    hasClientSecret: Boolean(document.sealedClientSecret),
    createdAt,
    updatedAt,
  };
}

/** The message of a registrar error answer (NestJS: {statusCode, message, error}; message may be a list). */
function registrarMessage(body: unknown): string | undefined {
  if (typeof body === 'string') return body.slice(0, 500) || undefined;
  if (!body || typeof body !== 'object') return undefined;
  const { message, error } = body as { message?: unknown; error?: unknown };
  if (Array.isArray(message))
    return (
      message
        .filter((m) => typeof m === 'string')
        .join('; ')
        .slice(0, 500) || undefined
    );
  if (typeof message === 'string') return message.slice(0, 500);
  return typeof error === 'string' ? error.slice(0, 500) : undefined;
}
