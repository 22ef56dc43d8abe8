// KMS_PROVIDERS: the JSON file naming where key chains' private keys may live besides the database
// (PKCS#11 tokens, Vault Transit, AWS KMS). Read and connected once at start: a file that does not
// read, a provider that does not answer or a PIN that is refused stops the start with one line
// naming the provider. Without the file there is one provider, db, as before.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { OutboundClient } from '../platform/http/outbound-client.js';
import { StartUpError } from '../start-up-errors.js';
import { TENANT_ID } from '../tenants/routes.js';
import type { ExternalKeyProvider } from './external-keys.js';
import { type Adoptions, KEY_NAME } from './key-names.js';
import { ProviderStartError } from './provider-start-error.js';

/** A value written in the file, or read from an environment variable or a file (secrets stay out of the JSON). */
const Value = z
  .union([z.string().min(1), z.strictObject({ env: z.string().min(1) }), z.strictObject({ file: z.string().min(1) })])
  .describe('a string, {"env": NAME} or {"file": PATH}');
export type ValueRef = z.infer<typeof Value>;

const ProviderId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'must be 1-32 lower-case letters, digits, _ or -')
  .refine((id) => id !== 'db', 'db is the database provider, always present; choose another id');

/**
 * Keys the operator made in the provider outside svc, each with the tenant that may take it into a
 * key chain under its own name (externalKeyId). Every other name a tenant gives lives in its
 * namespace. A list, not an object keyed by tenant, so no tenant id is ever a property name.
 */
const Adopt = z
  .array(
    z.strictObject({
      tenant: TENANT_ID,
      keys: z.array(z.string().regex(KEY_NAME, 'must be 1-100 letters, digits, _ or - (a valid externalKeyId)')).min(1),
    }),
  )
  .optional()
  .transform((entries): Adoptions => {
    const adoptions = new Map<string, Set<string>>();
    for (const { tenant, keys } of entries ?? []) {
      const names = adoptions.get(tenant) ?? new Set<string>();
      for (const key of keys) names.add(key);
      adoptions.set(tenant, names);
    }
    return adoptions;
  })
  .describe('[{"tenant": id, "keys": [names]}]: existing keys of the provider a tenant may use as externalKeyId, verbatim');

const Pkcs11 = z.strictObject({
  id: ProviderId,
  adopt: Adopt,
  type: z.literal('pkcs11'),
  module: z.string().min(1).describe("path of the PKCS#11 library, e.g. SoftHSM2's /usr/lib/softhsm/libsofthsm2.so"),
  tokenLabel: z.string().min(1).max(32),
  pin: Value,
  sessions: z.number().int().min(1).max(64).optional().describe('sessions for concurrent signatures, default 4'),
});
const Vault = z.strictObject({
  id: ProviderId,
  adopt: Adopt,
  type: z.literal('vault'),
  url: z.url({ protocol: /^https?$/ }).describe('Vault address, e.g. https://vault.internal:8200'),
  token: Value,
  mount: z
    .string()
    .regex(/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/, 'must be a path of letters, digits, _ and -')
    .default('transit'),
});
const AwsKms = z.strictObject({
  id: ProviderId,
  adopt: Adopt,
  type: z.literal('aws-kms'),
  region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as eu-central-1'),
  endpoint: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe("another endpoint than the region's (a VPC endpoint)"),
  accessKeyId: Value.optional().describe("without it and secretAccessKey: the AWS SDK's default credential chain"),
  secretAccessKey: Value.optional(),
});
const ProviderSettings = z.discriminatedUnion('type', [Pkcs11, Vault, AwsKms]);
export type ProviderSettings = z.infer<typeof ProviderSettings>;

const KmsFile = z
  .strictObject({
    defaultProvider: z.string().min(1).default('db').describe('provider of key chains created without kmsProvider'),
    providers: z.array(ProviderSettings),
  })
  .superRefine((file, ctx) => {
    const ids = file.providers.map((p) => p.id);
    ids.forEach((id, index) => {
      if (ids.indexOf(id) !== index) ctx.addIssue({ code: 'custom', path: ['providers', index, 'id'], message: `'${id}' is used twice` });
    });
    file.providers.forEach((provider, index) => {
      if (provider.type === 'aws-kms' && (provider.accessKeyId === undefined) !== (provider.secretAccessKey === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: ['providers', index, 'accessKeyId'],
          message: 'set both accessKeyId and secretAccessKey, or neither',
        });
      }
    });
    if (file.defaultProvider !== 'db' && !ids.includes(file.defaultProvider)) {
      ctx.addIssue({
        code: 'custom',
        path: ['defaultProvider'],
        message: `'${file.defaultProvider}' is not a provider of the file (nor db)`,
      });
    }
  });
export type KmsFile = z.infer<typeof KmsFile>;

const failure = (path: string, message: string) => new StartUpError('config', `KMS_PROVIDERS ${path}: ${message}`);

/** The file, checked; throws a StartUpError (exit 78) naming what is wrong, and the provider. */
export function readKmsFile(path: string): KmsFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw failure(path, `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw failure(path, `is not JSON: ${(err as Error).message}`);
  }
  const parsed = KmsFile.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0] as z.core.$ZodIssue;
  const [first, index] = issue.path;
  const provider =
    first === 'providers' && typeof index === 'number' ? (json as { providers: { id?: unknown }[] }).providers[index]?.id : undefined;
  const where = provider !== undefined ? `provider '${String(provider)}': ` : '';
  throw failure(path, `${where}${issue.path.join('.') || 'the file'}: ${issue.message}`);
}

/** The value a reference stands for: written, from the environment, or from a file (one trailing newline dropped). */
export function resolveValue(value: ValueRef, env: Record<string, string | undefined>, what: string): string {
  if (typeof value === 'string') return value;
  if ('env' in value) {
    const found = env[value.env];
    if (found === undefined || found === '') throw new Error(`${what}: environment variable ${value.env} is not set`);
    return found;
  }
  try {
    return readFileSync(value.file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new Error(`${what}: file ${value.file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

export interface ConnectedProviders {
  defaultProvider: string;
  providers: ExternalKeyProvider[];
  close(): Promise<void>;
}

/**
 * The providers of the file, each connected (module loaded and logged in, or the server asked once).
 * Outbound calls of Vault and AWS KMS go through `outbound`, whose policy admits the addresses the
 * operator wrote here (private ones too: an HSM or Vault usually sits on an internal network).
 */
export async function connectKeyProviders(
  path: string,
  env: Record<string, string | undefined>,
  outbound: OutboundClient,
): Promise<ConnectedProviders> {
  const file = readKmsFile(path);
  const providers: ExternalKeyProvider[] = [];
  const closeAll = async () => {
    for (const provider of providers.splice(0)) await provider.close().catch(() => {});
  };
  try {
    for (const settings of file.providers) providers.push(await connectOne(path, settings, env, outbound));
  } catch (err) {
    await closeAll();
    throw err;
  }
  return { defaultProvider: file.defaultProvider, providers, close: closeAll };
}

async function connectOne(
  path: string,
  settings: ProviderSettings,
  env: Record<string, string | undefined>,
  outbound: OutboundClient,
): Promise<ExternalKeyProvider> {
  const named = (kind: 'config' | 'keyProvider', message: string) =>
    new StartUpError(kind, `KMS_PROVIDERS ${path}: provider '${settings.id}' (${settings.type}): ${message}`);
  const secretOf = (value: ValueRef, field: string) => {
    try {
      return resolveValue(value, env, field);
    } catch (err) {
      throw named('config', (err as Error).message);
    }
  };
  /** The provider connected, or the start stopped with one line naming it. */
  const started = async (connect: () => ExternalKeyProvider | Promise<ExternalKeyProvider>) => {
    try {
      return await connect();
    } catch (err) {
      if (err instanceof ProviderStartError) throw named(err.kind === 'config' ? 'config' : 'keyProvider', err.message);
      throw named('keyProvider', err instanceof Error ? err.message : String(err));
    }
  };
  switch (settings.type) {
    case 'pkcs11': {
      const pin = secretOf(settings.pin, 'pin');
      // Loaded only when a PKCS#11 provider is configured: koffi and the module are never read otherwise.
      const { Pkcs11KeyProvider } = await import('./pkcs11/provider.js');
      return started(() => Pkcs11KeyProvider.connect({ ...settings, pin }));
    }
    case 'vault': {
      const token = secretOf(settings.token, 'token');
      const { VaultKeyProvider } = await import('./vault.js');
      return started(() => VaultKeyProvider.connect({ ...settings, token }, outbound));
    }
    case 'aws-kms': {
      const credentials =
        settings.accessKeyId && settings.secretAccessKey
          ? {
              accessKeyId: secretOf(settings.accessKeyId, 'accessKeyId'),
              secretAccessKey: secretOf(settings.secretAccessKey, 'secretAccessKey'),
            }
          : undefined;
      const { AwsKmsKeyProvider } = await import('./aws-kms.js');
      return started(() =>
        AwsKmsKeyProvider.connect(
          { id: settings.id, adopt: settings.adopt, region: settings.region, endpoint: settings.endpoint, credentials },
          outbound,
        ),
      );
    }
  }
}
