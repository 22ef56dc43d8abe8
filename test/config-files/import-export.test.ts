// Configuration as files: a folder imported at start-up (CONFIG_IMPORT) through the real services,
// idempotent on every later start, refused with the file and the field named; and the export of a
// tenant in the same layout, without secrets, which imports into a fresh service as the same thing.

import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClientSecret } from '../../src/issuance/settings/chained-as.js';
import { createSealer } from '../../src/platform/crypto/sealed.js';
import { EXIT_CODES, StartUpError } from '../../src/platform/lifecycle/start-up-errors.js';
import { engine } from '../support/database.js';
import { expectProblem, fieldsOf } from '../support/problems.js';
import { runUntilExit } from '../support/process.js';
import { startService, type TestService } from '../support/service.js';
import { removeFolders, writeFolder } from './support.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const PUBLIC_JWK = publicKey.export({ format: 'jwk' });
const PRIVATE_JWK = privateKey.export({ format: 'jwk' });

const APP_SECRET = 'app-secret-0123456789';
const OPS_SECRET = 'ops-secret-from-a-file-0123';
const CRM_KEY = 'crm-api-key-value';

const dcql = {
  credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:example:pid'] }, claims: [{ path: ['given_name'] }] }],
};

/** Every kind of file, for tenant acme. */
function acmeFiles(): Record<string, unknown> {
  return {
    'acme/tenant.json': {
      name: 'ACME',
      description: 'imported from files',
      statusListConfig: { bits: 2, capacity: 1000 },
      sessionConfig: { cleanupMode: 'anonymize' },
    },
    'acme/clients/acme-app.json': {
      roles: ['issuance:manage', 'issuance:offer', 'presentation:manage'],
      secret: { env: 'SVC_IMPORT_ACME_APP_SECRET' },
      allowedIssuanceConfigs: ['pid'],
    },
    'acme/clients/acme-ops.json': { roles: ['presentation:request'], secret: { file: '../ops-secret.txt' } },
    'acme/ops-secret.txt': `${OPS_SECRET}\n`,
    'acme/key-chains/imported.json': { usageType: 'attestation', privateJwk: { file: 'imported.pem' }, description: 'from a PEM file' },
    'acme/key-chains/imported.pem': PRIVATE_PEM,
    'acme/key-chains/signer.json': { usageType: 'attestation', type: 'standalone', description: 'signer', rotationIntervalDays: 30 },
    'acme/key-chains/default-access.json': { description: 'the access key, described by a file' },
    'acme/issuer.json': { batchSize: 3, display: [{ name: 'ACME issuer' }] },
    'acme/attribute-providers/crm.json': {
      name: 'CRM',
      url: 'https://crm.example.com/claims',
      auth: { type: 'header', header: { name: 'X-Api-Key', value: { env: 'SVC_IMPORT_ACME_CRM_KEY' } } },
    },
    'acme/webhook-endpoints/hook.json': { name: 'Hook', url: 'https://hooks.example.com/svc', auth: { type: 'none' } },
    'acme/credential-configs/pid.json': {
      $schema: '../../docs/config-files/credential-config.schema.json',
      config: { format: 'dc+sd-jwt', display: [{ name: 'PID' }] },
      vct: 'urn:example:pid',
      keyChainId: 'signer',
      attributeProviderId: 'crm',
      webhookEndpointId: 'hook',
      fields: [{ path: ['given_name'], type: 'string', defaultValue: 'Erika', disclosable: true }],
    },
    'acme/presentation-configs/age.json': { dcql_query: dcql, webhookEndpointId: 'hook', description: 'age check' },
    'acme/trust-lists/main.json': { entities: [{ type: 'internal', keyChainId: 'signer' }] },
  };
}

const acmeEnv = { SVC_IMPORT_ACME_APP_SECRET: APP_SECRET, SVC_IMPORT_ACME_CRM_KEY: CRM_KEY };

/** Every row of the tenant's configuration, and the size of the audit log: what an import may change. */
async function snapshot(service: TestService, tenantId: string) {
  const tables = [
    'clients',
    'key_chains',
    'issuer_settings',
    'attribute_providers',
    'webhook_endpoints',
    'credential_configs',
    'presentation_configs',
    'trust_lists',
    'trust_list_versions',
  ];
  const rows: Record<string, unknown> = {};
  for (const table of tables) {
    const result = await sql<Record<string, unknown>>`select * from ${sql.table(table)} where tenant_id = ${tenantId}`.execute(service.db);
    rows[table] = result.rows.map((row) => JSON.stringify(row)).sort();
  }
  rows.tenant = (await sql`select * from tenants where id = ${tenantId}`.execute(service.db)).rows;
  rows.audit = (await sql<{ n: number }>`select count(*) as n from audit_log`.execute(service.db)).rows[0]?.n;
  return rows;
}

describe('configuration files', () => {
  let base: TestService;
  let root: string;
  /** Starts an instance beside `base` (same database) that imports `dir`, and stops it again. */
  const importing = async (dir: string, env: Record<string, string> = {}) => {
    const instance = await startService({ CONFIG_IMPORT: dir, ...env }, { besides: base });
    await instance.stop();
  };
  const refusal = (dir: string, env: Record<string, string> = {}) =>
    startService({ CONFIG_IMPORT: dir, ...env }, { besides: base }).then(
      async (instance) => {
        await instance.stop();
        throw new Error('the import was expected to stop start-up');
      },
      (err: unknown) => err as StartUpError,
    );

  beforeAll(async () => {
    base = await startService();
    root = await base.rootToken();
  });
  afterAll(async () => {
    await base?.stop();
    removeFolders();
  });

  describe('import', () => {
    let dir: string;
    let app: string;
    beforeAll(async () => {
      dir = writeFolder(acmeFiles());
      await importing(dir, acmeEnv);
      app = await base.token('acme-app', APP_SECRET);
    });

    it('creates the tenant and each object its files describe, with secrets from the environment and from files', async () => {
      const tenant = await base.call('GET', '/api/tenant/acme', { token: root });
      expect(tenant.body).toMatchObject({
        id: 'acme',
        name: 'ACME',
        description: 'imported from files',
        status: 'active',
        statusListConfig: { bits: 2, capacity: 1000 },
        sessionConfig: { cleanupMode: 'anonymize' },
      });
      expect(tenant.body.clients.map((c: { clientId: string }) => c.clientId).sort()).toEqual(['acme-app', 'acme-ops']);
      await expect(base.token('acme-ops', OPS_SECRET)).resolves.toEqual(expect.any(String));
      expect((await base.call('GET', '/api/client/acme-app', { token: root })).body).toMatchObject({
        tenantId: 'acme',
        allowedIssuanceConfigs: ['pid'],
      });

      const chains = (await base.call('GET', '/api/key-chain', { token: app })).body as Record<string, any>[];
      const byId = Object.fromEntries(chains.map((chain) => [chain.id, chain]));
      expect(byId.imported).toMatchObject({ type: 'imported', usageType: 'attestation', description: 'from a PEM file' });
      expect(byId.imported.activeJwk).toMatchObject({ x: PUBLIC_JWK.x, y: PUBLIC_JWK.y });
      expect(byId.signer).toMatchObject({ type: 'standalone', rotationIntervalDays: 30, default: false });
      expect(byId['default-access']).toMatchObject({ description: 'the access key, described by a file', default: true });

      expect((await base.call('GET', '/api/issuer/config', { token: app })).body).toMatchObject({
        batchSize: 3,
        display: [{ name: 'ACME issuer' }],
      });
      const crm = await base.call('GET', '/api/issuer/attribute-providers/crm', { token: app });
      expect(crm.body.auth).toEqual({ type: 'header', header: { name: 'X-Api-Key', value: '****' } });
      expect((await base.running.services.attributeProviders.resolve('acme', 'crm')).headers).toEqual({ 'X-Api-Key': CRM_KEY });
      expect((await base.call('GET', '/api/issuer/credentials/pid', { token: app })).body).toMatchObject({
        keyChainId: 'signer',
        attributeProviderId: 'crm',
        webhookEndpointId: 'hook',
        fields: [{ path: ['given_name'], defaultValue: 'Erika' }],
      });
      expect((await base.call('GET', '/api/verifier/config/age', { token: app })).body).toMatchObject({
        dcql_query: dcql,
        webhookEndpointId: 'hook',
        lifeTime: 300,
      });
      expect((await base.call('GET', '/api/trust-list/main', { token: app })).body).toMatchObject({
        sequenceNumber: 1,
        keyChainId: 'default-trustList',
      });

      const audit = (await base.call('GET', '/api/admin/audit-logs?limit=100', { token: app })).body as Record<string, unknown>[];
      expect(audit.find((entry) => entry.actionType === 'credential_config.created')).toMatchObject({
        actorType: 'system',
        actorId: 'system:config-import',
      });
    });

    it('writes nothing on a second start with the same folder', async () => {
      const before = await snapshot(base, 'acme');
      await importing(dir, acmeEnv);
      expect(await snapshot(base, 'acme')).toEqual(before);
    });

    it('updates what a changed file describes, resets what a file leaves out, and leaves the rest alone', async () => {
      const files = acmeFiles();
      const pid = files['acme/credential-configs/pid.json'] as Record<string, unknown>;
      files['acme/credential-configs/pid.json'] = { ...pid, description: 'changed', keyBinding: false };
      const { description: _d, ...tenant } = files['acme/tenant.json'] as Record<string, unknown>;
      files['acme/tenant.json'] = { ...tenant, statusListConfig: { bits: 4 } };
      const changed = writeFolder(files);
      const before = await snapshot(base, 'acme');

      await importing(changed, { ...acmeEnv, SVC_IMPORT_ACME_APP_SECRET: 'a-new-app-secret-0123456789' });

      // A replaced secret ends the tokens issued under the old one, as rotate-secret does (the import
      // ran on another instance: this one learns of it within a second).
      await expect.poll(async () => (await base.call('GET', '/api/issuer/credentials/pid', { token: app })).status).toBe(401);
      await expect(base.token('acme-app', APP_SECRET)).rejects.toThrow(/401/);
      app = await base.token('acme-app', 'a-new-app-secret-0123456789');
      expect((await base.call('GET', '/api/issuer/credentials/pid', { token: app })).body).toMatchObject({
        description: 'changed',
        keyBinding: false,
      });
      expect((await base.call('GET', '/api/tenant/acme', { token: root })).body).toMatchObject({
        description: null,
        statusListConfig: { bits: 4 },
      });
      const after = await snapshot(base, 'acme');
      for (const table of ['key_chains', 'attribute_providers', 'webhook_endpoints', 'presentation_configs', 'trust_lists']) {
        expect(after[table], table).toEqual(before[table]);
      }
      expect(after.credential_configs).not.toEqual(before.credential_configs);
      await importing(dir, acmeEnv); // back to the first folder, for the tests below
      app = await base.token('acme-app', APP_SECRET);
    });

    it('exports the tenant in the same layout without any secret', async () => {
      const reply = await base.raw('GET', '/api/config/export?tenantId=acme', { token: root });
      expect(reply.status, reply.text).toBe(200);
      expect(Object.keys(reply.body.files).sort()).toEqual(
        [
          'acme/tenant.json',
          'acme/issuer.json',
          'acme/trust.json',
          'acme/clients/acme-app.json',
          'acme/clients/acme-ops.json',
          ...[
            'default-access',
            'default-attestation',
            'default-encrypt',
            'default-statusList',
            'default-trustList',
            'imported',
            'signer',
          ].map((id) => `acme/key-chains/${id}.json`),
          'acme/attribute-providers/crm.json',
          'acme/webhook-endpoints/hook.json',
          'acme/credential-configs/pid.json',
          'acme/presentation-configs/age.json',
          'acme/trust-lists/main.json',
        ].sort(),
      );
      // The trust settings are their own file; issuer.json leaves out their alias.
      expect(reply.body.files['acme/trust.json']).toEqual({ federation: null, etsiTrustedLists: null });
      expect(reply.body.files['acme/issuer.json']).not.toHaveProperty('federation');
      for (const secret of [APP_SECRET, OPS_SECRET, CRM_KEY, PRIVATE_JWK.d as string, 'PRIVATE KEY']) {
        expect(reply.text).not.toContain(secret);
      }
      expect(reply.body.files['acme/clients/acme-app.json'].secret).toEqual({ env: 'SVC_IMPORT_ACME_CLIENT_ACME_APP_SECRET' });
      expect(reply.body.files['acme/key-chains/imported.json'].privateJwk).toEqual({ env: 'SVC_IMPORT_ACME_KEY_IMPORTED_PRIVATE_JWK' });
      expect(reply.body.files['acme/attribute-providers/crm.json'].auth.header.value).toEqual({
        env: 'SVC_IMPORT_ACME_ATTRIBUTE_PROVIDER_CRM_HEADER',
      });
      expect(reply.body.environment.sort()).toEqual([
        'SVC_IMPORT_ACME_ATTRIBUTE_PROVIDER_CRM_HEADER',
        'SVC_IMPORT_ACME_CLIENT_ACME_APP_SECRET',
        'SVC_IMPORT_ACME_CLIENT_ACME_OPS_SECRET',
        'SVC_IMPORT_ACME_KEY_IMPORTED_PRIVATE_JWK',
      ]);
    });

    it('imports the export into a fresh service as the same configuration (generated keys aside)', async () => {
      const exported = (await base.call('GET', '/api/config/export?tenantId=acme', { token: root })).body;
      const fresh = await startService({
        CONFIG_IMPORT: writeFolder(exported.files),
        SVC_IMPORT_ACME_CLIENT_ACME_APP_SECRET: APP_SECRET,
        SVC_IMPORT_ACME_CLIENT_ACME_OPS_SECRET: OPS_SECRET,
        SVC_IMPORT_ACME_ATTRIBUTE_PROVIDER_CRM_HEADER: CRM_KEY,
        SVC_IMPORT_ACME_KEY_IMPORTED_PRIVATE_JWK: JSON.stringify(PRIVATE_JWK),
      });
      try {
        const again = await fresh.call('GET', '/api/config/export?tenantId=acme', { token: await fresh.rootToken() });
        expect(again.body).toEqual(exported);
        await expect(fresh.token('acme-ops', OPS_SECRET)).resolves.toEqual(expect.any(String));
        expect((await fresh.running.services.attributeProviders.resolve('acme', 'crm')).headers).toEqual({ 'X-Api-Key': CRM_KEY });
      } finally {
        await fresh.stop();
      }
    });

    it('downloads the export as a tar of the import folder, which the system tar extracts and a fresh service imports', async () => {
      const reply = await fetch(`${base.running.url}/api/config/export?tenantId=acme&format=tar`, {
        headers: { authorization: `Bearer ${root}` },
      });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toBe('application/x-tar');
      expect(reply.headers.get('content-disposition')).toBe('attachment; filename="acme-config.tar"');
      const archive = Buffer.from(await reply.arrayBuffer());
      for (const secret of [APP_SECRET, OPS_SECRET, CRM_KEY, PRIVATE_JWK.d as string, 'PRIVATE KEY']) {
        expect(archive.includes(secret), secret).toBe(false);
      }
      const folder = mkdtempSync(join(tmpdir(), 'svc-config-tar-'));
      writeFileSync(join(folder, 'acme-config.tar'), archive);
      const dir = join(folder, 'import');
      mkdirSync(dir);
      execFileSync('tar', ['-xf', join(folder, 'acme-config.tar'), '-C', dir]);

      // Every file of the JSON export, at the same path with the same content, and the variables named.
      const exported = (await base.call('GET', '/api/config/export?tenantId=acme', { token: root })).body;
      for (const [path, content] of Object.entries(exported.files)) {
        expect(JSON.parse(readFileSync(join(dir, path), 'utf8')), path).toEqual(content);
      }
      const environment = readFileSync(join(dir, 'acme/environment.txt'), 'utf8')
        .split('\n')
        .filter((line) => line && !line.startsWith('#'));
      expect(environment.sort()).toEqual([...exported.environment].sort());

      const fresh = await startService({
        CONFIG_IMPORT: dir,
        SVC_IMPORT_ACME_CLIENT_ACME_APP_SECRET: APP_SECRET,
        SVC_IMPORT_ACME_CLIENT_ACME_OPS_SECRET: OPS_SECRET,
        SVC_IMPORT_ACME_ATTRIBUTE_PROVIDER_CRM_HEADER: CRM_KEY,
        SVC_IMPORT_ACME_KEY_IMPORTED_PRIVATE_JWK: JSON.stringify(PRIVATE_JWK),
      });
      try {
        const freshApp = await fresh.token('acme-app', APP_SECRET);
        expect((await fresh.call('GET', '/api/issuer/credentials/pid', { token: freshApp })).body).toMatchObject({
          vct: 'urn:example:pid',
          keyChainId: 'signer',
        });
        expect((await fresh.call('GET', '/api/tenant/acme', { token: await fresh.rootToken() })).body).toMatchObject({ name: 'ACME' });
        const again = await fresh.call('GET', '/api/config/export?tenantId=acme', { token: await fresh.rootToken() });
        expect(again.body).toEqual(exported);
      } finally {
        await fresh.stop();
        rmSync(folder, { recursive: true, force: true });
      }
    });

    it('refuses an export format it does not know, naming the field', async () => {
      const reply = await base.raw('GET', '/api/config/export?tenantId=acme&format=zip', { token: root });
      expectProblem(reply, 400);
      expect(fieldsOf(reply)).toEqual(['query.format']);
    });

    it('answers the export only to tenants:manage, naming a missing or unknown tenant', async () => {
      expectProblem(await base.call('GET', '/api/config/export?tenantId=acme', { token: app }), 403);
      const missing = await base.call('GET', '/api/config/export', { token: root });
      expectProblem(missing, 400);
      expect(fieldsOf(missing)).toEqual(['query.tenantId']);
      expectProblem(await base.call('GET', '/api/config/export?tenantId=nobody', { token: root }), 404);
    });
  });

  it('stops start-up at a version-4 credential configuration, naming each legacy key and its replacement, and writes nothing', async () => {
    const dir = writeFolder({
      'legacy/tenant.json': { name: 'Legacy' },
      'legacy/credential-configs/pid.json': {
        config: { format: 'dc+sd-jwt' },
        claims: { given_name: 'Erika' },
        disclosureFrame: { _sd: ['given_name'] },
      },
    });
    const err = await refusal(dir);
    expect(err).toBeInstanceOf(StartUpError);
    expect(err.exitCode).toBe(EXIT_CODES.configImport);
    expect(err.message).toContain('legacy/credential-configs/pid.json: ');
    expect(err.message).toContain('claims: removed in version 5: use fields[].defaultValue');
    expect(err.message).toContain('disclosureFrame: removed in version 5: use fields[].disclosable');
    expect(err.message).toContain('npm run convert-v4');
    expectProblem(await base.call('GET', '/api/tenant/legacy', { token: root }), 404);
  });

  it('names a version-4 folder (tenant folders without tenant.json) as such, with the converter to run, and writes nothing', async () => {
    const dir = writeFolder({
      'legacy/credential-configs/pid.json': { config: { format: 'dc+sd-jwt' }, vct: 'urn:example:pid', claims: { given_name: 'Erika' } },
      'legacy/credential-configs/notes.json': 'not JSON',
      'plain/credential-configs/pid.json': { config: { format: 'dc+sd-jwt' }, fields: [] },
    });
    const err = await refusal(dir);
    expect(err.exitCode).toBe(EXIT_CODES.configImport);
    expect(err.message).toContain(
      `legacy: a version-4 folder (no tenant.json; version-4 credential configurations: credential-configs/pid.json): \`npm run convert-v4 -- ${dir} --out <new folder>\``,
    );
    expect(err.message).not.toContain('legacy/tenant.json: missing');
    // A folder without tenant.json whose files are of this version is simply missing the file.
    expect(err.message).toContain('plain/tenant.json: missing');
    expectProblem(await base.call('GET', '/api/tenant/legacy', { token: root }), 404);
  });

  it('names the file and the field of every invalid file before writing anything', async () => {
    const dir = writeFolder({
      'beta/tenant.json': { name: 'Beta' },
      'beta/clients/short.json': { roles: ['issuance:manage'], secret: 'short' },
      'beta/clients/unset.json': { roles: ['issuance:manage'], secret: { env: 'SVC_IMPORT_BETA_UNSET_SECRET' } },
      'beta/clients/renamed.json': { clientId: 'other', roles: ['issuance:manage'], secret: APP_SECRET },
      'beta/webhook-endpoints/hook.json': { name: 'Hook', url: 'ftp://example.com', auth: { type: 'none' }, extra: 1 },
      'beta/credentials/pid.json': {},
      'gamma/issuer.json': { batchSize: 3 },
    });
    const err = await refusal(dir);
    expect(err.exitCode).toBe(EXIT_CODES.configImport);
    expect(err.message).toMatch(/beta\/clients\/short\.json: secret: [^;]*16/);
    expect(err.message).toContain('beta/clients/unset.json: secret: environment variable SVC_IMPORT_BETA_UNSET_SECRET is not set');
    expect(err.message).toContain('beta/clients/renamed.json: clientId: is "other", but the file is named for \'renamed\'');
    expect(err.message).toMatch(/beta\/webhook-endpoints\/hook\.json: url: [^;]*http[^;]*; extra: unknown field/);
    expect(err.message).toContain('beta/credentials: not part of the layout');
    expect(err.message).toContain('gamma/tenant.json: missing');
    expect(err.message).not.toContain('\n');
    expectProblem(await base.call('GET', '/api/tenant/beta', { token: root }), 404);
  });

  it("rolls back the whole tenant when the service refuses one of its files, naming that file's field", async () => {
    const dir = writeFolder({
      'delta/tenant.json': { name: 'Delta' },
      'delta/clients/delta-app.json': { roles: ['issuance:manage'], secret: APP_SECRET },
      'delta/key-chains/signer.json': { usageType: 'attestation', type: 'standalone' },
      'delta/credential-configs/pid.json': { config: { format: 'dc+sd-jwt' }, keyChainId: 'missing', fields: [] },
    });
    const err = await refusal(dir);
    expect(err.message).toBe(`CONFIG_IMPORT ${dir}: delta/credential-configs/pid.json: keyChainId: key chain 'missing' does not exist`);
    expectProblem(await base.call('GET', '/api/tenant/delta', { token: root }), 404);
    await expect(base.token('delta-app', APP_SECRET)).rejects.toThrow(/401/);
  });

  it('takes a presentation configuration trusting federation anchors with the federation settings of its folder, and refuses one without', async () => {
    const trusted_authorities = [{ type: 'openid_federation', values: ['https://anchor.example.eu'] }];
    const federationQuery = { credentials: [{ ...dcql.credentials[0], trusted_authorities }] };
    const without = writeFolder({
      'zeta/tenant.json': { name: 'Zeta' },
      'zeta/presentation-configs/fed.json': { dcql_query: federationQuery },
    });
    const err = await refusal(without);
    expect(err.message).toContain(
      "zeta/presentation-configs/fed.json: dcql_query.credentials.0.trusted_authorities.0.type: openid_federation needs the tenant's federation settings",
    );
    expectProblem(await base.call('GET', '/api/tenant/zeta', { token: root }), 404);
    // issuer.json is imported before the presentation configurations, in the same transaction: they see its settings.
    const withSettings = writeFolder({
      'eta/tenant.json': { name: 'Eta' },
      'eta/issuer.json': { federation: { role: 'leaf', trustAnchors: [{ entityId: 'https://anchor.example.eu' }] } },
      'eta/presentation-configs/fed.json': { dcql_query: federationQuery },
    });
    await importing(withSettings);
    const stored = await base.db
      .selectFrom('presentation_configs')
      .select('document')
      .where('tenant_id', '=', 'eta')
      .where('id', '=', 'fed')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(stored.document).dcql_query).toEqual(federationQuery);
  });

  it('imports the trust settings of trust.json, issuer.json keeping what they set, and refuses federation in both files', async () => {
    const federation = { role: 'leaf', trustAnchors: [{ entityId: 'https://anchor.example.eu' }] };
    await importing(
      writeFolder({ 'iota/tenant.json': { name: 'Iota' }, 'iota/issuer.json': { batchSize: 3 }, 'iota/trust.json': { federation } }),
    );
    const exported = (await base.call('GET', '/api/config/export?tenantId=iota', { token: root })).body.files;
    expect(exported['iota/trust.json']?.federation).toMatchObject(federation);
    expect(exported['iota/issuer.json']).toMatchObject({ batchSize: 3 });

    const both = writeFolder({
      'kappa/tenant.json': { name: 'Kappa' },
      'kappa/issuer.json': { federation },
      'kappa/trust.json': { federation },
    });
    const err = await refusal(both);
    expect(err.message).toContain('kappa/issuer.json: federation: the trust settings are in trust.json: leave federation out here');
    expectProblem(await base.call('GET', '/api/tenant/kappa', { token: root }), 404);
  });

  it('imports a tenant in the haip-1.0 profile, its CA-issued defaults made first, and refuses a file that breaks the profile', async () => {
    const haipFiles = (pid: Record<string, unknown>) => ({
      'theta/tenant.json': { name: 'Theta' },
      'theta/key-chains/status-ca.json': { usageType: 'statusList', type: 'internalChain', default: true },
      'theta/key-chains/access-ca.json': { usageType: 'access', type: 'internalChain', default: true },
      'theta/issuer.json': { profile: 'haip-1.0', dpopRequired: true, walletAttestationRequired: true },
      'theta/credential-configs/pid.json': pid,
      'theta/presentation-configs/check.json': { dcql_query: dcql },
    });
    const conforming = { config: { format: 'dc+sd-jwt', keyAttestationsRequired: {} }, fields: [], statusManagement: true };
    const err = await refusal(writeFolder(haipFiles({ ...conforming, statusManagement: false })));
    expect(err.message).toContain('theta/credential-configs/pid.json: lifeTime: HAIP 1.0 section 6.1 (sd-jwt-exp-or-status:');
    expectProblem(await base.call('GET', '/api/tenant/theta', { token: root }), 404);
    await importing(writeFolder(haipFiles(conforming)));
    const settings = await base.db
      .selectFrom('issuer_settings')
      .select('document')
      .where('tenant_id', '=', 'theta')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(settings.document).profile).toBe('haip-1.0');
    const configs = await base.db.selectFrom('credential_configs').select('id').where('tenant_id', '=', 'theta').execute();
    expect(configs.map((c) => c.id)).toEqual(['pid']);
  });

  it('refuses a key chain file that would change what the existing chain is', async () => {
    const dir = writeFolder({
      'epsilon/tenant.json': { name: 'Epsilon' },
      'epsilon/key-chains/default-attestation.json': { usageType: 'attestation', type: 'internalChain', algorithm: 'ES384' },
    });
    const err = await refusal(dir);
    expect(err.message).toContain(
      'epsilon/key-chains/default-attestation.json: algorithm: cannot change on the existing key chain \'default-attestation\' (it is "ES256")',
    );
  });

  it('takes a file asking for a standalone chain where the chain is CA-issued (a default, or one moved under a CA), changing nothing', async () => {
    // As a folder exported before the defaults were CA-issued has it.
    const dir = writeFolder({
      'theta/tenant.json': { name: 'Theta' },
      'theta/key-chains/default-access.json': { usageType: 'access', type: 'standalone', default: true },
    });
    await importing(dir);
    await importing(dir); // and again, as at every start
    const chain = await base.db
      .selectFrom('key_chains')
      .select(['chain_type', 'root_certificate'])
      .where('tenant_id', '=', 'theta')
      .where('id', '=', 'default-access')
      .executeTakeFirstOrThrow();
    expect(chain.chain_type).toBe('internalChain');
    expect(chain.root_certificate).toContain('BEGIN CERTIFICATE');
  });

  it("takes the chained authorization server's clientSecret in issuer.json from the environment or a file, sealed when stored", async () => {
    const issuerFile = (clientSecret: unknown) => ({
      chainedAuthorizationServer: { issuer: 'https://login.example.com', clientId: 'svc', clientSecret },
    });
    const files = {
      'zeta/tenant.json': { name: 'Zeta' },
      'zeta/clients/zeta-app.json': { roles: ['issuance:manage'], secret: APP_SECRET },
      'zeta/issuer.json': issuerFile({ env: 'SVC_IMPORT_ZETA_UPSTREAM_SECRET' }),
    };
    const dir = writeFolder(files);
    const unset = await refusal(dir);
    expect(unset.exitCode).toBe(EXIT_CODES.configImport);
    expect(unset.message).toBe(
      `CONFIG_IMPORT ${dir}: zeta/issuer.json: chainedAuthorizationServer.clientSecret: environment variable SVC_IMPORT_ZETA_UPSTREAM_SECRET is not set`,
    );
    expectProblem(await base.call('GET', '/api/tenant/zeta', { token: root }), 404);

    await importing(dir, { SVC_IMPORT_ZETA_UPSTREAM_SECRET: 'upstream-secret-1' });
    const token = await base.token('zeta-app', APP_SECRET);
    const shown = (await base.call('GET', '/api/issuer/config', { token })).body.chainedAuthorizationServer;
    expect(shown).toMatchObject({ issuer: 'https://login.example.com', clientId: 'svc', clientSecretSet: true });
    expect(shown).not.toHaveProperty('clientSecret');
    const sealer = createSealer(base.shared.env.MASTER_SECRET as string, 'issuer-settings-secrets');
    const stored = async () => {
      const row = await sql<{ document: string }>`select document from issuer_settings where tenant_id = ${'zeta'}`.execute(base.db);
      const settings = JSON.parse(row.rows[0]?.document as string);
      return { sealed: settings.chainedAuthorizationServer.clientSecret as string, settings };
    };
    expect((await stored()).sealed).not.toContain('upstream-secret-1');
    expect(openClientSecret(sealer, 'zeta', (await stored()).settings.chainedAuthorizationServer)).toBe('upstream-secret-1');

    // The same secret again writes nothing (sealing is randomized: it is compared in the clear).
    const before = await snapshot(base, 'zeta');
    await importing(dir, { SVC_IMPORT_ZETA_UPSTREAM_SECRET: 'upstream-secret-1' });
    expect(await snapshot(base, 'zeta')).toEqual(before);

    // Another secret, from a file beside issuer.json, replaces it; a missing file is refused naming the field.
    writeFolder(
      { 'zeta/issuer.json': issuerFile({ file: 'upstream-secret.txt' }), 'zeta/upstream-secret.txt': 'upstream-secret-2\n' },
      dir,
    );
    await importing(dir);
    expect(openClientSecret(sealer, 'zeta', (await stored()).settings.chainedAuthorizationServer)).toBe('upstream-secret-2');
    writeFolder({ 'zeta/issuer.json': issuerFile({ file: 'missing.txt' }) }, dir);
    expect((await refusal(dir)).message).toBe(
      `CONFIG_IMPORT ${dir}: zeta/issuer.json: chainedAuthorizationServer.clientSecret: cannot read file missing.txt: ENOENT`,
    );
  });

  // SQLite serves one instance; several instances share PostgreSQL.
  it.skipIf(engine !== 'postgres')('lets instances that start at once with the same folder import it once', async () => {
    const dir = writeFolder({
      'twin/tenant.json': { name: 'Twin' },
      'twin/clients/twin-app.json': { roles: ['issuance:manage'], secret: APP_SECRET },
      'twin/key-chains/signer.json': { usageType: 'attestation', type: 'standalone' },
    });
    await Promise.all([importing(dir), importing(dir)]);
    const tenant = await base.call('GET', '/api/tenant/twin', { token: root });
    expect(tenant.body.clients.map((c: { clientId: string }) => c.clientId)).toEqual(['twin-app']);
    const token = await base.token('twin-app', APP_SECRET);
    const chains = (await base.call('GET', '/api/key-chain', { token })).body as { id: string }[];
    expect(chains.filter((chain) => chain.id === 'signer')).toHaveLength(1);
  });
});

describe('npm start with CONFIG_IMPORT', () => {
  it('stops with one line and exit code 65 when a file cannot be imported', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-config-start-'));
    const dir = writeFolder({ 'acme/tenant.json': { name: 'ACME', claims: {} } });
    const { code, output } = await runUntilExit({ DATA_DIR: dataDir, PORT: '0', CONFIG_IMPORT: dir, LOG_LEVEL: 'warn' });
    expect(code).toBe(65);
    expect(output.trim().split('\n').at(-1)).toBe(`svc: CONFIG_IMPORT ${dir}: acme/tenant.json: claims: unknown field(s)`);
    expect(output).not.toMatch(/^\s+at /m);
    expect(readFileSync(join(dir, 'acme/tenant.json'), 'utf8')).toContain('claims');
  });
});
