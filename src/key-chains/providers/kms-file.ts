// KMS_PROVIDERS: the JSON file naming where key chains' private keys may live besides the database
// (PKCS#11 tokens, Vault Transit, AWS KMS, a QTSP's remote signing through CSC). Read and connected
// once at start: a file that does not read, a provider that does not answer or a PIN that is refused
// stops the start with one line naming the provider. Without the file there is one provider, db, as
// before.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { StartUpError } from '../../platform/lifecycle/start-up-errors.js';
import type { OutboundClient } from '../../platform/outbound/client.js';
import type { ExternalKeyProvider } from './external.js';
import { EXTERNAL_PROVIDER_TYPES, providerTypeOf } from './index.js';
import { resolveValue, type ValueRef } from './settings.js';
import { ProviderStartError } from './start-error.js';

/** An entry of the file: one of the provider types' own (./index.ts), told apart by `type`. */
const ProviderSettings = z.discriminatedUnion(
  'type',
  EXTERNAL_PROVIDER_TYPES.map((providerType) => providerType.settings) as unknown as [ProviderSchema, ...ProviderSchema[]],
);
type ProviderSchema = (typeof EXTERNAL_PROVIDER_TYPES)[number]['settings'];
type ProviderSettings = z.infer<ProviderSchema>;

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
    if (file.defaultProvider !== 'db' && !ids.includes(file.defaultProvider)) {
      ctx.addIssue({
        code: 'custom',
        path: ['defaultProvider'],
        message: `'${file.defaultProvider}' is not a provider of the file (nor db)`,
      });
    }
    // A tenant's default key chains are made by svc: a provider that makes no keys cannot hold them.
    if (file.providers.some((p) => p.id === file.defaultProvider && p.type === 'csc')) {
      ctx.addIssue({
        code: 'custom',
        path: ['defaultProvider'],
        message: `'${file.defaultProvider}' is a csc provider, which makes no keys: new tenants' key chains cannot be made there`,
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
  // The provider connected, or the start stopped with one line naming it.
  try {
    return await providerTypeOf(settings.type).connect(settings as never, { secretOf, outbound });
  } catch (err) {
    if (err instanceof StartUpError) throw err;
    if (err instanceof ProviderStartError) throw named(err.kind === 'config' ? 'config' : 'keyProvider', err.message);
    throw named('keyProvider', err instanceof Error ? err.message : String(err));
  }
}
