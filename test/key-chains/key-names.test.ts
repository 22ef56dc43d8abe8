// The names of tenants' keys in a provider shared by all tenants, on their own: what keeps two
// tenants, or a tenant and the one that takes up its id after it is deleted, from ever naming the same
// key. tenant-key-names.test.ts shows the same rules through the service and real providers.
import { describe, expect, it } from 'vitest';
import { escapeId, KEY_NAME, type KeyPlace, providerKeyName } from '../../src/key-chains/providers/key-names.js';

/** 2026-01-02T03:04:05.678Z is 1767323045678 ms, 'mjwaidke' in base 36. */
const CREATED_AT = '2026-01-02T03:04:05.678Z';
const INSTANCE = 'mjwaidke';
const NO_ADOPTIONS = new Map<string, ReadonlySet<string>>();

const place = (tenantId: string, name: string, tenantCreatedAt = CREATED_AT): KeyPlace => ({ tenantId, tenantCreatedAt, name });

describe('providerKeyName', () => {
  it("puts a tenant's key in the namespace svc<sep><tenant><sep><instance><sep><name>, with '.' or '/'", () => {
    expect(providerKeyName(place('acme', 'signer'), '.', NO_ADOPTIONS)).toBe(`svc.acme.${INSTANCE}.signer`);
    expect(providerKeyName(place('acme', 'signer'), '/', NO_ADOPTIONS)).toBe(`svc/acme/${INSTANCE}/signer`);
  });

  it('gives a tenant created again with the same id (another created_at, a millisecond later) other names', () => {
    const later = providerKeyName(place('acme', 'signer', '2026-01-02T03:04:05.679Z'), '.', NO_ADOPTIONS);
    expect(later).toBe('svc.acme.mjwaidkf.signer');
    expect(later).not.toBe(providerKeyName(place('acme', 'signer'), '.', NO_ADOPTIONS));
  });

  it('escapes the tenant id, so ids that run together with the separator stay apart', () => {
    // A '.' in the id would read as a separator; and '_' is escaped too, so no id can spell another's escape.
    expect(providerKeyName(place('a.b', 'c'), '.', NO_ADOPTIONS)).toBe(`svc.a_2eb.${INSTANCE}.c`);
    expect(providerKeyName(place('a_2eb', 'c'), '.', NO_ADOPTIONS)).toBe(`svc.a_5f2eb.${INSTANCE}.c`);
  });

  it("refuses a tenant whose created_at is not a time, rather than naming its keys 'NaN'", () => {
    expect(() => providerKeyName(place('acme', 'signer', 'yesterday'), '.', NO_ADOPTIONS)).toThrow(
      "a tenant's created_at is not a time: 'yesterday'",
    );
  });

  it('uses the name itself only for the tenant KMS_PROVIDERS lets adopt it, whichever instance of that tenant', () => {
    const adoptions = new Map([['alice', new Set(['operator-key'])]]);
    expect(providerKeyName(place('alice', 'operator-key'), '.', adoptions)).toBe('operator-key');
    expect(providerKeyName(place('alice', 'operator-key', '2030-05-06T07:08:09.000Z'), '/', adoptions)).toBe('operator-key');
    // Another tenant naming the same key, and the adopting tenant naming another, stay in their namespaces.
    expect(providerKeyName(place('mallory', 'operator-key'), '.', adoptions)).toBe(`svc.mallory.${INSTANCE}.operator-key`);
    expect(providerKeyName(place('alice', 'signer'), '.', adoptions)).toBe(`svc.alice.${INSTANCE}.signer`);
  });
});

describe('escapeId', () => {
  it('keeps letters, digits and -, and writes every other character as _ and its two hex digits', () => {
    expect(escapeId('Acme-09')).toBe('Acme-09');
    expect(escapeId('a.b_c~d')).toBe('a_2eb_5fc_7ed');
  });

  it('is one-to-one: an id already holding an escape does not meet the id it escapes', () => {
    expect(escapeId('a.')).toBe('a_2e');
    expect(escapeId('a_2e')).toBe('a_5f2e');
  });

  it('never writes a separator', () => {
    expect(escapeId('x.y~z_')).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});

describe('KEY_NAME (externalKeyId and adopted names)', () => {
  it.each(['a', 'Signer_2-x', 'k'.repeat(100)])('takes %s', (name) => {
    expect(KEY_NAME.test(name)).toBe(true);
  });

  it.each([
    ['', 'empty'],
    ['k'.repeat(101), 'longer than 100'],
    ['svc.other.signer', "a '.' separator (another tenant's namespace)"],
    ['alias/svc', "a '/' separator"],
    ['a b', 'a space'],
    ['signer\n', 'a trailing line break'],
    ['.signer', 'a separator first'],
    ['signer.', 'a separator last'],
  ])('refuses %j: %s', (name) => {
    expect(KEY_NAME.test(name)).toBe(false);
  });
});
