// Start-up failures an operator can act on: one line naming the cause, and an exit code per kind
// (sysexits.h), so a supervisor or script can tell a busy port from a missing database.
import type { Config } from '../../config.js';
import { postgresSettings } from '../db/connect.js';

export const EXIT_CODES = {
  config: 78,
  configImport: 65,
  database: 69,
  identityProvider: 69,
  keyProvider: 69,
  listen: 71,
  unexpected: 70,
} as const;

export class StartUpError extends Error {
  constructor(
    readonly kind: keyof typeof EXIT_CODES,
    message: string,
  ) {
    super(message);
    this.name = 'StartUpError';
  }

  get exitCode(): number {
    return EXIT_CODES[this.kind];
  }
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET']);
const POSTGRES_REFUSALS: Record<string, string> = {
  '28P01': 'password authentication failed',
  '28000': 'the server refused the connection (pg_hba.conf or the user)',
  '3D000': 'the database does not exist',
};

/** Failures to reach or open the database become one line naming where; anything else passes unchanged. */
export function databaseFailure(config: Config, err: unknown): unknown {
  const code = errorCode(err);
  if (config.DB_TYPE === 'postgres') {
    const reason = POSTGRES_REFUSALS[code ?? ''] ?? (code && UNREACHABLE.has(code) ? code : undefined);
    if (reason) return new StartUpError('database', `cannot use PostgreSQL at ${postgresAddress(config)}: ${reason}`);
    return err;
  }
  if (code?.startsWith('SQLITE_CANTOPEN') || code === 'EACCES' || code === 'EROFS') {
    return new StartUpError('database', `cannot open the SQLite database in ${config.DATA_DIR}: ${code}`);
  }
  return err;
}

export function listenFailure(config: Pick<Config, 'HOST' | 'PORT'>, err: unknown): unknown {
  const where = `${config.HOST}:${config.PORT}`;
  switch (errorCode(err)) {
    case 'EADDRINUSE':
      return new StartUpError('listen', `port ${config.PORT} is already in use on ${config.HOST}: stop the other process or set PORT`);
    case 'EACCES':
      return new StartUpError('listen', `not permitted to listen on ${where}: choose a PORT above 1023 or grant the capability`);
    case 'EADDRNOTAVAIL':
      return new StartUpError('listen', `HOST ${config.HOST} is not an address of this machine`);
    default:
      return err;
  }
}

/** The code of an error or of the first error in its cause chain or aggregate that has one. */
function errorCode(err: unknown): string | undefined {
  for (let current = err, depth = 0; current && depth < 5; depth++) {
    const candidate = current as { code?: unknown; errors?: unknown[]; cause?: unknown };
    if (typeof candidate.code === 'string') return candidate.code;
    current = candidate.errors?.[0] ?? candidate.cause;
  }
  return undefined;
}

/** host:port without the user or password a DATABASE_URL may carry. */
function postgresAddress(config: Config): string {
  const settings = postgresSettings(config);
  if (settings.connectionString) {
    const url = new URL(settings.connectionString);
    return `${url.hostname}:${url.port || 5432}${url.pathname}`;
  }
  return `${settings.host}:${settings.port}/${settings.database}`;
}
