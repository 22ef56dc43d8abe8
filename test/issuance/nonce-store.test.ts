// The once-only values of NonceStore (c_nonces, DPoP and attestation proof ids, challenges) on the
// real database: a value is consumed at most once, only by its tenant and purpose, and only before
// it expires; a remembered value is refused the second time; only its hash is stored; the cleanup
// deletes what has expired and nothing else.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NonceStore } from '../../src/issuance/nonce/store.js';
import { hashHandle } from '../../src/sessions/service.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let nonces: NonceStore;

beforeAll(async () => {
  svc = await startService();
  await Promise.all([svc.tenant('acme'), svc.tenant('other')]);
  nonces = new NonceStore(svc.db, svc.clock);
});
afterAll(() => svc.stop());

const rowOf = (purpose: string, value: string) =>
  svc.db
    .selectFrom('nonces')
    .selectAll()
    .where('hash', '=', hashHandle(`${purpose}:${value}`))
    .executeTakeFirst();

describe('issue and consume', () => {
  it('issues a random value, stored as the hash of purpose and value for its tenant until its lifetime ends', async () => {
    const before = Date.now();
    const value = await nonces.issue('acme', 'c-nonce', 120);
    expect(value).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await nonces.issue('acme', 'c-nonce', 120)).not.toBe(value);
    const row = await rowOf('c-nonce', value);
    expect(row).toMatchObject({ tenant_id: 'acme', purpose: 'c-nonce' });
    const expiresAt = Date.parse(String(row?.expires_at));
    expect(expiresAt).toBeGreaterThanOrEqual(before + 120_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 120_000 + 1000);
    expect(await svc.db.selectFrom('nonces').selectAll().where('hash', '=', value).executeTakeFirst()).toBeUndefined();
  });

  it('consumes a value once, for its tenant and purpose only', async () => {
    const value = await nonces.issue('acme', 'c-nonce', 120);
    expect(await nonces.consume('other', 'c-nonce', value)).toBe(false);
    expect(await nonces.consume('acme', 'challenge', value)).toBe(false);
    expect(await nonces.consume('acme', 'c-nonce', value)).toBe(true);
    expect(await nonces.consume('acme', 'c-nonce', value)).toBe(false);
    expect(await rowOf('c-nonce', value)).toBeUndefined();
  });

  it('does not consume an expired value', async () => {
    const value = await nonces.issue('acme', 'c-nonce', -1);
    expect(await nonces.consume('acme', 'c-nonce', value)).toBe(false);
    expect(await rowOf('c-nonce', value)).toBeDefined();
  });

  it('consuming: the statement returns the row once, for its tenant and purpose, before expiry', async () => {
    const value = await nonces.issue('acme', 'c-nonce', 120);
    expect(await nonces.consuming('other', 'c-nonce', value).execute()).toHaveLength(0);
    expect(await nonces.consuming('acme', 'dpop-jti', value).execute()).toHaveLength(0);
    expect(await nonces.consuming('acme', 'c-nonce', value).execute()).toHaveLength(1);
    expect(await nonces.consuming('acme', 'c-nonce', value).execute()).toHaveLength(0);
    const expired = await nonces.issue('acme', 'c-nonce', -1);
    expect(await nonces.consuming('acme', 'c-nonce', expired).execute()).toHaveLength(0);
  });
});

describe('remember', () => {
  it('remembers a value once; the same value again is a replay, in another purpose or tenant it is new', async () => {
    const jti = randomUUID();
    expect(await nonces.remember('acme', 'dpop-jti', jti, 360)).toBe(true);
    expect(await nonces.remember('acme', 'dpop-jti', jti, 360)).toBe(false);
    expect(await nonces.remember('acme', 'pop-jti', jti, 360)).toBe(true);
    expect((await rowOf('dpop-jti', jti))?.tenant_id).toBe('acme');
  });

  it('remembering: the statement adds one row the first time, none after', async () => {
    const jti = randomUUID();
    const first = await nonces.remembering('acme', 'dpop-jti', jti, 360).executeTakeFirst();
    expect(first.numInsertedOrUpdatedRows).toBe(1n);
    const again = await nonces.remembering('acme', 'dpop-jti', jti, 360).executeTakeFirst();
    expect(again.numInsertedOrUpdatedRows ?? 0n).toBe(0n);
  });
});

describe('purgeExpired', () => {
  it('deletes the expired values of every tenant and keeps the live ones', async () => {
    const live = await nonces.issue('acme', 'purge', 120);
    const expired = [await nonces.issue('acme', 'purge', -5), await nonces.issue('other', 'purge', -5)];
    await nonces.purgeExpired();
    expect(await rowOf('purge', live)).toBeDefined();
    for (const value of expired) expect(await rowOf('purge', value)).toBeUndefined();
  });
});
