// Zero-configuration start outside production: a missing MASTER_SECRET or bootstrap client is
// generated once into DATA_DIR (mode 0600) and reused on every later start.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config, ReadyConfig } from '../config.js';
import { generateSecret } from '../platform/crypto/secrets.js';
import { WrongMasterSecret } from '../platform/lifecycle/master-secret-check.js';
import { StartUpError } from '../platform/lifecycle/start-up-errors.js';

interface Generated {
  /** The master secret was generated during this start. */
  masterSecretCreated?: true;
  /** MASTER_SECRET was not set: the one used is DATA_DIR's master-secret file (generated now or earlier). */
  masterSecretFromFile?: true;
  /** The bootstrap client kept in DATA_DIR (generated now or on an earlier start), if it is used. */
  client?: { id: string; secret: string };
}

export interface FirstRunResult {
  /** MASTER_SECRET is set unless a MASTER_KEY_PROVIDER other than env supplies the data key once the database is open. */
  config: Config;
  generated: Generated;
}

function readOrCreate<T>(file: string, create: () => T, serialize: (value: T) => string, parse: (text: string) => T) {
  if (existsSync(file)) return { value: parse(readFileSync(file, 'utf8')), created: false };
  const value = create();
  writeFileSync(file, serialize(value), { mode: 0o600, flag: 'wx' });
  return { value, created: true };
}

export function prepareSecrets(config: Config): FirstRunResult {
  // External mode: clients get their tokens from the identity provider, so no bootstrap client is made.
  const wantsClient = config.OIDC === undefined;
  // A master key source other than env generates its data key itself, into the database, wrapped.
  const wantsSecret = !config.MASTER_SECRET && config.MASTER_KEY_PROVIDER === 'env';
  if (!wantsSecret && (!wantsClient || (config.AUTH_CLIENT_ID && config.AUTH_CLIENT_SECRET))) {
    return { config, generated: {} };
  }
  // In production loadConfig has already refused a missing key; this is development only.
  mkdirSync(config.DATA_DIR, { recursive: true, mode: 0o700 });
  const generated: Generated = {};
  let masterSecret = config.MASTER_SECRET;
  if (wantsSecret) {
    const result = readOrCreate(
      join(config.DATA_DIR, 'master-secret'),
      generateSecret,
      (s) => `${s}\n`,
      (t) => t.trim(),
    );
    masterSecret = result.value;
    generated.masterSecretFromFile = true;
    if (result.created) generated.masterSecretCreated = true;
  }
  let client =
    config.AUTH_CLIENT_ID && config.AUTH_CLIENT_SECRET ? { id: config.AUTH_CLIENT_ID, secret: config.AUTH_CLIENT_SECRET } : undefined;
  if (!client && wantsClient) {
    const result = readOrCreate(
      join(config.DATA_DIR, 'bootstrap-client.json'),
      () => ({ id: 'admin', secret: generateSecret() }),
      (c) => `${JSON.stringify(c, null, 2)}\n`,
      (t) => JSON.parse(t) as { id: string; secret: string },
    );
    client = result.value;
    generated.client = client;
  }
  return {
    config: { ...config, MASTER_SECRET: masterSecret, ...(client && { AUTH_CLIENT_ID: client.id, AUTH_CLIENT_SECRET: client.secret }) },
    generated,
  };
}

const masterSecretFile = (config: Config) => join(config.DATA_DIR, 'master-secret');

/**
 * A database created with another secret, while MASTER_SECRET was unset: the usual cause is a
 * database reused with a fresh DATA_DIR, whose generated secret the user never chose. The message
 * says where the secret came from and how to pass the original; a secret generated for this start
 * is removed again, so that the next start does not stumble over it (or someone back it up as the
 * database's). Any other failure passes unchanged.
 */
export function explainMasterSecretRefusal(config: Config, generated: Generated, err: unknown): unknown {
  if (!(err instanceof WrongMasterSecret) || !generated.masterSecretFromFile) return err;
  const file = masterSecretFile(config);
  const passOriginal = `start with MASTER_SECRET set to the original secret, or with the DATA_DIR (its master-secret file) the database was first started with`;
  if (generated.masterSecretCreated) {
    rmSync(file, { force: true });
    return new StartUpError(
      'config',
      `MASTER_SECRET: not set, so a new one was generated into ${file} for this start, but this database was created with another secret (the data sealed under it does not open); the generated secret was removed again: ${passOriginal}`,
    );
  }
  return new StartUpError(
    'config',
    `MASTER_SECRET: not set, so the one in ${file} was used, but this database was created with another secret (the data sealed under it does not open): ${passOriginal}`,
  );
}

export interface Announcement {
  /** The readable block for the terminal, with the secret to paste. */
  text: string;
  /** The same news as one log record, without the secret (logs travel further than a terminal). */
  record: { dataDir: string; clientId?: string; tokenUrl: string; consoleUrl: string; explorerUrl: string };
}

/**
 * Said when the master secret was just generated, and at every start while the generated bootstrap
 * client has not obtained a token yet: a first start that failed after writing the secrets, or whose
 * output scrolled away, must not lose the only print of them.
 */
export function firstRunAnnouncement(config: ReadyConfig, generated: Generated, clientUnused: boolean): Announcement | undefined {
  const client = clientUnused ? generated.client : undefined;
  if (!client && !generated.masterSecretCreated) return undefined;
  const tokenUrl = `${config.PUBLIC_URL}/api/oauth2/token`;
  const explorerUrl = `${config.PUBLIC_URL}/api`;
  const consoleUrl = `${config.PUBLIC_URL}/console`;
  const lines = ['', `svc: generated secrets are stored in ${config.DATA_DIR} (mode 0600).`];
  if (generated.masterSecretCreated)
    lines.push('  MASTER_SECRET   -> master-secret (back it up: it decrypts stored keys and personal data)');
  if (client) {
    lines.push(
      `  bootstrap client (role tenants:manage) -> bootstrap-client.json (shown until it obtains a token)`,
      `    client_id:     ${client.id}`,
      `    client_secret: ${client.secret}`,
      '  Get an access token:',
      `    curl -s -u '${client.id}:${client.secret}' -d grant_type=client_credentials ${tokenUrl}`,
      `  The web console is at ${consoleUrl} (log in with the client id and secret above)`,
      // The README's walkthrough reads the service's address from SVC.
      `  For the README walkthrough: export SVC=${config.PUBLIC_URL}`,
      `  The API explorer is at ${explorerUrl}`,
    );
  }
  return {
    text: `${lines.join('\n')}\n`,
    record: { dataDir: config.DATA_DIR, ...(client && { clientId: client.id }), tokenUrl, consoleUrl, explorerUrl },
  };
}
