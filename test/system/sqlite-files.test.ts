// The SQLite files as an operator finds them in DATA_DIR: readable by the owner only, whatever the
// umask, and no larger than their data once a large status list is deleted. A SQLite service is
// started whichever engine the suite runs on.
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startService } from '../support/service.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sqlite-'));
  dirs.push(dir);
  return dir;
};
const sqlite = (dir: string) => startService({ DB_TYPE: 'sqlite', DATABASE_URL: '', DATA_DIR: dir });
const FILES = ['svc.db', 'svc.db-wal', 'svc.db-shm'];
const modeOf = (file: string) => statSync(file).mode & 0o777;

describe('SQLite files', () => {
  it('are created readable and writable by their owner only (0600), whatever the umask', async () => {
    const dir = dataDir();
    const umask = process.umask(0o022);
    const svc = await sqlite(dir).finally(() => process.umask(umask));
    try {
      // Written to, so that the write-ahead log holds something.
      await svc.tenant('files');
      for (const file of FILES) {
        expect(existsSync(join(dir, file)), file).toBe(true);
        expect(modeOf(join(dir, file)).toString(8), file).toBe('600');
      }
    } finally {
      await svc.stop();
    }
  });

  it('made readable by others before are tightened at start', async () => {
    const dir = dataDir();
    const first = await sqlite(dir);
    await first.stop();
    // As a start before this rule (or a careless copy) left them.
    for (const file of FILES) {
      if (!existsSync(join(dir, file))) writeFileSync(join(dir, file), '');
      chmodSync(join(dir, file), 0o644);
    }
    // With the first start's master secret: the database refuses any other.
    const svc = await startService({ DB_TYPE: 'sqlite', DATABASE_URL: '', DATA_DIR: dir }, { besides: first });
    try {
      for (const file of FILES) expect(modeOf(join(dir, file)).toString(8), file).toBe('600');
    } finally {
      await svc.stop();
    }
  });

  it('give the space of a deleted status list back to the file system', async () => {
    const dir = dataDir();
    const svc = await sqlite(dir);
    try {
      const { token } = await svc.tenant('space');
      const size = () =>
        FILES.slice(0, 2).reduce((sum, file) => sum + (existsSync(join(dir, file)) ? statSync(join(dir, file)).size : 0), 0);
      const before = size();
      // 10,000,000 entries of 8 bits (STATUS_MAX_CAPACITY): 10 MB.
      const list = await svc.call('POST', '/api/status-lists', { token, body: { capacity: 10_000_000, bits: 8 } });
      expect(list.status, list.text).toBe(201);
      expect(size()).toBeGreaterThan(before + 10_000_000);
      expect((await svc.call('DELETE', `/api/status-lists/${list.body.id}`, { token })).status).toBe(204);
      expect(size()).toBeLessThan(before + 1_000_000);
    } finally {
      await svc.stop();
    }
  });
});
