// The folder layout of configuration files: one folder per tenant, one file per object, each file
// checked by the schema of the management API request that creates the object, so a file is valid
// exactly when that request body would be. Where a secret belongs, a file may name an environment
// variable or another file instead ({"env": "NAME"}, {"file": "relative/path"}).
import { z } from 'zod';
import { CreateBody as ClientBody } from '../clients/routes.js';
import { CreateBody as CredentialConfigBody } from '../credential-configs/schemas.js';
import { CreateEndpointBody } from '../http-endpoints/schemas.js';
import { IssuerSettingsSchema } from '../issuance/settings/service.js';
import {
  CreateBody as KeyChainCreateBody,
  ImportBody as KeyChainImportBody,
  UpdateBody as KeyChainUpdateBody,
} from '../key-chains/routes.js';
import { SaveBody as PresentationConfigBody } from '../presentation-configs/schemas.js';
import { CreateBody as TenantBody } from '../tenants/routes.js';
import { TrustConfigSchema } from '../trust/config/schema.js';
import { TrustListInputSchema } from '../trust-lists/schemas.js';

/** How a referenced value is used: as text, or as a private key (a JWK in JSON, or PEM). */
export type Decoding = 'text' | 'jwk';

export interface FileKind {
  /** The name in messages, the export and the JSON Schema file: `credential-config`. */
  name: string;
  /** A file of the tenant folder (`tenant.json`), or a folder holding one `<id>.json` per object. */
  path: string;
  folder: boolean;
  /** The member that holds the id; absent, it is taken from the file name. */
  idKey?: 'id' | 'clientId';
  /** The request this file stands for, for the documentation. */
  request: string;
  schema: z.ZodType;
  /** Where a reference may stand (dotted, `*` for every element), and how its value is read. */
  references: Record<string, Decoding>;
}

const refused = (message: string) => z.never({ error: message }).optional();

/** A key chain file is one of three requests, told apart by its members. */
export const KeyChainFile = {
  import: KeyChainImportBody,
  create: KeyChainCreateBody,
  /** Neither privateJwk nor type: a chain that exists already (made through the API), whose settings the file sets. */
  reference: KeyChainUpdateBody.extend({ id: KeyChainCreateBody.shape.id.unwrap() }),
};
export type KeyChainForm = keyof typeof KeyChainFile;

export function keyChainForm(file: Record<string, unknown>): KeyChainForm {
  if ('privateJwk' in file) return 'import';
  if ('type' in file) return 'create';
  return 'reference';
}

const keyChainSchema = z.custom().transform((file, ctx) => {
  const schema = KeyChainFile[keyChainForm(file as Record<string, unknown>)];
  const parsed = schema.safeParse(file);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, input: undefined });
  return z.NEVER;
});

export const KINDS = {
  tenant: {
    name: 'tenant',
    path: 'tenant.json',
    folder: false,
    request: 'POST /api/tenant (without roles)',
    schema: TenantBody.extend({
      roles: refused(
        "the tenant's clients are files in clients/, each with its secret; roles would make a client whose secret nobody knows",
      ),
    }),
    references: {},
  },
  clients: {
    name: 'client',
    path: 'clients',
    folder: true,
    idKey: 'clientId',
    request: 'POST /api/client (secret required, no tenantId)',
    schema: ClientBody.extend({
      secret: ClientBody.shape.secret.unwrap(),
      tenantId: refused('the folder names the tenant'),
    }),
    references: { secret: 'text' },
  },
  keyChains: {
    name: 'key-chain',
    path: 'key-chains',
    folder: true,
    idKey: 'id',
    request: 'POST /api/key-chain/import (with privateJwk), POST /api/key-chain (with type), or PATCH /api/key-chain/{id} (neither)',
    schema: keyChainSchema,
    references: { privateJwk: 'jwk', certificateChain: 'text', certificate: 'text' },
  },
  issuer: {
    name: 'issuer',
    path: 'issuer.json',
    folder: false,
    request: 'PUT /api/issuer/config',
    schema: IssuerSettingsSchema,
    references: { 'chainedAuthorizationServer.clientSecret': 'text' },
  },
  trust: {
    name: 'trust',
    path: 'trust.json',
    folder: false,
    request: 'PUT /api/trust-config (issuer.json then leaves federation out: it is the alias of this file)',
    schema: TrustConfigSchema,
    references: {},
  },
  attributeProviders: {
    name: 'attribute-provider',
    path: 'attribute-providers',
    folder: true,
    idKey: 'id',
    request: 'POST /api/issuer/attribute-providers',
    schema: CreateEndpointBody,
    references: { 'auth.header.value': 'text' },
  },
  webhookEndpoints: {
    name: 'webhook-endpoint',
    path: 'webhook-endpoints',
    folder: true,
    idKey: 'id',
    request: 'POST /api/issuer/webhook-endpoints',
    schema: CreateEndpointBody,
    references: { 'auth.header.value': 'text' },
  },
  credentialConfigs: {
    name: 'credential-config',
    path: 'credential-configs',
    folder: true,
    idKey: 'id',
    request: 'POST /api/issuer/credentials',
    schema: CredentialConfigBody,
    references: {},
  },
  presentationConfigs: {
    name: 'presentation-config',
    path: 'presentation-configs',
    folder: true,
    idKey: 'id',
    request: 'POST /api/verifier/config',
    schema: PresentationConfigBody,
    references: { 'webhook.auth.header.value': 'text' },
  },
  trustLists: {
    name: 'trust-list',
    path: 'trust-lists',
    folder: true,
    idKey: 'id',
    request: 'POST /api/trust-list',
    schema: TrustListInputSchema,
    references: { 'entities.*.certificates.*': 'text' },
  },
} satisfies Record<string, FileKind>;

export type KindKey = keyof typeof KINDS;

/** What each file holds once read and checked. */
export interface Contents {
  tenant: z.output<typeof TenantBody>;
  clients: z.output<typeof KINDS.clients.schema>;
  keyChains: z.output<(typeof KeyChainFile)[KeyChainForm]> & { id: string };
  issuer: z.output<typeof IssuerSettingsSchema>;
  trust: z.output<typeof TrustConfigSchema>;
  attributeProviders: z.output<typeof CreateEndpointBody>;
  webhookEndpoints: z.output<typeof CreateEndpointBody>;
  credentialConfigs: z.output<typeof CredentialConfigBody>;
  presentationConfigs: z.output<typeof PresentationConfigBody>;
  trustLists: z.output<typeof TrustListInputSchema> & { id: string };
}

/** One checked file: where it is (relative to the import folder, for messages) and what it holds. */
export interface ConfigFile<K extends KindKey> {
  path: string;
  value: Contents[K];
}

/** A tenant folder, read and checked: its tenant.json and the files of every kind, in file name order. */
export type TenantFolder = { id: string; tenant: ConfigFile<'tenant'>; issuer?: ConfigFile<'issuer'>; trust?: ConfigFile<'trust'> } & {
  [K in Exclude<KindKey, 'tenant' | 'issuer' | 'trust'>]: ConfigFile<K>[];
};

/** The order objects are written in: what a file refers to exists before it. */
export const FOLDER_KINDS = [
  'keyChains',
  'clients',
  'attributeProviders',
  'webhookEndpoints',
  'credentialConfigs',
  'presentationConfigs',
  'trustLists',
] as const satisfies KindKey[];
