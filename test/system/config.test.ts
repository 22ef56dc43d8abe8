import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, ConfigError, loadConfig } from '../../src/config.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('configuration', () => {
  it('works with no configuration at all, with the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      DB_TYPE: 'sqlite',
      DATA_DIR: './data',
      JWT_ISSUER: 'svc-service',
      JWT_EXPIRES_IN: 86400,
      STATUS_CAPACITY: 10000,
      STATUS_BITS: 1,
      STATUS_TTL: 3600,
      SESSION_TTL: 86400,
      SESSION_CLEANUP_MODE: 'full',
      OIDC_SUB: 'tenant_id',
      OIDC_ALGORITHM: 'RS256',
      OIDC_UI_CLIENT_ID: 'svc-ui',
    });
    expect(config.MASTER_SECRET).toBeUndefined();
    // Settled at start-up from the address listened on (see start-up.test.ts).
    expect(config.PUBLIC_URL).toBeUndefined();
    expect(config.HOST).toBe('127.0.0.1');
    const production = { NODE_ENV: 'production', MASTER_SECRET: 'x'.repeat(32), AUTH_CLIENT_ID: 'a', AUTH_CLIENT_SECRET: 'y'.repeat(16) };
    expect(loadConfig(production).HOST).toBe('0.0.0.0');
  });

  it('names every invalid key, with the rule it breaks', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      STATUS_BITS: '3',
      MASTER_SECRET: 'short',
      JWT_EXPIRES_IN: '24 hours',
      SESSION_TTL: '59',
      DB_TYPE: 'mysql',
      DB_STATEMENT_CACHE_SIZE: '0',
    });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual([
      'DB_STATEMENT_CACHE_SIZE',
      'DB_TYPE',
      'JWT_EXPIRES_IN',
      'MASTER_SECRET',
      'PORT',
      'SESSION_TTL',
      'STATUS_BITS',
    ]);
    expect(problems.find((p) => p.startsWith('MASTER_SECRET'))).toContain('at least 32 characters');
  });

  it('reads durations and booleans', () => {
    const config = loadConfig({ JWT_EXPIRES_IN: '15m', DB_SSL: 'true', TRUST_PROXY: '0' });
    expect(config.JWT_EXPIRES_IN).toBe(900);
    expect(config.DB_SSL).toBe(true);
    expect(config.TRUST_PROXY).toBe(false);
    expect(loadConfig({}).DB_PREPARED_STATEMENTS).toBe(true);
    expect(loadConfig({ DB_PREPARED_STATEMENTS: 'false' }).DB_PREPARED_STATEMENTS).toBe(false);
  });

  it('requires the admin client in external mode, and not the bootstrap client in production there', () => {
    expect(problemsOf({ OIDC: 'https://idp.example.com/realms/svc' }).map((p) => p.split(':')[0])).toEqual([
      'OIDC_CLIENT_ID',
      'OIDC_CLIENT_SECRET',
    ]);
    const external = { OIDC: 'https://idp.example.com/realms/svc', OIDC_CLIENT_ID: 'admin', OIDC_CLIENT_SECRET: 'secret' };
    expect(problemsOf({ ...external, NODE_ENV: 'production' }).map((p) => p.split(':')[0])).toEqual(['MASTER_SECRET']);
    expect(problemsOf({ ...external, OIDC_ALGORITHM: 'HS256' })[0]).toMatch(/^OIDC_ALGORITHM:/);
  });

  it('requires the secrets in production instead of generating them', () => {
    expect(problemsOf({ NODE_ENV: 'production' }).map((p) => p.split(':')[0])).toEqual([
      'MASTER_SECRET',
      'AUTH_CLIENT_ID',
      'AUTH_CLIENT_SECRET',
    ]);
  });

  it('allows private outbound destinations outside production only, unless told otherwise', () => {
    const production = { NODE_ENV: 'production', MASTER_SECRET: 'x'.repeat(32), AUTH_CLIENT_ID: 'a', AUTH_CLIENT_SECRET: 'y'.repeat(16) };
    expect(loadConfig({}).OUTBOUND_ALLOW_PRIVATE).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test' }).OUTBOUND_ALLOW_PRIVATE).toBe(true);
    expect(loadConfig(production).OUTBOUND_ALLOW_PRIVATE).toBe(false);
    expect(loadConfig({ ...production, OUTBOUND_ALLOW_PRIVATE: 'true' }).OUTBOUND_ALLOW_PRIVATE).toBe(true);
    expect(loadConfig({ OUTBOUND_ALLOW_PRIVATE: 'false' }).OUTBOUND_ALLOW_PRIVATE).toBe(false);
    expect(problemsOf({ OUTBOUND_ALLOW_PRIVATE: 'maybe' })[0]).toMatch(/^OUTBOUND_ALLOW_PRIVATE: .+ \(got "maybe"\)$/);
    const readme = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    expect(readme).toMatch(/\| `OUTBOUND_ALLOW_PRIVATE` +\| `true` \(production: `false`\) +\|/);
  });

  it('drains with no delay and a grace of 25 s by default, and wants the delay shorter than the grace it counts within', () => {
    expect(loadConfig({})).toMatchObject({ SHUTDOWN_DELAY_SECONDS: 0, SHUTDOWN_GRACE_SECONDS: 25 });
    expect(loadConfig({ SHUTDOWN_DELAY_SECONDS: '5', SHUTDOWN_GRACE_SECONDS: '55' })).toMatchObject({
      SHUTDOWN_DELAY_SECONDS: 5,
      SHUTDOWN_GRACE_SECONDS: 55,
    });
    expect(problemsOf({ SHUTDOWN_DELAY_SECONDS: '25' })).toEqual([
      'SHUTDOWN_DELAY_SECONDS: must be less than SHUTDOWN_GRACE_SECONDS (25): the delay counts within the grace',
    ]);
    expect(problemsOf({ SHUTDOWN_GRACE_SECONDS: '0' })[0]).toMatch(/^SHUTDOWN_GRACE_SECONDS: must be at least 1/);
  });

  it('wants the bootstrap client id and secret together', () => {
    expect(problemsOf({ AUTH_CLIENT_ID: 'admin' })).toEqual(['AUTH_CLIENT_ID, AUTH_CLIENT_SECRET: set both or neither']);
  });

  it('takes EVENTS_DATABASE_URL only as a postgres:// URL beside DB_TYPE=postgres', () => {
    const events = 'postgres://svc@db.internal:5432/svc';
    expect(loadConfig({ DB_TYPE: 'postgres', EVENTS_DATABASE_URL: events }).EVENTS_DATABASE_URL).toBe(events);
    expect(problemsOf({ EVENTS_DATABASE_URL: events })).toEqual([
      'EVENTS_DATABASE_URL: set, but DB_TYPE is sqlite; set DB_TYPE=postgres to use it, or unset it',
    ]);
    const refused = problemsOf({ DB_TYPE: 'postgres', EVENTS_DATABASE_URL: 'mysql://svc:hunter2@db/svc' });
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatch(/^EVENTS_DATABASE_URL: must be a postgres:\/\/ URL/);
    // A secret: the value is never repeated.
    expect(refused[0]).not.toContain('hunter2');
  });

  it('bounds status list storage, with a default capacity inside the bound', () => {
    expect(loadConfig({})).toMatchObject({ STATUS_MAX_CAPACITY: 10_000_000, STATUS_MAX_LISTS_PER_TENANT: 100 });
    expect(problemsOf({ STATUS_CAPACITY: '20000', STATUS_MAX_CAPACITY: '15000' })).toEqual([
      'STATUS_CAPACITY: must be at most STATUS_MAX_CAPACITY (15000)',
    ]);
    expect(problemsOf({ STATUS_MAX_CAPACITY: '999' })[0]).toContain('STATUS_MAX_CAPACITY: must be at least 1000');
    expect(problemsOf({ STATUS_MAX_LISTS_PER_TENANT: '0' })[0]).toContain('STATUS_MAX_LISTS_PER_TENANT: must be at least 1');
  });

  it('documents every key in docs/configuration.md', () => {
    const readme = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    for (const key of Object.keys(CONFIG_KEYS)) expect(readme, key).toContain(`| \`${key}\``);
  });
});
