// A fresh, empty database for each service a test starts: a temporary SQLite file, or a new
// PostgreSQL database when the suite runs with DB_TYPE=postgres.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export const engine = process.env.DB_TYPE === 'postgres' ? 'postgres' : 'sqlite';
const adminUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function freshDatabase(): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true });
  if (engine === 'sqlite') return { env: { DB_TYPE: 'sqlite', DATA_DIR: dataDir }, drop: async () => removeDir() };

  const name = `svc_test_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  await withAdmin((client) => client.query(`create database ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    env: { DB_TYPE: 'postgres', DATABASE_URL: url.toString(), DATA_DIR: dataDir },
    drop: async () => {
      removeDir();
      await withAdmin((client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
