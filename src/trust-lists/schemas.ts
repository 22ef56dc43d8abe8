// The trust list input (create, update, export) and the response shapes, with their LoTE-facing rules.
import { z } from 'zod';
import { webUrl } from '../platform/http/web-urls.js';
import { MANAGED_SCHEME_FIELDS, SERVICE_TYPE_NAMES } from './lote.js';

const Id = z.string().regex(/^[A-Za-z0-9._~-]{1,64}$/, 'must be 1-64 URL-safe characters');
const MultiLangString = z.array(z.strictObject({ lang: z.string().min(2).max(35), value: z.string().min(1) })).min(1);
const multiLang = (uri: z.ZodType<string>) => z.array(z.strictObject({ lang: z.string().min(2).max(35), uriValue: uri })).min(1);
/** Identifiers, which TS 119 602 writes as http URIs (http://uri.etsi.org/...), not locations. */
const MultiLangUri = multiLang(z.url());
/** A page for people, which wallets may link to. */
const MultiLangWebUrl = multiLang(webUrl().describe('https (http outside production)'));

const ServiceTypeInput = z
  .enum(SERVICE_TYPE_NAMES)
  .describe(
    'issuance: http://uri.etsi.org/19602/SvcType/EAA/Issuance; revocation: .../EAA/Revocation; pidIssuance: .../PID/Issuance; pidRevocation: .../PID/Revocation; walletIssuance: .../WalletSolution/Issuance, a wallet provider whose wallet (client) and key attestations the issuer of this tenant accepts; walletRevocation: .../WalletSolution/Revocation. Wallet provider entities are not trusted as credential issuers, nor the others as wallet providers',
  );
const EntityInformation = z
  .record(z.string().regex(/^TE[A-Za-z]+$/, 'must be a TrustedEntityInformation field such as TEAddress'), z.unknown())
  .describe('extra TrustedEntityInformation fields (TEAddress, TETradeName, TEInformationURI, ...), merged over the generated ones');

const InternalEntity = z
  .strictObject({
    type: z.literal('internal'),
    keyChainId: z.string().min(1).describe("one of the tenant's signing key chains"),
    name: z.string().min(1).max(500).optional().describe("TEName; default: the key chain's subject organization"),
    serviceType: ServiceTypeInput.optional().describe('default: revocation for a statusList key chain, issuance otherwise'),
    information: EntityInformation.optional(),
  })
  .describe(
    "A key chain of this tenant. Its service digital identity is the chain's root certificate when it has one, else its active certificate (and the previous one while it is still published).",
  );

const ExternalEntity = z
  .strictObject({
    type: z.literal('external'),
    name: z.string().min(1).max(500).describe('TEName'),
    certificates: z.array(z.string().min(1)).min(1).max(20).describe('PEM X.509 certificates, one per item'),
    serviceType: ServiceTypeInput.optional().describe('default: issuance'),
    information: EntityInformation.optional(),
  })
  .describe('An entity outside the service, given by its certificates.');

export const EntitySchema = z.discriminatedUnion('type', [InternalEntity, ExternalEntity]);
export type EntityInput = z.infer<typeof EntitySchema>;

const managed = Object.fromEntries(
  MANAGED_SCHEME_FIELDS.map((field) => [field, z.never({ error: 'is set by the service on every signing' }).optional()]),
);

/** Extra ListAndSchemeInformation fields: typed where TS 119 602 names them, open for the rest. */
export const SchemeDataSchema = z
  .looseObject({
    ...managed,
    LoTEType: z.url().optional(),
    SchemeOperatorName: MultiLangString.optional(),
    SchemeOperatorAddress: z.record(z.string(), z.unknown()).optional(),
    SchemeName: MultiLangString.optional(),
    SchemeInformationURI: MultiLangWebUrl.optional(),
    StatusDeterminationApproach: z.url().optional(),
    SchemeTypeCommunityRules: MultiLangUri.optional(),
    SchemeTerritory: z
      .string()
      .regex(/^([A-Z]{2}|EU)$/, 'must be an ISO 3166-1 alpha-2 code or EU')
      .optional(),
    PolicyOrLegalNotice: z.array(z.record(z.string(), z.unknown())).min(1).optional(),
    HistoricalInformationPeriod: z.number().int().min(0).optional(),
    DistributionPoints: z.array(webUrl().describe('where the list is published: https (http outside production)')).min(1).optional(),
  })
  .describe(
    'Extra ETSI TS 119 602 ListAndSchemeInformation fields merged over the generated ones (LoTEType, SchemeOperatorName, SchemeName, SchemeTerritory, ...). LoTEVersionIdentifier, LoTESequenceNumber, ListIssueDateTime and NextUpdate are set by the service.',
  );
export type SchemeData = z.infer<typeof SchemeDataSchema>;

export const TrustListInputSchema = z
  .strictObject({
    id: Id.optional().describe('generated (UUID) when absent; on update it must equal the path id'),
    description: z.string().max(1000).nullable().optional(),
    keyChainId: z
      .string()
      .min(1)
      .nullable()
      .optional()
      .describe(
        "the signing key chain (usage type trustList); default: the tenant's default trustList key chain on create, the current one on update",
      ),
    data: SchemeDataSchema.optional(),
    entities: z.array(EntitySchema).max(500),
  })
  .describe('Trust list input (create, update, export)');
export type TrustListInput = z.infer<typeof TrustListInputSchema>;

const LoteData = z.record(z.string(), z.unknown()).describe('the ETSI TS 119 602 list of trusted entities as signed: {"LoTE": {...}}');

export const TrustListSchema = z
  .object({
    id: z.string(),
    description: z.string().nullable(),
    tenantId: z.string(),
    keyChainId: z.string(),
    data: LoteData,
    entityConfig: z.array(EntitySchema).describe('the entity input, kept for editing'),
    sequenceNumber: z.number().describe('LoTESequenceNumber: 1 on create, incremented by every content change'),
    jwt: z.string().describe('the list as a compact JWS (typ trustlist+jwt, x5c of the signing key chain)'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'TrustList' });
export type TrustList = z.infer<typeof TrustListSchema>;

export const TrustListVersionSchema = z
  .object({
    id: z.string(),
    trustListId: z.string(),
    tenantId: z.string(),
    sequenceNumber: z.number(),
    data: LoteData,
    entityConfig: z.array(EntitySchema),
    jwt: z.string().describe('the JWS as first signed for this sequence number'),
    createdAt: z.string(),
  })
  .meta({ id: 'TrustListVersion' });
export type TrustListVersion = z.infer<typeof TrustListVersionSchema>;

export const TrustListExportSchema = TrustListInputSchema.extend({ id: z.string() }).meta({ id: 'TrustListExport' });
