// The trust marks a tenant issues as an OpenID Federation trust mark issuer (OpenID Federation 1.0
// section 7): the trust mark types it defines, and the marks it grants an entity of one of them,
// signed with its federation key (the one its entity configuration is signed with, so that a
// verifier finds the key through the issuer's own trust chain). A granted mark is kept as signed:
// the status endpoint (section 8.4) recognises it by its SHA-256 and answers revoked once revoked.
import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AuditService } from '../../audit/service.js';
import { type Signer, signJwtWith } from '../../key-chains/signing.js';
import type { RequestContext } from '../../platform/auth/principal.js';
import type { Clock } from '../../platform/clock.js';
import { tenantDb } from '../../platform/db/tenant-db.js';
import type { Executor } from '../../platform/db/values.js';
import { conflict, invalidFields, notFound } from '../../platform/http/problem.js';
import { webUrl } from '../../platform/http/web-urls.js';

export const TRUST_MARK_TYP = 'trust-mark+jwt';
export const TRUST_MARK_MEDIA_TYPE = 'application/trust-mark+jwt';
export const TRUST_MARK_STATUS_TYP = 'trust-mark-status-response+jwt';
export const TRUST_MARK_STATUS_MEDIA_TYPE = 'application/trust-mark-status-response+jwt';

/** What the status endpoint says of a mark (section 8.4.2). */
export type TrustMarkStatus = 'active' | 'expired' | 'revoked' | 'invalid';

/** Where a trust mark issuer answers status, list and mark requests (sections 8.4 to 8.6): beside its entity configuration. */
export const trustMarkEndpoints = (credentialIssuer: string) => ({
  federation_trust_mark_status_endpoint: `${credentialIssuer}/federation/trust-mark-status`,
  federation_trust_mark_list_endpoint: `${credentialIssuer}/federation/trust-mark-list`,
  federation_trust_mark_endpoint: `${credentialIssuer}/federation/trust-mark`,
});

/** The JWT's SHA-256 (base64url): how a mark presented to the status endpoint is found. */
export const trustMarkDigest = (jwt: string) => createHash('sha256').update(jwt).digest('base64url');

const TrustMarkTypeId = z.string().min(1).max(500).describe('the trust mark type identifier (trust_mark_type), normally a URL');

export const TrustMarkTypeInputSchema = z
  .strictObject({
    trustMarkType: TrustMarkTypeId,
    logoUri: webUrl({ max: 500 }).optional().describe('logo_uri of the marks: an image that represents the mark'),
    ref: webUrl({ max: 500 }).optional().describe('ref of the marks: where a human reads what the mark means'),
    lifetimeSeconds: z
      .number()
      .int()
      .min(60)
      .max(5 * 366 * 86_400)
      .optional()
      .describe('how long a mark of this type is valid after it is granted (its exp); absent: marks without exp'),
  })
  .meta({
    examples: [
      {
        trustMarkType: 'https://federation.example.eu/trust-marks/pid-provider',
        logoUri: 'https://federation.example.eu/trust-marks/pid-provider.svg',
        ref: 'https://federation.example.eu/trust-marks/pid-provider.html',
        lifetimeSeconds: 31_536_000,
      },
    ],
  });

export const TrustMarkTypeSchema = z
  .object({
    id: z.string(),
    trustMarkType: z.string(),
    logoUri: z.string().optional(),
    ref: z.string().optional(),
    lifetimeSeconds: z.number().optional(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'FederationTrustMarkType' });

export const TrustMarkGrantSchema = z
  .strictObject({
    trustMarkType: TrustMarkTypeId.describe('one of the trust mark types this tenant defines (/api/federation/trust-mark-types)'),
    sub: webUrl({ max: 500 }).describe('the entity identifier the mark is granted to'),
  })
  .meta({
    examples: [{ trustMarkType: 'https://federation.example.eu/trust-marks/pid-provider', sub: 'https://pid-provider.example.eu' }],
  });

export const TrustMarkSchema = z
  .object({
    id: z.string(),
    trustMarkType: z.string(),
    sub: z.string(),
    trustMark: z.string().describe('the signed trust mark (typ trust-mark+jwt), as the subject publishes it in its trust_marks'),
    status: z.enum(['active', 'expired', 'revoked']),
    expiresAt: z.string().optional(),
    revokedAt: z.string().optional(),
    createdAt: z.string(),
  })
  .meta({ id: 'FederationTrustMark' });

export type TrustMarkTypeInput = z.output<typeof TrustMarkTypeInputSchema>;
export type TrustMarkType = z.output<typeof TrustMarkTypeSchema>;
export type TrustMarkGrant = z.output<typeof TrustMarkGrantSchema>;
export type TrustMark = z.output<typeof TrustMarkSchema>;
type TypeDocument = Pick<TrustMarkType, 'logoUri' | 'ref' | 'lifetimeSeconds'>;

interface TypeRow {
  id: string;
  trust_mark_type: string;
  document: string;
  created_at: string;
  updated_at: string;
}

interface MarkRow {
  id: string;
  trust_mark_type: string;
  subject: string;
  jwt: string;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

const toType = (row: TypeRow): TrustMarkType => ({
  id: row.id,
  trustMarkType: row.trust_mark_type,
  ...(JSON.parse(row.document) as TypeDocument),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** ISO text from either engine (PostgreSQL may hand back a Date). */
const iso = (value: string | Date) => new Date(value).toISOString();

export class FederationTrustMarks {
  constructor(
    private readonly db: Executor,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  async listTypes(tenantId: string): Promise<TrustMarkType[]> {
    const rows = await tenantDb(this.db, tenantId)
      .selectFrom('federation_trust_mark_types')
      .selectAll()
      .orderBy('trust_mark_type')
      .execute();
    return rows.map(toType);
  }

  /** Whether the tenant issues trust marks: its entity configuration then names the trust mark endpoints. */
  async issues(tenantId: string): Promise<boolean> {
    const row = await tenantDb(this.db, tenantId).selectFrom('federation_trust_mark_types').select('id').executeTakeFirst();
    return row !== undefined;
  }

  async createType(ctx: RequestContext, tenantId: string, input: TrustMarkTypeInput): Promise<TrustMarkType> {
    const now = this.clock.now().toISOString();
    const document: TypeDocument = {
      ...(input.logoUri && { logoUri: input.logoUri }),
      ...(input.ref && { ref: input.ref }),
      ...(input.lifetimeSeconds && { lifetimeSeconds: input.lifetimeSeconds }),
    };
    const row = {
      id: randomUUID(),
      trust_mark_type: input.trustMarkType,
      document: JSON.stringify(document),
      created_at: now,
      updated_at: now,
    };
    const taken = () => conflict(`the trust mark type ${input.trustMarkType} is defined already`);
    await this.db.transaction().execute(async (trx) => {
      const inserted = await tenantDb(trx, tenantId)
        .insertInto('federation_trust_mark_types', row)
        .onConflict((oc) => oc.columns(['tenant_id', 'trust_mark_type']).doNothing())
        .executeTakeFirst();
      if ((inserted.numInsertedOrUpdatedRows ?? 0n) === 0n) throw taken();
      await this.audit.record(ctx, { tenantId, actionType: 'federation_trust_mark_type.created', after: { ...toType(row) } }, trx);
    });
    return toType(row);
  }

  /** Removes a type: no more marks of it are granted; those granted stay, and keep their status. */
  async deleteType(ctx: RequestContext, tenantId: string, id: string) {
    const before = (await this.listTypes(tenantId)).find((type) => type.id === id);
    if (!before) throw notFound('trust mark type', id);
    await this.db.transaction().execute(async (trx) => {
      await tenantDb(trx, tenantId).deleteFrom('federation_trust_mark_types').where('id', '=', id).execute();
      await this.audit.record(ctx, { tenantId, actionType: 'federation_trust_mark_type.deleted', before: { ...before } }, trx);
    });
  }

  async list(tenantId: string, filter: { trustMarkType?: string; sub?: string } = {}): Promise<TrustMark[]> {
    let query = tenantDb(this.db, tenantId).selectFrom('federation_trust_marks').selectAll();
    if (filter.trustMarkType !== undefined) query = query.where('trust_mark_type', '=', filter.trustMarkType);
    if (filter.sub !== undefined) query = query.where('subject', '=', filter.sub);
    const rows = await query.orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => this.toMark(row));
  }

  async get(tenantId: string, id: string): Promise<TrustMark> {
    const row = await tenantDb(this.db, tenantId).selectFrom('federation_trust_marks').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound('trust mark', id);
    return this.toMark(row);
  }

  /** The mark as granted, found by its JWT; undefined when this tenant did not grant it. */
  async findByJwt(tenantId: string, jwt: string): Promise<TrustMark | undefined> {
    const row = await tenantDb(this.db, tenantId)
      .selectFrom('federation_trust_marks')
      .selectAll()
      .where('jwt_sha256', '=', trustMarkDigest(jwt))
      .executeTakeFirst();
    return row && row.jwt === jwt ? this.toMark(row) : undefined;
  }

  /** Grants `grant.sub` a mark of one of the tenant's types, signed by `signer` as `issuerEntityId`. */
  async grant(ctx: RequestContext, tenantId: string, grant: TrustMarkGrant, issuer: { entityId: string; signer: Signer }) {
    const type = (await this.listTypes(tenantId)).find((candidate) => candidate.trustMarkType === grant.trustMarkType);
    if (!type)
      throw invalidFields([
        {
          field: 'body.trustMarkType',
          message: `${grant.trustMarkType} is not a trust mark type of this tenant (/api/federation/trust-mark-types)`,
        },
      ]);
    const issuedAt = this.clock.now();
    const iat = Math.floor(issuedAt.getTime() / 1000);
    const exp = type.lifetimeSeconds ? iat + type.lifetimeSeconds : undefined;
    const jwt = await signJwtWith(
      issuer.signer,
      { typ: TRUST_MARK_TYP },
      {
        iss: issuer.entityId,
        sub: grant.sub,
        trust_mark_type: type.trustMarkType,
        iat,
        ...(exp !== undefined && { exp }),
        ...(type.logoUri && { logo_uri: type.logoUri }),
        ...(type.ref && { ref: type.ref }),
      },
      { x5c: false },
    );
    const now = issuedAt.toISOString();
    const row = {
      id: randomUUID(),
      trust_mark_type: type.trustMarkType,
      subject: grant.sub,
      jwt,
      jwt_sha256: trustMarkDigest(jwt),
      expires_at: exp === undefined ? null : new Date(exp * 1000).toISOString(),
      revoked_at: null,
      created_at: now,
      updated_at: now,
    };
    const mark = this.toMark(row);
    await this.db.transaction().execute(async (trx) => {
      await tenantDb(trx, tenantId).insertInto('federation_trust_marks', row).execute();
      await this.audit.record(ctx, { tenantId, actionType: 'federation_trust_mark.granted', after: { ...mark } }, trx);
    });
    return mark;
  }

  /** Revokes a mark: one statement decides, so that two revocations at once audit once and the second gets 409. */
  async revoke(ctx: RequestContext, tenantId: string, id: string): Promise<TrustMark> {
    const before = await this.get(tenantId, id);
    const now = this.clock.now().toISOString();
    await this.db.transaction().execute(async (trx) => {
      const updated = await tenantDb(trx, tenantId)
        .updateTable('federation_trust_marks')
        .set({ revoked_at: now, updated_at: now })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if ((updated.numUpdatedRows ?? 0n) === 0n) throw conflict(`the trust mark ${id} is revoked already`);
      await this.audit.record(ctx, { tenantId, actionType: 'federation_trust_mark.revoked', before: { ...before } }, trx);
    });
    return this.get(tenantId, id);
  }

  private toMark(row: MarkRow): TrustMark {
    const expiresAt = row.expires_at === null ? undefined : iso(row.expires_at);
    const expired = expiresAt !== undefined && new Date(expiresAt).getTime() <= this.clock.now().getTime();
    return {
      id: row.id,
      trustMarkType: row.trust_mark_type,
      sub: row.subject,
      trustMark: row.jwt,
      status: row.revoked_at !== null ? 'revoked' : expired ? 'expired' : 'active',
      ...(expiresAt && { expiresAt }),
      ...(row.revoked_at !== null && { revokedAt: iso(row.revoked_at) }),
      createdAt: iso(row.created_at),
    };
  }
}

/** The status response (section 8.4.2) about `trustMark` by the issuer `issuerEntityId`. */
export function signTrustMarkStatus(signer: Signer, issuerEntityId: string, trustMark: string, status: TrustMarkStatus, now: Date) {
  return signJwtWith(
    signer,
    { typ: TRUST_MARK_STATUS_TYP },
    { iss: issuerEntityId, iat: Math.floor(now.getTime() / 1000), trust_mark: trustMark, status },
    { x5c: false },
  );
}
