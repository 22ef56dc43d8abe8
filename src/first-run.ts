// Zero-configuration start outside production: a missing MASTER_SECRET or bootstrap client is
// generated once into DATA_DIR (mode 0600) and reused on every later start.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config, ReadyConfig, SecretsConfig } from './config.js';
import { generateSecret } from './platform/crypto/secrets.js';

interface Generated {
  masterSecret?: string;
  client?: { id: string; secret: string };
}

export interface FirstRunResult {
  config: SecretsConfig;
  /** What was generated during this start, for the one-time announcement; empty on later starts. */
  created: Generated;
}

function readOrCreate<T>(file: string, create: () => T, serialize: (value: T) => string, parse: (text: string) => T) {
  if (existsSync(file)) return { value: parse(readFileSync(file, 'utf8')), created: false };
  const value = create();
  writeFileSync(file, serialize(value), { mode: 0o600, flag: 'wx' });
  return { value, created: true };
}

export function prepareSecrets(config: Config): FirstRunResult {
  if (config.MASTER_SECRET && config.AUTH_CLIENT_ID && config.AUTH_CLIENT_SECRET) {
    return { config: config as SecretsConfig, created: {} };
  }
  // In production loadConfig has already refused a missing key; this is development only.
  mkdirSync(config.DATA_DIR, { recursive: true, mode: 0o700 });
  const created: Generated = {};
  let masterSecret = config.MASTER_SECRET;
  if (!masterSecret) {
    const result = readOrCreate(
      join(config.DATA_DIR, 'master-secret'),
      generateSecret,
      (s) => `${s}\n`,
      (t) => t.trim(),
    );
    masterSecret = result.value;
    if (result.created) created.masterSecret = masterSecret;
  }
  let client =
    config.AUTH_CLIENT_ID && config.AUTH_CLIENT_SECRET ? { id: config.AUTH_CLIENT_ID, secret: config.AUTH_CLIENT_SECRET } : undefined;
  if (!client) {
    const result = readOrCreate(
      join(config.DATA_DIR, 'bootstrap-client.json'),
      () => ({ id: 'admin', secret: generateSecret() }),
      (c) => `${JSON.stringify(c, null, 2)}\n`,
      (t) => JSON.parse(t) as { id: string; secret: string },
    );
    client = result.value;
    if (result.created) created.client = client;
  }
  return { config: { ...config, MASTER_SECRET: masterSecret, AUTH_CLIENT_ID: client.id, AUTH_CLIENT_SECRET: client.secret }, created };
}

export function firstRunAnnouncement(config: ReadyConfig, created: Generated): string | undefined {
  if (!created.client && !created.masterSecret) return undefined;
  const lines = ['', `svc: first start, generated secrets were stored in ${config.DATA_DIR} (mode 0600).`];
  if (created.masterSecret) lines.push('  MASTER_SECRET   -> master-secret (back it up: it decrypts stored keys and personal data)');
  if (created.client) {
    lines.push(
      `  bootstrap client (role tenants:manage) -> bootstrap-client.json`,
      `    client_id:     ${created.client.id}`,
      `    client_secret: ${created.client.secret}`,
      '  Get an access token:',
      `    curl -s -u '${created.client.id}:${created.client.secret}' -d grant_type=client_credentials ${config.PUBLIC_URL}/api/oauth2/token`,
      `  The API explorer is at ${config.PUBLIC_URL}/api`,
    );
  }
  return `${lines.join('\n')}\n`;
}
