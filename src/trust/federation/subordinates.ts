// The subordinates of a tenant that is an OpenID Federation intermediate or trust anchor: entities it
// vouches for, registered through the management API, about which it answers subordinate statements
// (OpenID Federation 1.0 section 3, signed by its federation key) at its fetch endpoint (section 8.1)
// and which its list endpoint names (section 8.2).
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AuditService } from '../../audit/service.js';
import type { Signer } from '../../key-chains/signing.js';
import { signJwtWith } from '../../key-chains/signing.js';
import type { RequestContext } from '../../platform/auth/principal.js';
import type { Clock } from '../../platform/clock.js';
import { tenantDb } from '../../platform/db/tenant-db.js';
import { type Executor, isUniqueViolation } from '../../platform/db/values.js';
import { conflict, invalidFields, notFound } from '../../platform/http/problem.js';
import { webUrl } from '../../platform/http/web-urls.js';
import { ENTITY_STATEMENT_TYP, type EntityStatement, entityConfigurationUrl, FederationRefused } from './entity-statement.js';
import type { ResolvedTrust } from './resolver.js';

/** How long a subordinate statement is valid: resolvers fetch it again after this at the latest. */
export const SUBORDINATE_STATEMENT_LIFETIME_SECONDS = 86_400;

const Jwk = z.looseObject({ kty: z.string(), kid: z.string().optional() });
const Jwks = z.strictObject({ keys: z.array(Jwk).min(1).max(20) });

/** One parameter's policy: only the standard operators (section 6.1.3.1), each with the type the spec gives it. */
const ParameterPolicy = z.strictObject({
  value: z.unknown().optional(),
  add: z.array(z.unknown()).optional(),
  default: z.unknown().optional(),
  one_of: z.array(z.unknown()).optional(),
  subset_of: z.array(z.unknown()).optional(),
  superset_of: z.array(z.unknown()).optional(),
  essential: z.boolean().optional(),
});

const MetadataPolicy = z
  .record(z.string().min(1).max(100), z.record(z.string().min(1).max(200), ParameterPolicy))
  .describe(
    'metadata_policy of the statement (section 6.1): entity type -> metadata parameter -> operators (value, add, default, one_of, subset_of, superset_of, essential; no others)',
  );

const Constraints = z
  .strictObject({
    max_path_length: z.number().int().min(0).max(10).optional().describe('how many intermediates may be below this subordinate'),
    naming_constraints: z
      .strictObject({
        permitted: z.array(z.string().min(1).max(500)).max(50).optional(),
        excluded: z.array(z.string().min(1).max(500)).max(50).optional(),
      })
      .optional()
      .describe('entity identifiers allowed below (section 6.2.2): host names, or .domain for its subdomains'),
    allowed_entity_types: z.array(z.string().min(1).max(100)).max(20).optional(),
  })
  .describe('constraints of the statement (section 6.2), as the spec names them');

export const SubordinateInputSchema = z
  .strictObject({
    entityId: webUrl({ max: 500 }).describe("the subordinate's entity identifier: https URL (http outside production)"),
    jwks: Jwks.optional().describe(
      "the subordinate's federation keys this tenant vouches for; absent: read from its entity configuration ({entityId}/.well-known/openid-federation) when registered",
    ),
    metadataPolicy: MetadataPolicy.optional(),
    constraints: Constraints.optional(),
  })
  .meta({
    examples: [
      {
        entityId: 'https://pid-provider.example.eu',
        jwks: {
          keys: [
            {
              kty: 'EC',
              crv: 'P-256',
              x: 'KJ8Aa6vAHtpwQTHvvo2v3-Pk0UMuIKElxlRJgBnLFRI',
              y: 'nsyaDLnQ1x7J0xI84afdvrIePT_viVm04hJBuICHXcw',
              kid: 'pid-provider-federation-1',
            },
          ],
        },
        metadataPolicy: { openid_credential_issuer: { display: { essential: true } } },
        constraints: { max_path_length: 0 },
      },
    ],
  });

export const SubordinateSchema = z
  .object({
    id: z.string(),
    entityId: z.string(),
    jwks: z.object({ keys: z.array(Jwk) }),
    metadataPolicy: MetadataPolicy.optional(),
    constraints: Constraints.optional(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'FederationSubordinate' });

export type SubordinateInput = z.output<typeof SubordinateInputSchema>;
export type Subordinate = z.output<typeof SubordinateSchema>;
type Document = Pick<Subordinate, 'jwks' | 'metadataPolicy' | 'constraints'>;

interface Row {
  id: string;
  entity_id: string;
  document: string;
  created_at: string;
  updated_at: string;
}

const toSubordinate = (row: Row): Subordinate => ({
  id: row.id,
  entityId: row.entity_id,
  ...(JSON.parse(row.document) as Document),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export class FederationSubordinates {
  constructor(
    private readonly db: Executor,
    private readonly audit: AuditService,
    /** The entity's own configuration, read and checked as the trust chain resolver reads one; throws FederationRefused. */
    private readonly entityConfigurationOf: (entityId: string) => Promise<EntityStatement>,
    private readonly clock: Clock,
  ) {}

  async list(tenantId: string): Promise<Subordinate[]> {
    const rows = await tenantDb(this.db, tenantId).selectFrom('federation_subordinates').selectAll().orderBy('entity_id').execute();
    return rows.map(toSubordinate);
  }

  async get(tenantId: string, id: string): Promise<Subordinate> {
    const row = await tenantDb(this.db, tenantId).selectFrom('federation_subordinates').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound('federation subordinate', id);
    return toSubordinate(row);
  }

  /** The subordinate registered as `entityId`; undefined when there is none. */
  async findByEntityId(tenantId: string, entityId: string): Promise<Subordinate | undefined> {
    const row = await tenantDb(this.db, tenantId)
      .selectFrom('federation_subordinates')
      .selectAll()
      .where('entity_id', '=', entityId)
      .executeTakeFirst();
    return row && toSubordinate(row);
  }

  async create(ctx: RequestContext, tenantId: string, input: SubordinateInput): Promise<Subordinate> {
    if (await this.findByEntityId(tenantId, input.entityId)) throw conflict(`the entity ${input.entityId} is a subordinate already`);
    const now = this.clock.now().toISOString();
    const row = {
      id: randomUUID(),
      entity_id: input.entityId,
      document: JSON.stringify(await this.documentOf(input)),
      created_at: now,
      updated_at: now,
    };
    await this.db.transaction().execute(async (trx) => {
      // The entity registered concurrently: refused as above rather than failing on the unique constraint.
      const inserted = await tenantDb(trx, tenantId)
        .insertInto('federation_subordinates', row)
        .onConflict((oc) => oc.columns(['tenant_id', 'entity_id']).doNothing())
        .executeTakeFirst();
      if ((inserted.numInsertedOrUpdatedRows ?? 0n) === 0n) throw conflict(`the entity ${input.entityId} is a subordinate already`);
      await this.audit.record(ctx, { tenantId, actionType: 'federation_subordinate.created', after: { ...toSubordinate(row) } }, trx);
    });
    return toSubordinate(row);
  }

  async update(ctx: RequestContext, tenantId: string, id: string, input: SubordinateInput): Promise<Subordinate> {
    const before = await this.get(tenantId, id);
    const other = await this.findByEntityId(tenantId, input.entityId);
    if (other && other.id !== id) throw conflict(`the entity ${input.entityId} is another subordinate already`);
    const changes = {
      entity_id: input.entityId,
      document: JSON.stringify(await this.documentOf(input)),
      updated_at: this.clock.now().toISOString(),
    };
    const after = toSubordinate({ id, created_at: before.createdAt, ...changes });
    await this.db
      .transaction()
      .execute(async (trx) => {
        const updated = await tenantDb(trx, tenantId)
          .updateTable('federation_subordinates')
          .set(changes)
          .where('id', '=', id)
          .executeTakeFirst();
        // Deleted since it was read: nothing to audit as updated.
        if ((updated.numUpdatedRows ?? 0n) === 0n) throw notFound('federation subordinate', id);
        await this.audit.record(
          ctx,
          { tenantId, actionType: 'federation_subordinate.updated', before: { ...before }, after: { ...after } },
          trx,
        );
      })
      .catch((err: unknown) => {
        // Another subordinate moved to this entity concurrently: refused as above, not a 500 from the unique constraint.
        if (isUniqueViolation(err)) throw conflict(`the entity ${input.entityId} is another subordinate already`);
        throw err;
      });
    return after;
  }

  async delete(ctx: RequestContext, tenantId: string, id: string) {
    const before = await this.get(tenantId, id);
    await this.db.transaction().execute(async (trx) => {
      await tenantDb(trx, tenantId).deleteFrom('federation_subordinates').where('id', '=', id).execute();
      await this.audit.record(ctx, { tenantId, actionType: 'federation_subordinate.deleted', before: { ...before } }, trx);
    });
  }

  private async documentOf(input: SubordinateInput): Promise<Document> {
    return {
      jwks: input.jwks ?? (await this.keysOfEntityConfiguration(input.entityId)),
      ...(input.metadataPolicy && { metadataPolicy: input.metadataPolicy }),
      ...(input.constraints && { constraints: input.constraints }),
    };
  }

  /**
   * The keys the subordinate's own entity configuration publishes, read as the trust chain resolver
   * reads an entity configuration (the outbound client, the deadline, its self-signature). A 400
   * naming jwks when it cannot be read.
   */
  private async keysOfEntityConfiguration(entityId: string): Promise<Document['jwks']> {
    const refuse = (reason: string) => invalidFields([{ field: 'body.jwks', message: `not given, and ${reason}` }]);
    let statement: EntityStatement;
    try {
      statement = await this.entityConfigurationOf(entityId);
    } catch (err) {
      if (err instanceof FederationRefused) throw refuse(err.message);
      throw err;
    }
    const keys = Jwks.safeParse(statement.jwks);
    if (!keys.success) throw refuse(`the jwks of ${entityConfigurationUrl(entityId)} is not a set of 1 to 20 keys`);
    return keys.data;
  }
}

/** The subordinate statement about `subordinate` by the tenant `issuerEntityId` (section 3; no authority_hints). */
export function signSubordinateStatement(signer: Signer, issuerEntityId: string, subordinate: Subordinate, now: Date) {
  const iat = Math.floor(now.getTime() / 1000);
  return signJwtWith(
    signer,
    { typ: ENTITY_STATEMENT_TYP },
    {
      iss: issuerEntityId,
      sub: subordinate.entityId,
      iat,
      exp: iat + SUBORDINATE_STATEMENT_LIFETIME_SECONDS,
      jwks: subordinate.jwks,
      ...(subordinate.metadataPolicy && { metadata_policy: subordinate.metadataPolicy }),
      ...(subordinate.constraints && { constraints: subordinate.constraints }),
    },
    { x5c: false },
  );
}

export const RESOLVE_RESPONSE_TYP = 'resolve-response+jwt';
export const RESOLVE_RESPONSE_MEDIA_TYPE = 'application/resolve-response+jwt';

/** The resolve response (section 8.3.2) about `sub` by the tenant `resolverEntityId`: valid no longer than the chain it carries. */
export function signResolveResponse(signer: Signer, resolverEntityId: string, sub: string, trust: ResolvedTrust, now: Date) {
  const iat = Math.floor(now.getTime() / 1000);
  return signJwtWith(
    signer,
    { typ: RESOLVE_RESPONSE_TYP },
    {
      iss: resolverEntityId,
      sub,
      iat,
      exp: Math.min(trust.expiresAt, iat + SUBORDINATE_STATEMENT_LIFETIME_SECONDS),
      metadata: trust.metadata,
      trust_chain: trust.chain,
    },
    { x5c: false },
  );
}
