// MASTER_KEY_PROVIDER: where the master key lives. `env` (the default) is MASTER_SECRET itself, as
// before. Any other source keeps MASTER_SECRET's role for a data key that svc generates at the first
// start and stores in the database only wrapped by the source (the service_settings row
// 'master-key'); every start unwraps it there, after the migrations and before anything is sealed
// or opened. The data key never changes, so rotating the wrapping key (MASTER_KEY_PREVIOUS_ID or
// _FILE: the start that finds the value wrapped under the previous key re-wraps it under the current
// one, in one conditional UPDATE) leaves instances still running with it untouched.
//
// A database sealed under MASTER_SECRET moves to a source by one start with both set: the secret,
// checked against the database's check value first, becomes the data key and is wrapped.
import { z } from 'zod';
import type { Config } from '../../config.js';
import { generateSecret } from '../crypto/secrets.js';
import { type Executor, nowIso } from '../db/values.js';
import { checkValueOpens, hasCheckValue, wrongMasterSecret } from '../lifecycle/master-secret-check.js';
import { StartUpError } from '../lifecycle/start-up-errors.js';
import type { OutboundClient } from '../outbound/client.js';
import { fileSource } from './file.js';
import { type MasterKeySource, MasterKeySourceError } from './source.js';

const ROW = 'master-key';
/** The stored row: which key wrapped the data key, and the wrapped value. */
const Stored = z.object({ wrappedBy: z.string().min(1), wrapped: z.string().min(1) });
type Stored = z.infer<typeof Stored>;

type MasterKeyConfig = Pick<
  Config,
  | 'MASTER_SECRET'
  | 'MASTER_KEY_PROVIDER'
  | 'MASTER_KEY_FILE'
  | 'MASTER_KEY_PREVIOUS_FILE'
  | 'MASTER_KEY_ID'
  | 'MASTER_KEY_PREVIOUS_ID'
  | 'MASTER_KEY_VAULT_URL'
  | 'MASTER_KEY_VAULT_TOKEN'
  | 'MASTER_KEY_VAULT_MOUNT'
  | 'MASTER_KEY_AWS_REGION'
  | 'MASTER_KEY_AWS_ENDPOINT'
>;

/** The configured source, or its previous key's (undefined when no previous key is set). loadConfig has checked the keys each needs. */
async function sourceFor(
  config: MasterKeyConfig,
  which: 'current' | 'previous',
  env: Record<string, string | undefined>,
  outbound: OutboundClient,
): Promise<MasterKeySource | undefined> {
  const previous = which === 'previous';
  const keyId = previous ? config.MASTER_KEY_PREVIOUS_ID : config.MASTER_KEY_ID;
  switch (config.MASTER_KEY_PROVIDER) {
    case 'env':
      return undefined;
    case 'file': {
      const path = previous ? config.MASTER_KEY_PREVIOUS_FILE : config.MASTER_KEY_FILE;
      return path === undefined ? undefined : fileSource(path, previous ? 'MASTER_KEY_PREVIOUS_FILE' : 'MASTER_KEY_FILE');
    }
    case 'vault-transit': {
      if (keyId === undefined || !config.MASTER_KEY_VAULT_URL || !config.MASTER_KEY_VAULT_TOKEN) return undefined;
      const { vaultTransitSource } = await import('./vault-transit.js');
      const settings = { url: config.MASTER_KEY_VAULT_URL, token: config.MASTER_KEY_VAULT_TOKEN, mount: config.MASTER_KEY_VAULT_MOUNT };
      return vaultTransitSource({ ...settings, keyName: keyId }, outbound);
    }
    case 'aws-kms': {
      if (keyId === undefined || !config.MASTER_KEY_AWS_REGION) return undefined;
      // The AWS SDK is loaded only for this source.
      const { awsKmsSource } = await import('./aws-kms.js');
      const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN: sessionToken } = env;
      const credentials =
        accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, ...(sessionToken && { sessionToken }) } : undefined;
      return awsKmsSource(
        { keyId, region: config.MASTER_KEY_AWS_REGION, endpoint: config.MASTER_KEY_AWS_ENDPOINT, ...(credentials && { credentials }) },
        outbound,
      );
    }
  }
}

/**
 * The secret that derive.ts derives every key from: MASTER_SECRET with MASTER_KEY_PROVIDER=env, else
 * the data key the source unwraps (generated, or taken from MASTER_SECRET, and wrapped at the first
 * start). A StartUpError naming the source otherwise: exit 78 when a key does not open or is refused,
 * 69 when the source cannot be reached.
 */
export async function openDataKey(
  db: Executor,
  config: MasterKeyConfig,
  env: Record<string, string | undefined>,
  outbound: OutboundClient,
): Promise<string> {
  if (config.MASTER_KEY_PROVIDER === 'env') {
    if (!config.MASTER_SECRET) throw new Error('unreachable: first-run.ts sets MASTER_SECRET when MASTER_KEY_PROVIDER is env');
    return config.MASTER_SECRET;
  }
  try {
    const current = await sourceFor(config, 'current', env, outbound);
    if (!current) throw new Error('unreachable: loadConfig requires the settings of the source');
    const dataKey = await unwrapStored(db, config, current, () => sourceFor(config, 'previous', env, outbound));
    if (config.MASTER_SECRET !== undefined && config.MASTER_SECRET !== dataKey) {
      throw new StartUpError(
        'config',
        `MASTER_SECRET: set, but the data key that ${current.name} unwraps is another secret (this database moved to MASTER_KEY_PROVIDER=${config.MASTER_KEY_PROVIDER} from another MASTER_SECRET); unset MASTER_SECRET`,
      );
    }
    return dataKey;
  } catch (err) {
    if (err instanceof MasterKeySourceError) {
      throw new StartUpError(
        err.kind === 'config' ? 'config' : 'keyProvider',
        `MASTER_KEY_PROVIDER=${config.MASTER_KEY_PROVIDER}: ${err.message}`,
      );
    }
    throw err;
  }
}

async function unwrapStored(
  db: Executor,
  config: MasterKeyConfig,
  current: MasterKeySource,
  previousSource: () => Promise<MasterKeySource | undefined>,
): Promise<string> {
  let row = await readRow(db);
  if (!row) {
    const dataKey = await firstDataKey(db, config, current);
    const value = JSON.stringify({ wrappedBy: current.name, wrapped: await current.wrap(Buffer.from(dataKey, 'utf8')) } satisfies Stored);
    // Instances starting at once on a new database each generate one; the first write stands and the
    // others unwrap it.
    const written = await db
      .insertInto('service_settings')
      // Start-up, before the service answers anyone: the system's time.
      .values({ name: ROW, value, created_at: nowIso() })
      .onConflict((oc) => oc.column('name').doNothing())
      .returning('name')
      .executeTakeFirst();
    if (written) return dataKey;
    row = await readRow(db);
    if (!row) throw new Error('the master-key row was written by another instance but cannot be read');
  }
  const stored = parseRow(row.value, config);
  if (stored.wrappedBy === current.name) return (await current.unwrap(stored.wrapped)).toString('utf8');
  const previous = await previousSource();
  if (!previous || stored.wrappedBy !== previous.name) {
    const setting = config.MASTER_KEY_PROVIDER === 'file' ? 'MASTER_KEY_FILE' : 'MASTER_KEY_ID';
    throw new StartUpError(
      'config',
      `MASTER_KEY_PROVIDER=${config.MASTER_KEY_PROVIDER}: the data key in the database is wrapped by ${stored.wrappedBy}, not by ${current.name}${previous ? ` nor by ${previous.name}` : ''}: set ${setting} to that key, or to the new key with ${setting.replace('MASTER_KEY_', 'MASTER_KEY_PREVIOUS_')} set to that one to re-wrap`,
    );
  }
  // Rotation: unwrapped under the previous key, re-wrapped under the current one. The UPDATE names the
  // value read, so of instances starting at once one re-wraps and the others read its value.
  const dataKey = await previous.unwrap(stored.wrapped);
  const value = JSON.stringify({ wrappedBy: current.name, wrapped: await current.wrap(dataKey) } satisfies Stored);
  const updated = await db
    .updateTable('service_settings')
    .set({ value })
    .where('name', '=', ROW)
    .where('value', '=', row.value)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 1) return dataKey.toString('utf8');
  const rewrapped = parseRow((await readRow(db))?.value ?? '', config);
  if (rewrapped.wrappedBy !== current.name) throw new Error('the master-key row changed during the re-wrap under another key');
  return (await current.unwrap(rewrapped.wrapped)).toString('utf8');
}

/**
 * The data key of a database that has none stored yet: MASTER_SECRET when set (a database moving from
 * env to a source; the secret must open its check value), else a new one, but only for a database
 * that holds nothing sealed under some MASTER_SECRET already.
 */
async function firstDataKey(db: Executor, config: MasterKeyConfig, current: MasterKeySource): Promise<string> {
  if (config.MASTER_SECRET !== undefined) {
    if ((await checkValueOpens(db, config.MASTER_SECRET)) === false) throw wrongMasterSecret();
    return config.MASTER_SECRET;
  }
  if (await hasCheckValue(db)) {
    throw new StartUpError(
      'config',
      `MASTER_KEY_PROVIDER=${config.MASTER_KEY_PROVIDER}: this database is sealed under a MASTER_SECRET and holds no wrapped data key yet; start once with that MASTER_SECRET set as well (outside production, a generated one is in DATA_DIR/master-secret), and ${current.name} wraps it`,
    );
  }
  return generateSecret();
}

async function readRow(db: Executor) {
  return db.selectFrom('service_settings').select('value').where('name', '=', ROW).executeTakeFirst();
}

function parseRow(value: string, config: MasterKeyConfig): Stored {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    json = undefined;
  }
  const parsed = Stored.safeParse(json);
  if (!parsed.success) {
    throw new StartUpError(
      'config',
      `MASTER_KEY_PROVIDER=${config.MASTER_KEY_PROVIDER}: the stored wrapped data key (service_settings '${ROW}') is unreadable`,
    );
  }
  return parsed.data;
}
