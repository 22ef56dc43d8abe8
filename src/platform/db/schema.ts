// Row types of every table, as the data layer sees them on both engines: timestamps are ISO-8601
// UTC strings, booleans are 0/1 on the way in and normalised on the way out, JSON is text.
import type { ColumnType, Generated } from 'kysely';

/** Written as 0 or 1 (both engines accept that), read as a number (SQLite) or boolean (PostgreSQL). */
export type Bool = ColumnType<number | boolean, 0 | 1, 0 | 1>;
/** ISO-8601 UTC timestamp string. */
export type Timestamp = string;
/** JSON stored as text; the stores parse it. */
export type Json = string;

export interface TenantsTable {
  id: string;
  name: string;
  description: string | null;
  status: string;
  session_config: Json | null;
  status_list_config: Json | null;
  admin_client_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ClientsTable {
  id: string;
  tenant_id: string | null;
  secret_hash: string;
  description: string | null;
  roles: Json;
  allowed_presentation_configs: Json | null;
  allowed_issuance_configs: Json | null;
  /** Random; carried in the client's tokens, and renewed when those tokens must end (secret replaced). */
  token_generation: string;
  /** When the client first obtained an access token; null until then. */
  first_token_at: Timestamp | null;
  /**
   * External mode: identity provider tokens issued before this are not the client's (it was made
   * again, or its secret replaced); null when the client's tokens carry its generation instead.
   */
  tokens_valid_from: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface UsersTable {
  id: string;
  tenant_id: string;
  username: string;
  email: string | null; // encrypted
  enabled: Bool;
  roles: Json;
  password_hash: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AuditLogTable {
  id: string;
  tenant_id: string | null;
  action_type: string;
  actor_type: string;
  actor_id: string;
  actor_display: string | null;
  changed_fields: Json;
  before: Json | null;
  after: Json | null;
  request_id: string | null;
  timestamp: Timestamp;
  seq: Generated<number>;
  /** The service administrator who wrote the entry with an exchanged token, acting in tenant_id. */
  acting_admin_id: string | null;
}

/** Requests (or failed attempts) counted per key and fixed window: key@windowStartMs (platform/rate-limits/windows.ts). */
export interface RequestWindowsTable {
  key: string;
  window_start: Timestamp;
  count: number;
}

/** Settings of the service as a whole (no tenant): one row per name. */
export interface ServiceSettingsTable {
  name: string;
  value: string;
  created_at: Timestamp;
}

export interface JobLeasesTable {
  name: string;
  holder: string;
  lease_until: Timestamp;
}

export interface KeyChainsTable {
  id: string;
  tenant_id: string;
  description: string | null;
  usage_type: string;
  usage: string;
  kms_provider: string;
  external_key_id: string | null;
  algorithm: string;
  chain_type: string;
  is_default: Bool;
  subject: Json;
  root_jwk: string | null; // encrypted
  root_certificate: string | null;
  active_jwk: string; // encrypted
  active_certificate: string;
  previous_jwk: string | null; // encrypted
  previous_certificate: string | null;
  previous_key_expiry: Timestamp | null;
  rotation_enabled: Bool;
  rotation_interval_days: number;
  cert_validity_days: number;
  last_rotated_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

interface TenantOwnedRow {
  tenant_id: string;
  id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CredentialConfigsTable extends TenantOwnedRow {
  /** The configuration as JSON, except id; references are repeated in columns for lookups. */
  document: Json;
  key_chain_id: string | null;
  attribute_provider_id: string | null;
  webhook_endpoint_id: string | null;
  /** The document's config.scope, repeated for the unique index (tenant_id, scope); set on every row since migration 0020. */
  scope: string | null;
}

/** Attribute providers and webhook endpoints share one shape. */
export interface HttpEndpointsTable extends TenantOwnedRow {
  name: string;
  description: string | null;
  url: string;
  auth: string; // encrypted JSON
}

export interface IssuerSettingsTable {
  tenant_id: string;
  document: Json;
  updated_at: Timestamp;
}

export interface RegistrarConfigsTable {
  tenant_id: string;
  document: Json;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** What a tenant published to its registrar's schema metadata catalog, one row per version. */
export interface SchemaMetadataPublicationsTable {
  tenant_id: string;
  /** The registrar's short id (the last path segment of attestation_id). */
  schema_id: string;
  version: string;
  /** The reserved attestation id, the URL the signed payload names. */
  attestation_id: string;
  created_at: Timestamp;
}

export interface SessionsTable {
  id: string;
  tenant_id: string;
  kind: string;
  status: string;
  client_id: string | null;
  consumed: Bool;
  consumed_at: Timestamp | null;
  tx_code_failed_attempts: number;
  error_reason: string | null;
  /** Metadata without personal data, JSON. */
  public_data: Json;
  /** Personal data (offer, claims, credentials), encrypted JSON; null once anonymized. */
  private_data: string | null;
  anonymized: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
  expires_at: Timestamp;
  /** One more with every write: a change applies only to the version it was computed from. */
  version: Generated<number>;
  /** Where the session's webhook events go (set when it is made); null: it has none, and no event row is written. */
  webhook_target: string | null;
}

/** The webhook outbox: one row per event, written by a trigger on sessions (migration 0022). */
export interface WebhookDeliveriesTable {
  seq: Generated<number>;
  /** The webhook-id: the same on every attempt. */
  id: string;
  tenant_id: string;
  session_id: string;
  session_kind: string;
  type: string;
  /** A webhook endpoint's id, `presentation-configuration:<id>` or `request` (the offer's own). */
  endpoint: string;
  status: string | null;
  previous_status: string | null;
  error_reason: string | null;
  occurred_at: Timestamp;
  created_at: Timestamp;
  /** pending, delivered or failed. */
  state: string;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  lease_owner: string | null;
  lease_expires_at: Timestamp | null;
  last_status: number | null;
  last_error: string | null;
  delivered_at: Timestamp | null;
}

/** Standard Webhooks signing secrets (sealed) per owner, with the previous one during its grace period. */
export interface WebhookSecretsTable {
  tenant_id: string;
  owner: string;
  secret: string;
  previous_secret: string | null;
  previous_until: Timestamp | null;
  updated_at: Timestamp;
}

export interface SessionHandlesTable {
  hash: string;
  purpose: string;
  session_id: string;
  expires_at: Timestamp;
}

export interface SessionLogsTable {
  seq: Generated<number>;
  session_id: string;
  level: string;
  message: string;
  details: Json | null;
  created_at: Timestamp;
}

export interface NoncesTable {
  hash: string;
  tenant_id: string;
  purpose: string;
  expires_at: Timestamp;
}

export interface DeferredTransactionsTable {
  hash: string;
  id: string;
  tenant_id: string;
  session_id: string;
  credential_configuration_id: string;
  status: string;
  message: string | null;
  request: string; // encrypted JSON
  credentials: string | null; // encrypted JSON
  created_at: Timestamp;
  updated_at: Timestamp;
  expires_at: Timestamp;
}

/** A configuration of an offer that a credential request took (issued or deferred): once per offer. */
export interface ConfigurationsTakenTable {
  tenant_id: string;
  session_id: string;
  credential_configuration_id: string;
  /** The access token's round: 0 for the first grant, n for the n-th refresh. */
  round: number;
  created_at: Timestamp;
}

export interface IssuedCredentialsTable {
  id: string;
  tenant_id: string;
  session_id: string;
  credential_configuration_id: string;
  format: string;
  notification_id: string;
  notification_event: string | null;
  created_at: Timestamp;
}

export interface StatusListsTable {
  tenant_id: string;
  id: string;
  credential_configuration_id: string | null;
  key_chain_id: string | null;
  bits: number;
  capacity: number;
  ttl: number;
  immediate_update: Bool;
  enable_aggregation: Bool;
  used_entries: number;
  /** Secret key (hex) of the list's index permutation. */
  permutation_key: string;
  /** The status bits, `bits` per entry, least significant first (Token Status List). */
  bitset: Uint8Array;
  version: number;
  token_jwt: string | null;
  token_cwt: Uint8Array | null;
  token_version: number | null;
  token_seq: number;
  token_issued_at: Timestamp | null;
  token_expires_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface StatusEntriesTable {
  tenant_id: string;
  list_id: string;
  idx: number;
  session_id: string | null;
  credential_configuration_id: string;
  created_at: Timestamp;
  /** The status last set on the entry, as its list's bits hold it (0 valid, 1 revoked, 2 suspended, ...). */
  status: Generated<number>;
}

export interface PresentationConfigsTable extends TenantOwnedRow {
  /** The settings as JSON (presentation-configs/schemas.ts: PresentationDocument). */
  document: Json;
  webhook_endpoint_id: string | null;
  access_key_chain_id: string | null;
  /** The deprecated inline webhook, sealed: its auth may carry a secret header value. */
  webhook: string | null;
  /** Filled by the registrar feature; never written from a request. */
  registration_cert_cache: Json | null;
}

export interface TrustListsTable {
  tenant_id: string;
  id: string;
  description: string | null;
  key_chain_id: string;
  scheme_data: Json | null;
  entity_config: Json;
  entity_key_chains: Json;
  data: Json;
  jwt: string;
  sequence_number: number;
  issued_at: Timestamp;
  next_update: Timestamp;
  resign_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface TrustListVersionsTable {
  tenant_id: string;
  id: string;
  trust_list_id: string;
  sequence_number: number;
  key_chain_id: string;
  entity_config: Json;
  data: Json;
  jwt: string;
  created_at: Timestamp;
}

/** A subordinate of an OpenID Federation intermediate or trust anchor (trust/federation/subordinates.ts). */
export interface FederationSubordinatesTable extends TenantOwnedRow {
  entity_id: string;
  /** The statement's content as JSON: jwks, metadata_policy, constraints. */
  document: Json;
}

export interface FederationTrustMarkTypesTable extends TenantOwnedRow {
  trust_mark_type: string;
  /** logo_uri, ref and lifetimeSeconds of the marks of this type, as JSON. */
  document: Json;
}

export interface FederationTrustMarksTable extends TenantOwnedRow {
  trust_mark_type: string;
  /** The entity the mark is about (its sub). */
  subject: string;
  /** The trust mark as signed. */
  jwt: string;
  /** SHA-256 of the JWT (base64url): how the status endpoint finds it. */
  jwt_sha256: string;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface Database {
  tenants: TenantsTable;
  clients: ClientsTable;
  users: UsersTable;
  audit_log: AuditLogTable;
  request_windows: RequestWindowsTable;
  service_settings: ServiceSettingsTable;
  job_leases: JobLeasesTable;
  key_chains: KeyChainsTable;
  credential_configs: CredentialConfigsTable;
  attribute_providers: HttpEndpointsTable;
  webhook_endpoints: HttpEndpointsTable;
  issuer_settings: IssuerSettingsTable;
  sessions: SessionsTable;
  session_handles: SessionHandlesTable;
  session_logs: SessionLogsTable;
  nonces: NoncesTable;
  deferred_transactions: DeferredTransactionsTable;
  configurations_taken: ConfigurationsTakenTable;
  issued_credentials: IssuedCredentialsTable;
  status_lists: StatusListsTable;
  status_entries: StatusEntriesTable;
  presentation_configs: PresentationConfigsTable;
  trust_lists: TrustListsTable;
  trust_list_versions: TrustListVersionsTable;
  registrar_configs: RegistrarConfigsTable;
  schema_metadata_publications: SchemaMetadataPublicationsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_secrets: WebhookSecretsTable;
  federation_subordinates: FederationSubordinatesTable;
  federation_trust_mark_types: FederationTrustMarkTypesTable;
  federation_trust_marks: FederationTrustMarksTable;
}

/** Tables whose every row belongs to exactly one tenant; reachable only through a TenantDb. */
export type TenantTable =
  | 'users'
  | 'key_chains'
  | 'credential_configs'
  | 'attribute_providers'
  | 'webhook_endpoints'
  | 'issuer_settings'
  | 'sessions'
  | 'nonces'
  | 'deferred_transactions'
  | 'configurations_taken'
  | 'issued_credentials'
  | 'status_lists'
  | 'status_entries'
  | 'presentation_configs'
  | 'trust_lists'
  | 'trust_list_versions'
  | 'registrar_configs'
  | 'schema_metadata_publications'
  | 'webhook_deliveries'
  | 'webhook_secrets'
  | 'federation_subordinates'
  | 'federation_trust_mark_types'
  | 'federation_trust_marks';
