// Schema metadata at the tenant's registrar (TS11 catalogue, experimental): publishing signed
// metadata (reserve an id, sign the payload with the tenant's access certificate chain, submit the
// JWS), new versions, deprecation and catalog attributes, and the catalog's reads, passed on with
// their answers checked. Everything a request can get wrong is checked before the registrar is called.

import { decodeJwt } from 'jose';
import type { AuditService } from '../audit/service.js';
import { type SchemaFormat, type SchemaMetaConfig, SchemaMetaConfigSchema } from '../credential-configs/schema-meta.js';
import type { CredentialConfigService, CredentialConfiguration } from '../credential-configs/service.js';
import { claimsSchema } from '../credential-configs/service.js';
import { knownFormat } from '../formats/index.js';
import { type Signer, type SigningService, signJwtWith } from '../key-chains/signing.js';
import type { RequestContext } from '../platform/auth/principal.js';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/connect.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import { conflict, type FieldError, invalidFields, notFound, Problem, unlessNotFound } from '../platform/http/problem.js';
import { underWebUrlPolicy } from '../platform/http/web-urls.js';
import type { RegistrarService } from '../registrar/service.js';
import { buildPayload, type ConfigurationFacts, shortIdOf } from './document.js';
import {
  type PublishInput,
  type PublishVersionInput,
  SCHEMA_METADATA_JWT_TYPE,
  type SchemaMetadataRecord,
  SchemaMetadataRecordSchema,
  type SchemaMetaPayload,
  VocabulariesSchema,
} from './schemas.js';
import * as store from './store.js';

export interface SchemaMetadataDeps {
  db: Db['kysely'];
  registrar: RegistrarService;
  signing: SigningService;
  credentialConfigs: CredentialConfigService;
  audit: AuditService;
  /** The attestation's iat and the publication's stamp. */
  clock: Clock;
  /** The vct an SD-JWT VC configuration's credentials carry (a given URI, or where the service hosts the type). */
  vctOf: (tenantId: string, configuration: CredentialConfiguration) => string;
}

const segment = encodeURIComponent;
type Attributes = { category?: string; tags?: string[] };
const versionPath = (id: string, version: string) => `/schema-metadata/${segment(id)}/versions/${segment(version)}`;

/** A registrar answer of the wrong shape is the registrar's fault: 502, never a 500 from our serializer. */
function badGateway(what: string): Problem {
  return new Problem(502, 'Bad Gateway', `the registrar answered ${what} with something unexpected`);
}

function asRecord(value: unknown, what: string): SchemaMetadataRecord {
  const parsed = SchemaMetadataRecordSchema.safeParse(value);
  if (!parsed.success) throw badGateway(what);
  return parsed.data;
}

function asRecords(value: unknown, what: string): SchemaMetadataRecord[] {
  if (!Array.isArray(value)) throw badGateway(what);
  return value.map((item) => asRecord(item, what));
}

export class SchemaMetadataService {
  constructor(private readonly deps: SchemaMetadataDeps) {}

  // ---- publication ----

  /** A new attestation id: reserved at the registrar, signed, submitted; the registrar's record. */
  async publish(ctx: RequestContext, tenantId: string, input: PublishInput): Promise<SchemaMetadataRecord> {
    if (input.config.id !== undefined) {
      throw invalidFields([
        { field: 'body.config.id', message: 'is assigned by the registrar; publish-version adds a version to an existing id' },
      ]);
    }
    const prepared = await this.prepare(tenantId, input);
    const reserved = await this.deps.registrar.call(tenantId, 'POST', '/schema-metadata/reserve', {
      body: input.config.nameHint ? { nameHint: input.config.nameHint } : {},
    });
    const reservedId = (reserved as { reservedId?: unknown } | null)?.reservedId;
    if (typeof reservedId !== 'string' || reservedId.length === 0 || reservedId.length > 2048) throw badGateway('the reservation');
    return this.submit(ctx, tenantId, input, prepared, reservedId);
  }

  /** A new version of an id the registrar already has (it refuses another owner and a version it has). */
  async publishVersion(ctx: RequestContext, tenantId: string, input: PublishVersionInput): Promise<SchemaMetadataRecord> {
    const prepared = await this.prepare(tenantId, input);
    return this.submit(ctx, tenantId, input, prepared, await this.attestationUrl(tenantId, input.config.id));
  }

  /** What the service would sign for a credential configuration, from its schemaMeta and fields. */
  async generate(tenantId: string, credentialConfigId: string): Promise<Omit<SchemaMetaPayload, 'id'> & { id?: string }> {
    const configuration = await this.deps.credentialConfigs.get(tenantId, credentialConfigId);
    const config = storedSchemaMeta(configuration);
    const { payload, errors } = buildPayload(config, this.factsOf(tenantId, configuration));
    if (!payload) throw conflict(`the schemaMeta of credential configuration '${credentialConfigId}' is incomplete: ${describe(errors)}`);
    return { ...(config.id && { id: config.id }), ...payload };
  }

  /** Checks the input, builds the payload and finds the signer, all before the registrar is called. */
  private async prepare(tenantId: string, input: PublishInput) {
    const configuration = input.credentialConfigId
      ? await unlessNotFound(this.deps.credentialConfigs.get(tenantId, input.credentialConfigId))
      : undefined;
    if (input.credentialConfigId && !configuration) {
      throw invalidFields([
        { field: 'body.credentialConfigId', message: `credential configuration '${input.credentialConfigId}' does not exist` },
      ]);
    }
    const { payload, errors } = buildPayload(input.config, configuration && this.factsOf(tenantId, configuration));
    if (!payload) throw invalidFields(errors);
    // The schema metadata is signed with the tenant's access certificate chain, as its requests are.
    const signer = await this.deps.signing.signer(tenantId, { usageType: 'access' });
    return { payload, signer, configuration };
  }

  private async submit(
    ctx: RequestContext,
    tenantId: string,
    input: PublishInput,
    prepared: { payload: Omit<SchemaMetaPayload, 'id'>; signer: Signer; configuration?: CredentialConfiguration },
    attestationId: string,
  ): Promise<SchemaMetadataRecord> {
    const jwt = await signJwtWith(
      prepared.signer,
      { typ: SCHEMA_METADATA_JWT_TYPE },
      { id: attestationId, ...prepared.payload, iat: Math.floor(this.deps.clock.now().getTime() / 1000) },
    );
    let record = asRecord(
      await this.deps.registrar.call(tenantId, 'POST', '/schema-metadata', { body: { jwt }, auth: false }),
      'the submission',
    );
    await store.recordPublication(tenantDb(this.deps.db, tenantId), {
      schema_id: record.id,
      version: record.version,
      attestation_id: attestationId,
      created_at: this.deps.clock.now().toISOString(),
    });
    const { category, tags } = input.config;
    if (category !== undefined || tags !== undefined)
      record = await this.setAttributes(tenantId, record.id, record.version, { category, tags });
    if (prepared.configuration) {
      await this.deps.credentialConfigs.update(ctx, tenantId, prepared.configuration.id, {
        schemaMeta: { ...input.config, id: attestationId },
      });
    }
    await this.deps.audit.record(ctx, {
      tenantId,
      actionType: 'schema_metadata.published',
      after: { id: record.id, version: record.version, attestationId, credentialConfigId: prepared.configuration?.id ?? null },
    });
    return record;
  }

  /** The reserved URL of an id given as that URL or as the registrar's short id (read from its latest signed JWT). */
  private async attestationUrl(tenantId: string, id: string): Promise<string> {
    if (URL.canParse(id)) return id;
    const latest = asRecord(
      await this.deps.registrar.call(tenantId, 'GET', `/schema-metadata/${segment(id)}`, { auth: false, notFoundAs404: true }),
      'the schema metadata',
    );
    const claimed = payloadId(latest.signedJwt);
    if (!claimed) throw badGateway('the schema metadata (its signedJwt names no id)');
    return claimed;
  }

  private factsOf(tenantId: string, configuration: CredentialConfiguration): ConfigurationFacts {
    const format = configuration.config.format as SchemaFormat;
    return {
      id: configuration.id,
      format,
      type: knownFormat(format).type.of(configuration, () => this.deps.vctOf(tenantId, configuration)),
      claimsSchema: claimsSchema(configuration),
    };
  }

  // ---- catalog operations ----

  async list(tenantId: string, query: { attestationId?: string; version?: string }): Promise<SchemaMetadataRecord[]> {
    const params = new URLSearchParams();
    if (query.attestationId) params.set('id', shortIdOf(query.attestationId));
    if (query.version) params.set('version', query.version);
    const path = `/schema-metadata${params.size ? `?${params}` : ''}`;
    return asRecords(await this.deps.registrar.call(tenantId, 'GET', path, { auth: false }), 'the catalog');
  }

  /** Every version of every id the tenant published; an id the registrar no longer has is left out. */
  async mine(tenantId: string): Promise<SchemaMetadataRecord[]> {
    // Checked first: below, a 404 means an id the registrar dropped, not a registrar that is not there.
    if (!(await this.deps.registrar.configured(tenantId))) throw notFound('registrar configuration of tenant', tenantId);
    const ids = await store.publishedIds(tenantDb(this.deps.db, tenantId));
    const found = await Promise.all(ids.map((id) => unlessNotFound(this.versions(tenantId, id))));
    return found.flatMap((records) => records ?? []);
  }

  async versions(tenantId: string, id: string): Promise<SchemaMetadataRecord[]> {
    const path = `/schema-metadata/${segment(id)}/versions`;
    return asRecords(await this.deps.registrar.call(tenantId, 'GET', path, { auth: false, notFoundAs404: true }), 'the versions');
  }

  async jwt(tenantId: string, id: string, version: string): Promise<string> {
    const answer = await this.deps.registrar.call(tenantId, 'GET', `${versionPath(id, version)}/jwt`, { auth: false, notFoundAs404: true });
    if (typeof answer !== 'string' || !/^[\w-]+\.[\w-]+\.[\w-]+$/.test(answer.trim())) throw badGateway('the JWT');
    return answer.trim();
  }

  async schema(tenantId: string, id: string, version: string, format: SchemaFormat): Promise<Record<string, unknown>> {
    const path = `${versionPath(id, version)}/schemas/${segment(format)}`;
    const answer = await this.deps.registrar.call(tenantId, 'GET', path, { auth: false, notFoundAs404: true });
    if (!answer || typeof answer !== 'object' || Array.isArray(answer)) throw badGateway('the schema');
    return answer as Record<string, unknown>;
  }

  async vocabularies(tenantId: string) {
    const parsed = VocabulariesSchema.safeParse(
      await this.deps.registrar.call(tenantId, 'GET', '/schema-metadata/vocabularies', { auth: false }),
    );
    if (!parsed.success) throw badGateway('the vocabularies');
    return parsed.data;
  }

  async deprecate(
    ctx: RequestContext,
    tenantId: string,
    id: string,
    version: string,
    body: { deprecated: boolean; message?: string; supersededByVersion?: string },
  ): Promise<SchemaMetadataRecord> {
    const answer = await this.deps.registrar.call(tenantId, 'PATCH', `${versionPath(id, version)}/deprecation`, {
      body,
      notFoundAs404: true,
    });
    const record = asRecord(answer, 'the deprecation');
    await this.deps.audit.record(ctx, { tenantId, actionType: 'schema_metadata.deprecation_changed', after: { id, version, ...body } });
    return record;
  }

  /** Category and tags: attributes the registrar keeps beside the signed metadata. */
  async classify(ctx: RequestContext, tenantId: string, id: string, version: string, body: Attributes): Promise<SchemaMetadataRecord> {
    const record = await this.setAttributes(tenantId, id, version, body);
    await this.deps.audit.record(ctx, { tenantId, actionType: 'schema_metadata.classified', after: { id, version, ...body } });
    return record;
  }

  private async setAttributes(tenantId: string, id: string, version: string, body: Attributes): Promise<SchemaMetadataRecord> {
    const answer = await this.deps.registrar.call(tenantId, 'PATCH', versionPath(id, version), { body, notFoundAs404: true });
    return asRecord(answer, 'the update');
  }
}

/**
 * The schemaMeta of a configuration as a SchemaMetaConfig: 409 when it has none, or one stored before
 * schemaMeta was checked (any object was kept then). URLs are judged as stored, not by today's policy.
 */
function storedSchemaMeta(configuration: CredentialConfiguration): SchemaMetaConfig {
  const { id, schemaMeta } = configuration;
  if (!schemaMeta) throw conflict(`credential configuration '${id}' has no schemaMeta: set it to generate schema metadata`);
  const parsed = underWebUrlPolicy('unjudged', () => SchemaMetaConfigSchema.safeParse(schemaMeta));
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => `schemaMeta.${issue.path.join('.')}: ${issue.message}`).join('; ');
  throw conflict(`the schemaMeta of credential configuration '${id}' is not valid; set it again: ${issues}`);
}

/** The id claim of a JWS payload, unverified: the registrar verified it when it took the JWT. */
function payloadId(jwt: string): string | undefined {
  try {
    const { id } = decodeJwt(jwt);
    return typeof id === 'string' && id.length <= 2048 ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Errors of a stored schemaMeta, named as the configuration holds them. */
const describe = (errors: FieldError[]) =>
  errors.map((e) => `${e.field.replace(/^body\.config\./, 'schemaMeta.')}: ${e.message}`).join('; ');
