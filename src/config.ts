// Every environment variable the service reads, declared once with its type, default and rule.
// This module imports nothing of the app so that any part (server, jobs, scripts) can load it.
import { z } from 'zod';

const DURATION = /^(\d+)\s*(s|m|h|d)$/;
const durationSeconds = (value: string): number => {
  const match = DURATION.exec(value.trim());
  if (!match) throw new Error('unreachable: checked by the schema');
  const factor = { s: 1, m: 60, h: 3600, d: 86400 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * factor;
};

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');
const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
const url = z.url({ protocol: /^https?$/ });
/** `<requests>/<seconds>`: at most that many requests per fixed window of that many seconds. */
export const RATE_PATTERN = /^(\d{1,9})\/(\d{1,6})$/;
/** A rate limit (src/platform/rate-limits/classes.ts), kept as written; parsed where it is used. */
const rate = (fallback: string, description: string) => ({
  schema: z
    .string()
    .trim()
    .regex(RATE_PATTERN, 'must be <requests>/<seconds>, such as 300/60')
    .refine((v) => !/^0+\//.test(v) && !/\/0+$/.test(v), 'requests and seconds must be at least 1'),
  default: fallback,
  description,
});

interface KeySpec {
  schema: z.ZodType;
  default?: string;
  /** The default when NODE_ENV is production, where it differs from `default`. */
  productionDefault?: string;
  description: string;
  /** Never repeated in a message: an invalid value may still be most of a real secret. */
  secret?: true;
}

// The order here is the order of the table in docs/configuration.md.
export const CONFIG_KEYS = {
  NODE_ENV: {
    schema: z.enum(['development', 'production', 'test']),
    default: 'development',
    description:
      'production forbids generated secrets: MASTER_SECRET (or a MASTER_KEY_PROVIDER other than env) and the bootstrap client must be set',
  },
  PORT: { schema: int(0, 65535), default: '3000', description: 'HTTP port, 0-65535 (0 picks a free one)' },
  HOST: {
    schema: z.string().min(1),
    default: '127.0.0.1',
    productionDefault: '0.0.0.0',
    description: 'interface to listen on; 0.0.0.0 (all interfaces) makes the service reachable from other machines',
  },
  PUBLIC_URL: {
    schema: url.transform((v) => v.replace(/\/+$/, '')),
    description:
      'public base address; wallet-facing URLs, credential issuer identifiers and certificates are built from it; unset: the address listened on (http://localhost:PORT)',
  },
  LOG_LEVEL: {
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
    description: 'JSON log level',
  },
  TRUST_PROXY: {
    schema: bool,
    default: 'false',
    description: 'trust X-Forwarded-* headers (set behind a load balancer so rate limits see client addresses)',
  },
  DATA_DIR: {
    schema: z.string().min(1),
    default: './data',
    description: 'directory for the SQLite database and, outside production, generated secrets',
  },
  CONFIG_IMPORT: {
    schema: z.string().min(1),
    description:
      'folder of configuration files (one folder per tenant) imported at every start, before the service listens; see Configuration as files',
  },
  CONFIG_IMPORT_ENV_ALLOW: {
    schema: z
      .string()
      .trim()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*(\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*$/, 'must be environment variable names separated by commas')
      .transform((v) => v.split(',').map((name) => name.trim())),
    description:
      'environment variables that {"env": NAME} references of CONFIG_IMPORT files may read besides those starting with SVC_IMPORT_, separated by commas; the service\'s own secrets (MASTER_SECRET, AUTH_CLIENT_SECRET, DB_PASSWORD, DATABASE_URL, OIDC_CLIENT_SECRET, METRICS_TOKEN) are never readable and refused here',
  },
  DB_TYPE: { schema: z.enum(['sqlite', 'postgres']), default: 'sqlite', description: 'storage engine' },
  DATABASE_URL: {
    schema: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
    description: 'PostgreSQL connection URL; takes precedence over the DB_HOST family (needs DB_TYPE=postgres)',
    secret: true,
  },
  EVENTS_DATABASE_URL: {
    schema: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
    description:
      'PostgreSQL connection URL of the one connection that LISTENs for events of other instances (needs DB_TYPE=postgres); unset: the database settings above. Behind a transaction-mode pooler (PgBouncer pool_mode=transaction) it must name PostgreSQL itself or a session-mode pool, as LISTEN needs a connection of its own',
    secret: true,
  },
  DB_HOST: { schema: z.string().min(1), default: 'localhost', description: 'PostgreSQL host' },
  DB_PORT: { schema: int(1, 65535), default: '5432', description: 'PostgreSQL port' },
  DB_USERNAME: { schema: z.string().min(1), default: 'postgres', description: 'PostgreSQL user' },
  DB_PASSWORD: { schema: z.string(), description: 'PostgreSQL password', secret: true },
  DB_DATABASE: { schema: z.string().min(1), default: 'svc', description: 'PostgreSQL database' },
  DB_SSL: { schema: bool, default: 'false', description: 'connect to PostgreSQL over TLS' },
  DB_PREPARED_STATEMENTS: {
    schema: bool,
    default: 'true',
    description:
      'PostgreSQL: run repeating statements as named prepared statements, parsed and planned once per connection instead of on every run. Set false behind a transaction-mode pooler that does not track prepared statements (PgBouncer before 1.21, or max_prepared_statements = 0), where a statement prepared on one server session is run on another',
  },
  DB_STATEMENT_CACHE_SIZE: {
    schema: int(1, 10_000),
    default: '200',
    description:
      'PostgreSQL: prepared statements each pooled connection keeps at most (least recently used deallocated first); the service runs fewer than 200 distinct ones',
  },
  MASTER_SECRET: {
    schema: z.string().min(32, 'must be at least 32 characters'),
    description:
      'at least 32 characters; signs management tokens and derives the encryption keys (HKDF, one per purpose); generated into DATA_DIR outside production; not needed with a MASTER_KEY_PROVIDER other than env, except for the one start that moves a database sealed under it to the provider',
    secret: true,
  },
  MASTER_KEY_PROVIDER: {
    schema: z.enum(['env', 'file', 'vault-transit', 'aws-kms']),
    default: 'env',
    description:
      'where the master key lives: env is MASTER_SECRET itself; file, vault-transit or aws-kms wrap a data key that svc generates at the first start (or takes from MASTER_SECRET, moving a database from env) and stores only wrapped in the database (see "Master key")',
  },
  MASTER_KEY_FILE: {
    schema: z.string().min(1),
    description: 'MASTER_KEY_PROVIDER=file: path of a file holding a 32-byte key (raw or base64) that wraps the data key with AES-256-GCM',
  },
  MASTER_KEY_PREVIOUS_FILE: {
    schema: z.string().min(1),
    description:
      'MASTER_KEY_PROVIDER=file, while rotating: the key file the data key is still wrapped under; the start re-wraps it under MASTER_KEY_FILE',
  },
  MASTER_KEY_ID: {
    schema: z.string().min(1).max(2048),
    description:
      'MASTER_KEY_PROVIDER=vault-transit: the transit key name; aws-kms: the symmetric key (id, ARN or alias/<name>) that wraps the data key',
  },
  MASTER_KEY_PREVIOUS_ID: {
    schema: z.string().min(1).max(2048),
    description:
      'vault-transit or aws-kms, while rotating: the key the data key is still wrapped under; the start re-wraps it under MASTER_KEY_ID',
  },
  MASTER_KEY_VAULT_URL: {
    schema: url,
    description: 'MASTER_KEY_PROVIDER=vault-transit: Vault address, e.g. https://vault.internal:8200',
  },
  MASTER_KEY_VAULT_TOKEN: {
    schema: z.string().min(1),
    description: 'MASTER_KEY_PROVIDER=vault-transit: Vault token allowed to encrypt and decrypt with MASTER_KEY_ID',
    secret: true,
  },
  MASTER_KEY_VAULT_MOUNT: {
    schema: z.string().regex(/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/, 'must be a path of letters, digits, _ and -'),
    default: 'transit',
    description: 'MASTER_KEY_PROVIDER=vault-transit: mount path of the Transit engine',
  },
  MASTER_KEY_AWS_REGION: {
    schema: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as eu-central-1'),
    description:
      "MASTER_KEY_PROVIDER=aws-kms: the key's region; credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, else the AWS SDK's default chain",
  },
  MASTER_KEY_AWS_ENDPOINT: {
    schema: url,
    description: "MASTER_KEY_PROVIDER=aws-kms: another endpoint than the region's (a VPC endpoint)",
  },
  JWT_ISSUER: { schema: z.string().min(1), default: 'svc-service', description: 'iss of management tokens' },
  JWT_EXPIRES_IN: {
    schema: z
      .string()
      .regex(DURATION, 'must be a number with a unit s, m, h or d, such as 24h')
      .transform(durationSeconds)
      .pipe(z.number().min(60, 'must be at least 60s')),
    default: '24h',
    description: 'lifetime of management tokens: a number with s, m, h or d (at least 60s)',
  },
  AUTH_CLIENT_ID: {
    schema: z.string().regex(/^[A-Za-z0-9._~-]{1,128}$/, 'must be 1-128 URL-safe characters'),
    description: 'the bootstrap client (role tenants:manage); generated into DATA_DIR outside production',
  },
  AUTH_CLIENT_SECRET: {
    schema: z.string().min(16, 'must be at least 16 characters'),
    description: 'secret of the bootstrap client (at least 16 characters); generated into DATA_DIR outside production',
    secret: true,
  },
  TOKEN_FAILED_ATTEMPTS_LIMIT: {
    schema: int(1),
    default: '10',
    description: 'failed token requests one address may make per window before it gets 429',
  },
  TOKEN_FAILED_ATTEMPTS_WINDOW: {
    schema: int(1),
    default: '60',
    description: 'window of TOKEN_FAILED_ATTEMPTS_LIMIT, in seconds',
  },
  WALLET_INITIATED_LIMIT_PER_ADDRESS: {
    schema: int(1),
    default: '60',
    description:
      'wallet-initiated authorization requests (PAR or a first interactive authorization request without issuer_state, each of which opens a session) one address may make to one issuer per window before it gets 429',
  },
  WALLET_INITIATED_LIMIT_PER_TENANT: {
    schema: int(1),
    default: '1000',
    description: 'wallet-initiated authorization requests one issuer takes per window from all addresses together before it answers 429',
  },
  WALLET_INITIATED_WINDOW: {
    schema: int(1),
    default: '60',
    description: 'window of WALLET_INITIATED_LIMIT_PER_ADDRESS and WALLET_INITIATED_LIMIT_PER_TENANT, in seconds',
  },
  RATE_LIMITS_ENABLED: {
    schema: bool,
    default: 'true',
    description:
      'rate limits on the wallet-facing endpoints and the management token endpoint (see "Rate limits"); false switches them off (the failed-attempt and wallet-initiated limits stay)',
  },
  RATE_LIMIT_AUTHORIZATION: rate(
    '300/60',
    'PAR, authorize, challenge and interactive authorization requests one address may make to one issuer: <requests>/<seconds>',
  ),
  RATE_LIMIT_AUTHORIZATION_PER_TENANT: rate(
    '6000/60',
    'the same requests one issuer takes from all addresses together (the most its settings may allow)',
  ),
  RATE_LIMIT_TOKEN: rate('300/60', 'token endpoint requests one address may make to one issuer'),
  RATE_LIMIT_TOKEN_PER_TENANT: rate('6000/60', 'token endpoint requests one issuer takes from all addresses together'),
  RATE_LIMIT_NONCE: rate('600/60', 'nonce endpoint requests one address may make to one issuer'),
  RATE_LIMIT_NONCE_PER_TENANT: rate('12000/60', 'nonce endpoint requests one issuer takes from all addresses together'),
  RATE_LIMIT_CREDENTIAL: rate('600/60', 'credential and deferred credential requests one address may make to one issuer'),
  RATE_LIMIT_CREDENTIAL_PER_TENANT: rate(
    '12000/60',
    'credential and deferred credential requests one issuer takes from all addresses together',
  ),
  RATE_LIMIT_NOTIFICATION: rate('300/60', 'notification endpoint requests one address may make to one issuer'),
  RATE_LIMIT_NOTIFICATION_PER_TENANT: rate('6000/60', 'notification endpoint requests one issuer takes from all addresses together'),
  RATE_LIMIT_PRESENTATION: rate(
    '300/60',
    "requests to the verifier's request object and response endpoints one address may make (their URLs name no tenant: counted across the service)",
  ),
  RATE_LIMIT_MANAGEMENT_TOKEN: rate('300/60', 'management token requests (POST /api/oauth2/token) one address may make'),
  REDIS_URL: {
    schema: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL'),
    description: 'share rate limit counts through this Redis instead of the database (one MULTI per batch); unset: the database',
    secret: true,
  },
  REDIS_KEY_PREFIX: {
    schema: z.string().min(1).max(100),
    default: 'svc:rate:',
    description: 'prefix of the Redis keys of the rate limits (several services can share one Redis)',
  },
  KMS_PROVIDERS: {
    schema: z.string().min(1),
    description:
      'path of a JSON file naming the key providers besides db (PKCS#11 tokens, Vault Transit, AWS KMS, Azure Key Vault, Google Cloud KMS) and the default one; unset: private keys are kept, sealed, in the database (see "Key management")',
  },
  OIDC: {
    schema: url,
    description: 'external mode: issuer URL of the OpenID Provider that issues management tokens (docs/api/oidc.md)',
  },
  OIDC_INTERNAL_ISSUER_URL: { schema: url, description: 'external mode: issuer URL as reached from the service' },
  OIDC_CLIENT_ID: { schema: z.string().min(1), description: 'external mode: admin client at the provider' },
  OIDC_CLIENT_SECRET: { schema: z.string().min(1), description: 'external mode: secret of OIDC_CLIENT_ID', secret: true },
  OIDC_SUB: { schema: z.string().min(1), default: 'tenant_id', description: 'external mode: claim naming the tenant' },
  OIDC_ALGORITHM: {
    schema: z.enum(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']),
    default: 'RS256',
    description: 'external mode: the one JWS algorithm accepted on management tokens',
  },
  OIDC_UI_CLIENT_ID: { schema: z.string().min(1), default: 'svc-ui', description: 'external mode: web UI client' },
  OBSERVABILITY_URL: {
    schema: url,
    description: 'where a front end sends telemetry; returned by GET /api/frontend-config',
  },
  CERTIFICATE_COUNTRY: {
    schema: z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code'),
    default: 'UT',
    description: 'country (C) of generated certificates unless a key chain names its own; UT is the test code of the EUDI ecosystem',
  },
  JOB_INTERVAL_SECONDS: {
    schema: int(1, 86400),
    default: '60',
    description: 'how often scheduled jobs (key rotation, clean-ups) are checked; each runs on one instance per round',
  },
  SHUTDOWN_DELAY_SECONDS: {
    schema: int(0, 300),
    default: '0',
    description:
      'after SIGTERM or SIGINT, seconds during which requests are still served while /health/ready answers 503, before the listener closes (Kubernetes: a few seconds, so that the pod leaves the Service first); counts within SHUTDOWN_GRACE_SECONDS',
  },
  SHUTDOWN_GRACE_SECONDS: {
    schema: int(1, 3600),
    default: '25',
    description:
      'seconds from SIGTERM or SIGINT within which requests in flight and background work (webhook deliveries) may finish; connections still open then are cut and the stop goes on (keep it below the Kubernetes terminationGracePeriodSeconds, 30 by default)',
  },
  WEBHOOK_RETRY_DELAYS_MS: {
    schema: z
      .string()
      .trim()
      .regex(/^\d+(,\d+){0,9}$/, 'must be up to 10 whole numbers separated by commas')
      .transform((v) => v.split(',').map(Number))
      .pipe(z.array(z.number().max(3_600_000, 'each delay must be at most 3600000 (one hour)'))),
    default: '1000,5000,15000',
    description:
      'milliseconds to wait before the first retries of a failed webhook delivery (issuance and presentation); after the last, each wait doubles the one before, until WEBHOOK_RETRY_HORIZON_SECONDS',
  },
  WEBHOOK_RETRY_HORIZON_SECONDS: {
    schema: int(1, 30 * 86400),
    default: '86400',
    description:
      'how long after its event a webhook delivery is retried; an attempt that would come later is not made and the delivery is failed (at most 30 days)',
  },
  WEBHOOK_POLL_INTERVAL_MS: {
    schema: int(50, 60_000),
    default: '1000',
    description:
      'how often each instance looks for webhook deliveries that are due (an instance also looks at once after its own session changes and when a retry it scheduled falls due)',
  },
  WEBHOOK_DELIVERY_RETENTION_SECONDS: {
    schema: int(3600, 366 * 86400),
    default: '604800',
    description:
      'how long a delivered or failed webhook delivery stays listed (GET /api/webhook-deliveries) before the clean-up job deletes it, seconds after its event; pending ones are never deleted',
  },
  WEBHOOK_SECRET_ROTATION_GRACE_SECONDS: {
    schema: int(0, 30 * 86400),
    default: '86400',
    description: 'after rotate-secret, how long the previous webhook signing secret still signs (both signatures are sent), seconds',
  },
  STATUS_CAPACITY: { schema: int(100), default: '10000', description: 'default entries of a new status list (at least 100)' },
  STATUS_MAX_CAPACITY: {
    schema: int(1000, 100_000_000),
    default: '10000000',
    description:
      "most entries a status list, or a tenant's status list configuration, may ask for (400 beyond); a list takes capacity × bits / 8 bytes (10,000,000 entries of 8 bits: 10 MB); at least STATUS_CAPACITY",
  },
  STATUS_BITS: {
    schema: z.enum(['1', '2', '4', '8']).transform(Number),
    default: '1',
    description: 'default bits per status list entry: 1, 2, 4 or 8',
  },
  STATUS_TTL: { schema: int(60), default: '3600', description: 'default lifetime of a status list token, seconds (at least 60)' },
  STATUS_MAX_LISTS_PER_TENANT: {
    schema: int(1),
    default: '100',
    description:
      'status lists a tenant may hold before POST /api/status-lists answers 409; a new list opened because all the lists a credential may use are full is never refused, but counts',
  },
  SESSION_TTL: { schema: int(60), default: '86400', description: 'default session retention, seconds (at least 60)' },
  SESSION_CLEANUP_MODE: {
    schema: z.enum(['full', 'anonymize']),
    default: 'full',
    description: 'default for expired sessions: full deletes them, anonymize keeps metadata only',
  },
  SSE_HEARTBEAT_SECONDS: {
    schema: int(1, 3600),
    default: '15',
    description: 'interval of the heartbeat comments on session event streams, seconds (keeps proxies from closing idle streams)',
  },
  FEDERATION_RESOLUTION_DEADLINE_MS: {
    schema: int(100, 60_000),
    default: '10000',
    description:
      'milliseconds one OpenID Federation trust chain resolution may take, every statement it reads together (each also at most 3 s); past it the chain is refused, naming the deadline',
  },
  OUTBOUND_ALLOW_PRIVATE: {
    schema: bool,
    default: 'true',
    productionDefault: 'false',
    description:
      'let webhooks, attribute providers and status list fetches (of other issuers: the service reads its own lists in-process) reach loopback, private, link-local and other non-public addresses (a local webhook in development); cloud metadata addresses are refused regardless',
  },
  METRICS_TOKEN: {
    schema: z.string().min(16, 'must be at least 16 characters'),
    description:
      'Prometheus metrics at GET /metrics on the main port, for requests with Authorization: Bearer <this value>; unset: /metrics answers 404 there',
    secret: true,
  },
  METRICS_PORT: {
    schema: int(1, 65535),
    description:
      'Prometheus metrics at GET /metrics on this port too, without a token (bind it to an internal network: it listens on HOST)',
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    schema: url,
    description:
      'OpenTelemetry traces over OTLP/HTTP to this base URL (spans are posted to /v1/traces): requests, database queries, outbound calls; unset: no tracing, nothing loaded',
  },
  OTEL_SERVICE_NAME: { schema: z.string().min(1).max(200), default: 'svc', description: 'service.name of the spans' },
} satisfies Record<string, KeySpec>;

/**
 * The service's own secrets: no configuration file may read them through an {"env"} reference (see
 * config-files/environment.ts). Every key marked secret, and the four that must stay so whatever
 * becomes of the marks.
 */
export const SERVICE_SECRET_KEYS: ReadonlySet<string> = new Set([
  'MASTER_SECRET',
  'AUTH_CLIENT_SECRET',
  'DB_PASSWORD',
  'DATABASE_URL',
  ...Object.entries(CONFIG_KEYS as Record<string, KeySpec>)
    .filter(([, spec]) => spec.secret)
    .map(([key]) => key),
]);

type Keys = typeof CONFIG_KEYS;
type Value<K extends keyof Keys> = z.output<Keys[K]['schema']>;
export type Config = {
  [K in keyof Keys]: Keys[K] extends { default: string } ? Value<K> : Value<K> | undefined;
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    // One line, as every start-up failure: a log collector keeps it in one record, and `tail -1` finds it.
    super(`invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment; throws a ConfigError naming every offending key. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const problems: string[] = [];
  const config: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(CONFIG_KEYS) as [string, KeySpec][]) {
    const fallback = env.NODE_ENV === 'production' ? (spec.productionDefault ?? spec.default) : spec.default;
    const raw = env[key] === '' ? undefined : (env[key] ?? fallback);
    if (raw === undefined) continue;
    const parsed = spec.schema.safeParse(raw);
    if (parsed.success) config[key] = parsed.data;
    else
      problems.push(`${key}: ${parsed.error.issues.map((i) => i.message).join('; ')}${spec.secret ? '' : ` (got ${JSON.stringify(raw)})`}`);
  }
  problems.push(...crossKeyProblems(config as Config));
  if (problems.length > 0) throw new ConfigError(problems);
  return config as Config;
}

function crossKeyProblems(config: Config): string[] {
  const problems: string[] = [];
  if (config.OIDC !== undefined) {
    for (const key of ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'] as const) {
      if (config[key] === undefined) problems.push(`${key}: required when OIDC is set (the provider's admin client)`);
    }
  }
  if (config.NODE_ENV === 'production') {
    // External mode: tokens come from the provider, so the bootstrap client is optional there.
    // A master key source other than env supplies the data key: MASTER_SECRET is then optional.
    const secret = config.MASTER_KEY_PROVIDER === 'env' ? (['MASTER_SECRET'] as const) : ([] as const);
    const required = config.OIDC === undefined ? ([...secret, 'AUTH_CLIENT_ID', 'AUTH_CLIENT_SECRET'] as const) : secret;
    for (const key of required) {
      if (config[key] === undefined) problems.push(`${key}: required in production`);
    }
  }
  problems.push(...masterKeyProblems(config));
  if (config.DB_TYPE === 'sqlite' && config.DATABASE_URL !== undefined) {
    problems.push('DATABASE_URL: set, but DB_TYPE is sqlite; set DB_TYPE=postgres to use it, or unset it');
  }
  if (config.DB_TYPE === 'sqlite' && config.EVENTS_DATABASE_URL !== undefined) {
    problems.push('EVENTS_DATABASE_URL: set, but DB_TYPE is sqlite; set DB_TYPE=postgres to use it, or unset it');
  }
  if (config.STATUS_CAPACITY > config.STATUS_MAX_CAPACITY) {
    problems.push(`STATUS_CAPACITY: must be at most STATUS_MAX_CAPACITY (${config.STATUS_MAX_CAPACITY})`);
  }
  if (config.SHUTDOWN_DELAY_SECONDS >= config.SHUTDOWN_GRACE_SECONDS) {
    problems.push(
      `SHUTDOWN_DELAY_SECONDS: must be less than SHUTDOWN_GRACE_SECONDS (${config.SHUTDOWN_GRACE_SECONDS}): the delay counts within the grace`,
    );
  }
  if ((config.AUTH_CLIENT_ID === undefined) !== (config.AUTH_CLIENT_SECRET === undefined)) {
    problems.push('AUTH_CLIENT_ID, AUTH_CLIENT_SECRET: set both or neither');
  }
  const secrets = (config.CONFIG_IMPORT_ENV_ALLOW ?? []).filter((name) => SERVICE_SECRET_KEYS.has(name));
  if (secrets.length) {
    problems.push(`CONFIG_IMPORT_ENV_ALLOW: ${secrets.join(', ')}: a secret of the service, never readable by configuration files`);
  }
  return problems;
}

/** The settings each master key source needs, and none of a source not chosen (a likely mistake). */
function masterKeyProblems(config: Config): string[] {
  const needs = {
    env: [],
    file: ['MASTER_KEY_FILE'],
    'vault-transit': ['MASTER_KEY_ID', 'MASTER_KEY_VAULT_URL', 'MASTER_KEY_VAULT_TOKEN'],
    'aws-kms': ['MASTER_KEY_ID', 'MASTER_KEY_AWS_REGION'],
  } as const;
  const allowed = {
    env: [],
    file: ['MASTER_KEY_FILE', 'MASTER_KEY_PREVIOUS_FILE'],
    'vault-transit': ['MASTER_KEY_ID', 'MASTER_KEY_PREVIOUS_ID', 'MASTER_KEY_VAULT_URL', 'MASTER_KEY_VAULT_TOKEN'],
    'aws-kms': ['MASTER_KEY_ID', 'MASTER_KEY_PREVIOUS_ID', 'MASTER_KEY_AWS_REGION', 'MASTER_KEY_AWS_ENDPOINT'],
  } as const;
  const provider = config.MASTER_KEY_PROVIDER;
  // An invalid value has its own problem already.
  if (provider === undefined) return [];
  const problems: string[] = needs[provider]
    .filter((key) => config[key] === undefined)
    .map((key) => `${key}: required when MASTER_KEY_PROVIDER is ${provider}`);
  const stray = (
    [
      'MASTER_KEY_FILE',
      'MASTER_KEY_PREVIOUS_FILE',
      'MASTER_KEY_ID',
      'MASTER_KEY_PREVIOUS_ID',
      'MASTER_KEY_VAULT_URL',
      'MASTER_KEY_VAULT_TOKEN',
      'MASTER_KEY_AWS_REGION',
      'MASTER_KEY_AWS_ENDPOINT',
    ] as const
  ).filter((key) => config[key] !== undefined && !(allowed[provider] as readonly string[]).includes(key));
  for (const key of stray) problems.push(`${key}: set, but MASTER_KEY_PROVIDER is ${provider}, which does not read it`);
  if (config.MASTER_KEY_PREVIOUS_ID !== undefined && config.MASTER_KEY_PREVIOUS_ID === config.MASTER_KEY_ID) {
    problems.push('MASTER_KEY_PREVIOUS_ID: the same key as MASTER_KEY_ID; set it to the key the data key was wrapped under before');
  }
  return problems;
}

/** A configuration whose secrets are guaranteed present (after the first-run bootstrap and the master key source's data key). */
export type SecretsConfig = Config & { MASTER_SECRET: string };
/** Before the master key is opened (src/platform/master-key), with the addresses settled. */
export type AddressedConfig = Config & { PUBLIC_URL: string };
/** ...and whose addresses are settled: the interface listened on and the public base URL. */
export type ReadyConfig = SecretsConfig & { PUBLIC_URL: string };

/**
 * Production with a plain-http PUBLIC_URL (compose's default) starts, since a TLS proxy may be added
 * later and the checks run on loopback; but wallets would refuse it, so the operator hears of it once.
 */
export function plainHttpWarning(config: Pick<ReadyConfig, 'NODE_ENV' | 'PUBLIC_URL'>): string | undefined {
  if (config.NODE_ENV !== 'production' || new URL(config.PUBLIC_URL).protocol !== 'http:') return undefined;
  return `PUBLIC_URL ${config.PUBLIC_URL} is plain http: HAIP (the OpenID4VC high assurance profile) requires https, and wallets refuse credential issuers and verifiers on http; serve it over TLS (a reverse proxy, TRUST_PROXY=true) and set PUBLIC_URL to its https address`;
}
