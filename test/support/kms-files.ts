// KMS_PROVIDERS files for tests: each written to its own name in a temporary folder of the test run.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/platform/db/schema.js';

export interface KmsFiles {
  dir: string;
  /** Writes a KMS_PROVIDERS file (an object as JSON, a string as it is) and returns its path. */
  write(content: unknown): string;
  remove(): void;
}

export function kmsFiles(dir = mkdtempSync(join(tmpdir(), 'svc-kms-'))): KmsFiles {
  let files = 0;
  return {
    dir,
    write(content) {
      const path = join(dir, `kms-${++files}.json`);
      writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
      return path;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * The instance part of a tenant's key names in a shared provider (svc.<tenant>.<instance>.<name>),
 * worked out from its tenant row: created_at in milliseconds, base 36.
 */
export async function tenantInstance(db: Kysely<Database>, tenantId: string): Promise<string> {
  const row = await db.selectFrom('tenants').select('created_at').where('id', '=', tenantId).executeTakeFirstOrThrow();
  return Date.parse(row.created_at).toString(36);
}
