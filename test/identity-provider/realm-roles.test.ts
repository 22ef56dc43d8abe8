// External mode against a new Keycloak realm: the service makes its realm roles at start-up through
// the admin API (the realm has none of them), only those missing, with one list call when none is,
// and two instances starting together make each role once. An admin client that may not make them
// (no manage-realm) stops the start with exit code 69 and one line naming the permission to give it.
// Runs on the database of the suite (DB_TYPE).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLES, type Role } from '../../src/platform/auth/roles.js';
import { StartUpError } from '../../src/platform/lifecycle/start-up-errors.js';
import { start } from '../../src/start-up/server.js';
import { engine, freshDatabase, type TestDatabase } from '../support/database.js';
import { type ExternalService, REALM, startExternalService } from '../support/external-service.js';
import type { KeycloakRealm } from '../support/keycloak-admin-fake.js';
import { ADMIN_CLIENT, clientCredentialsToken, startOpenIdProvider, type TestProvider } from '../support/oidc-provider.js';
import { createdBody } from '../support/problems.js';
import { ROOT_ID, startService, type TestService } from '../support/service.js';

const externalEnv = (op: TestProvider) => ({
  OIDC: op.issuer,
  OIDC_CLIENT_ID: ADMIN_CLIENT.clientId,
  OIDC_CLIENT_SECRET: ADMIN_CLIENT.secret,
});

const realmOf = (op: TestProvider): KeycloakRealm => {
  if (!op.realm) throw new Error('the provider serves no realm');
  return op.realm;
};
const count = (realm: KeycloakRealm, call: string, since = 0) => realm.calls.slice(since).filter((c) => c === call).length;
/** The calls on realm roles (the list, a lookup, a creation) made since `since`. */
const roleCalls = (realm: KeycloakRealm, since: number) => realm.calls.slice(since).filter((c) => /^\w+ \/roles(\/|$)/.test(c));

async function providerToken(op: TestProvider, clientId: string, secret: string): Promise<string> {
  const { status, token } = await clientCredentialsToken(op.issuer, clientId, secret);
  if (!token) throw new Error(`the provider gave ${clientId} no token (${status})`);
  return token;
}

/**
 * Uses the roles at the provider through `svc`: a tenant made with roles gets its admin client there
 * with those realm roles mapped, and that client's token, from the provider, passes the role checks.
 */
async function expectRolesWork(svc: TestService, op: TestProvider, root: { id: string; secret: string }, tenantId: string) {
  const roles: Role[] = ['issuance:manage', 'clients:manage'];
  const rootToken = await providerToken(op, root.id, root.secret);
  const tenant = createdBody(await svc.raw('POST', '/api/tenant', { token: rootToken, body: { id: tenantId, name: tenantId, roles } }));
  const realm = realmOf(op);
  const account = realm.serviceAccountOf(realm.clientByClientId(tenant.client.clientId) as never);
  expect([...(account?.realmRoles ?? [])].sort()).toEqual([...roles].sort());
  const admin = await providerToken(op, tenant.client.clientId, tenant.client.secret);
  const configs = await svc.call('GET', '/api/issuer/credentials', { token: admin });
  expect(configs.status, configs.text).toBe(200);
}

/** start() on a fresh database of the suite's engine; what it threw (the test fails if it started). */
async function failedStart(op: TestProvider): Promise<Error> {
  const database = await freshDatabase();
  try {
    const env = {
      NODE_ENV: 'test',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      MASTER_SECRET: randomBytes(32).toString('base64url'),
      AUTH_CLIENT_ID: ROOT_ID,
      AUTH_CLIENT_SECRET: randomBytes(24).toString('base64url'),
      ...database.env,
      ...externalEnv(op),
    };
    const outcome = await start(env, () => {}).then(
      async (running) => {
        await running.close();
        return undefined;
      },
      (err: unknown) => err,
    );
    expect(outcome, 'the service started').toBeInstanceOf(StartUpError);
    return outcome as Error;
  } finally {
    await database.drop();
  }
}

describe('a new realm', () => {
  let ext: ExternalService;
  beforeAll(async () => {
    ext = await startExternalService();
  });
  afterAll(() => ext?.stop());

  it("gets the service's realm roles at start-up, each made once with its description, and they work", async () => {
    const realm = realmOf(ext.op);
    for (const role of ROLES) expect(realm.roles.get(role)?.description).toMatch(/^svc: /);
    // One list, then one creation per role; the realm's own roles are left as they were.
    expect(count(realm, 'GET /roles')).toBe(1);
    expect(count(realm, 'POST /roles')).toBe(ROLES.length);
    expect([...realm.roles.keys()].filter((name) => !(ROLES as readonly string[]).includes(name)).sort()).toEqual([
      `default-roles-${REALM}`,
      'offline_access',
      'uma_authorization',
    ]);
    await expectRolesWork(ext.svc, ext.op, { id: ROOT_ID, secret: ext.svc.rootSecret }, 'acme');
  });

  it('is read with one list call at the next start, whose ids serve the role mappings without a lookup', async () => {
    const realm = realmOf(ext.op);
    const ids = new Map([...realm.roles].map(([name, role]) => [name, role.id]));
    const before = realm.calls.length;
    const next = await startService(externalEnv(ext.op));
    try {
      expect(roleCalls(realm, before)).toEqual(['GET /roles']);
      await expectRolesWork(next, ext.op, { id: ROOT_ID, secret: next.rootSecret }, 'globex');
      expect(roleCalls(realm, before)).toEqual(['GET /roles']);
      expect(new Map([...realm.roles].map(([name, role]) => [name, role.id]))).toEqual(ids);
    } finally {
      await next.stop();
    }
  });
});

describe('a realm with some of the roles', () => {
  it('gets only the missing ones; those made by hand stay as they are', async () => {
    const op = await startOpenIdProvider({ realm: REALM, clients: [] });
    const realm = realmOf(op);
    const byHand = ['issuance:manage', 'tenants:manage', 'clients:manage'].map((name) => realm.addRole(name, 'made by hand'));
    const svc = await startService(externalEnv(op));
    try {
      expect(count(realm, 'GET /roles')).toBe(1);
      expect(count(realm, 'POST /roles')).toBe(ROLES.length - byHand.length);
      for (const role of byHand) expect(realm.roles.get(role.name)).toEqual(role);
      for (const role of ROLES.filter((r) => !byHand.some((made) => made.name === r))) {
        expect(realm.roles.get(role)?.description).toMatch(/^svc: /);
      }
      await expectRolesWork(svc, op, { id: ROOT_ID, secret: svc.rootSecret }, 'acme');
    } finally {
      await svc.stop();
      await op.stop();
    }
  });
});

describe('an admin client without the permission', () => {
  let op: TestProvider;
  beforeAll(async () => {
    op = await startOpenIdProvider({ realm: REALM, clients: [] });
  });
  afterAll(() => op?.stop());

  it('stops the start with exit code 69 and one line naming manage-realm when a role is missing, having made none', async () => {
    const realm = realmOf(op);
    realm.adminClientRoles = new Set(['manage-clients', 'manage-users', 'view-realm']);
    const err = await failedStart(op);
    expect((err as StartUpError).exitCode).toBe(69);
    expect(err.message).toBe(
      `OIDC_CLIENT_ID: the admin client '${ADMIN_CLIENT.clientId}' may not create realm roles at the identity provider: give it the realm-management role manage-realm`,
    );
    // Refused at the first role: no further attempts, and no role made.
    expect(count(realm, 'POST /roles')).toBe(1);
    expect(ROLES.filter((role) => realm.roles.has(role))).toEqual([]);
  });

  it('names a realm-management role when it may not even list the realm roles', async () => {
    const realm = realmOf(op);
    realm.adminClientRoles = new Set();
    const err = await failedStart(op);
    expect((err as StartUpError).exitCode).toBe(69);
    expect(err.message).toBe(
      `OIDC_CLIENT_ID: the admin client '${ADMIN_CLIENT.clientId}' may not list realm roles at the identity provider: give it a role of the realm-management client (view-realm)`,
    );
  });

  it('starts once the roles exist (made by hand), and needs manage-realm no more', async () => {
    const realm = realmOf(op);
    realm.adminClientRoles = new Set(['manage-clients', 'manage-users']);
    for (const role of ROLES) realm.addRole(role);
    const before = realm.calls.length;
    const svc = await startService(externalEnv(op));
    try {
      expect(roleCalls(realm, before)).toEqual(['GET /roles']);
      await expectRolesWork(svc, op, { id: ROOT_ID, secret: svc.rootSecret }, 'acme');
    } finally {
      await svc.stop();
    }
  });
});

describe('an admin API that does not answer', () => {
  it('stops the start with exit code 69 and one line naming OIDC_CLIENT_ID and the provider', async () => {
    const op = await startOpenIdProvider({ realm: REALM, clients: [] });
    op.adminApiDown(true);
    try {
      const err = await failedStart(op);
      expect((err as StartUpError).exitCode).toBe(69);
      expect(err.message).toMatch(
        /^OIDC_CLIENT_ID: the admin client 'svc-admin' could not make the service's roles at the identity provider: /,
      );
      expect(err.message).not.toContain('\n');
    } finally {
      await op.stop();
    }
  });
});

describe('two instances starting together', () => {
  it('both start, each role is made once (the other instance is answered 409), and the roles work on both', async () => {
    const op = await startOpenIdProvider({ realm: REALM, clients: [] });
    const realm = realmOf(op);
    // Both read the realm roles before either makes one: both find them all missing.
    realm.holdUntil('GET /roles', 2);
    // One database on PostgreSQL, as behind a load balancer; SQLite's file is one process's, so there
    // the second instance has its own. The second names a root client of its own: this test is about
    // the realm roles, not about two instances making one root client.
    const databases: TestDatabase[] = [await freshDatabase()];
    if (engine === 'sqlite') databases.push(await freshDatabase());
    const masterSecret = randomBytes(32).toString('base64url');
    const roots = [
      { id: ROOT_ID, secret: randomBytes(24).toString('base64url') },
      { id: `${ROOT_ID}-b`, secret: randomBytes(24).toString('base64url') },
    ];
    const shared = (index: number) => ({
      env: {
        MASTER_SECRET: masterSecret,
        AUTH_CLIENT_ID: roots[index]?.id as string,
        AUTH_CLIENT_SECRET: roots[index]?.secret as string,
        ...(databases[index] ?? databases[0])?.env,
      },
      rootSecret: roots[index]?.secret as string,
    });
    const started = await Promise.allSettled([0, 1].map((index) => startService(externalEnv(op), { besides: { shared: shared(index) } })));
    const instances = started.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    try {
      expect(started.map((outcome) => (outcome.status === 'rejected' ? String(outcome.reason) : 'started'))).toEqual([
        'started',
        'started',
      ]);
      expect(count(realm, 'GET /roles')).toBe(2);
      // Each instance tried every role; each role was made by one of them and answered 409 to the other.
      expect(count(realm, 'POST /roles')).toBe(2 * ROLES.length);
      for (const role of ROLES) expect(realm.roles.get(role)?.description).toMatch(/^svc: /);
      const [a, b] = instances as [TestService, TestService];
      await expectRolesWork(a, op, roots[0] as { id: string; secret: string }, 'acme');
      await expectRolesWork(b, op, roots[1] as { id: string; secret: string }, 'globex');
      if (engine === 'postgres') {
        // One database: the first instance's root client works on the second too.
        const rootToken = await providerToken(op, ROOT_ID, roots[0]?.secret as string);
        expect((await b.call('GET', '/api/tenant/acme', { token: rootToken })).status).toBe(200);
      }
    } finally {
      await Promise.all(instances.map((instance) => instance.stop()));
      await Promise.all(databases.map((database) => database.drop()));
      await op.stop();
    }
  });
});
