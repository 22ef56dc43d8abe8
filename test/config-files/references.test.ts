// How far the {"env"} and {"file"} references of CONFIG_IMPORT files reach. A file decides where a
// value goes (a webhook header is sent to the URL the same file names), so a reference must read only
// what the operator set aside for the import: environment variables named SVC_IMPORT_* or listed in
// CONFIG_IMPORT_ENV_ALLOW, never the service's own secrets; files inside the referencing tenant's
// own folder once links are followed, never another tenant's.
import { symlinkSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { EXIT_CODES, StartUpError } from '../../src/platform/lifecycle/start-up-errors.js';
import { expectProblem } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';
import { removeFolders, writeFolder } from './support.js';

const APP_SECRET = 'app-secret-0123456789';
const HOOK_TOKEN = 'Bearer hook-token-from-the-allow-list';

let base: TestService;
let root: string;
let receiver: Server;
let hookUrl: string;
const deliveries: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  base = await startService();
  root = await base.rootToken();
  receiver = createServer((req, res) => {
    deliveries.push(req.headers);
    req.resume().on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
});
afterAll(async () => {
  await base?.stop();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  removeFolders();
});

/** Starts an instance beside `base` (same database) that imports `dir`, and stops it again. */
async function importing(dir: string, env: Record<string, string> = {}) {
  const instance = await startService({ CONFIG_IMPORT: dir, ...env }, { besides: base });
  await instance.stop();
}

/** The error that stopped an instance from starting with `dir` imported. */
function refusal(dir: string, env: Record<string, string> = {}): Promise<Error> {
  return startService({ CONFIG_IMPORT: dir, ...env }, { besides: base }).then(
    async (instance) => {
      await instance.stop();
      throw new Error('the import was expected to stop start-up');
    },
    (err: unknown) => err as Error,
  );
}

/** A tenant whose webhook endpoint sends the referenced value as its Authorization header. */
function tenantWithHook(id: string, headerValue: unknown, extra: Record<string, unknown> = {}) {
  return {
    [`${id}/tenant.json`]: { name: id },
    [`${id}/clients/${id}-app.json`]: { roles: ['issuance:manage', 'issuance:offer'], secret: APP_SECRET },
    [`${id}/webhook-endpoints/hook.json`]: {
      name: 'Hook',
      url: hookUrl,
      auth: { type: 'header', header: { name: 'Authorization', value: headerValue } },
    },
    ...extra,
  };
}

describe('{"env"} references', () => {
  it('refuses a variable that is neither SVC_IMPORT_* nor listed, naming the file, the field and the rule; writes nothing', async () => {
    const dir = writeFolder(tenantWithHook('envout', { env: 'ACME_HOOK_TOKEN' }));
    const err = await refusal(dir, { ACME_HOOK_TOKEN: HOOK_TOKEN });
    expect(err).toBeInstanceOf(StartUpError);
    expect((err as StartUpError).exitCode).toBe(EXIT_CODES.configImport);
    expect(err.message).toBe(
      `CONFIG_IMPORT ${dir}: envout/webhook-endpoints/hook.json: auth.header.value: environment variable ACME_HOOK_TOKEN may not be referenced: only names starting with SVC_IMPORT_ and those listed in CONFIG_IMPORT_ENV_ALLOW`,
    );
    expectProblem(await base.call('GET', '/api/tenant/envout', { token: root }), 404);
  });

  it("never reads the service's own secrets, set or not", async () => {
    const secrets = ['MASTER_SECRET', 'AUTH_CLIENT_SECRET', 'DB_PASSWORD', 'DATABASE_URL', 'OIDC_CLIENT_SECRET', 'METRICS_TOKEN'];
    const files = Object.assign(
      {},
      ...secrets.map((name) => tenantWithHook(`leak-${name.toLowerCase().replaceAll('_', '-')}`, { env: name })),
    );
    const dir = writeFolder(files);
    const err = await refusal(dir);
    expect((err as StartUpError).exitCode).toBe(EXIT_CODES.configImport);
    for (const name of secrets) {
      expect(err.message).toContain(
        `leak-${name.toLowerCase().replaceAll('_', '-')}/webhook-endpoints/hook.json: auth.header.value: environment variable ${name} is a secret of the service and is never imported`,
      );
    }
    expect(err.message).not.toContain(base.shared.env.MASTER_SECRET);
    expect(deliveries).toEqual([]);
  });

  it('refuses to start when CONFIG_IMPORT_ENV_ALLOW lists a secret of the service: listing it cannot make it readable', async () => {
    const dir = writeFolder(tenantWithHook('listed', { env: 'MASTER_SECRET' }));
    for (const allow of ['MASTER_SECRET', 'ACME_HOOK_TOKEN, AUTH_CLIENT_SECRET', 'DB_PASSWORD,DATABASE_URL']) {
      const err = await refusal(dir, { CONFIG_IMPORT_ENV_ALLOW: allow });
      expect(err, allow).toBeInstanceOf(ConfigError);
      const named = allow
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== 'ACME_HOOK_TOKEN');
      expect((err as ConfigError).problems, allow).toEqual([
        `CONFIG_IMPORT_ENV_ALLOW: ${named.join(', ')}: a secret of the service, never readable by configuration files`,
      ]);
    }
    const malformed = await refusal(dir, { CONFIG_IMPORT_ENV_ALLOW: 'A B' });
    expect((malformed as ConfigError).problems).toEqual([
      'CONFIG_IMPORT_ENV_ALLOW: must be environment variable names separated by commas (got "A B")',
    ]);
    expectProblem(await base.call('GET', '/api/tenant/listed', { token: root }), 404);
  });

  it('takes a listed variable and an SVC_IMPORT_ one: their values are the client secret and the header the webhook sends', async () => {
    const files = tenantWithHook(
      'envin',
      { env: 'ACME_HOOK_TOKEN' },
      {
        'envin/clients/envin-app.json': { roles: ['issuance:manage', 'issuance:offer'], secret: { env: 'SVC_IMPORT_ENVIN_APP_SECRET' } },
        'envin/credential-configs/pid.json': {
          config: { format: 'dc+sd-jwt' },
          vct: 'urn:example:pid',
          webhookEndpointId: 'hook',
          fields: [{ path: ['given_name'], type: 'string' }],
        },
      },
    );
    await importing(writeFolder(files), {
      CONFIG_IMPORT_ENV_ALLOW: 'OTHER_NAME, ACME_HOOK_TOKEN',
      ACME_HOOK_TOKEN: HOOK_TOKEN,
      SVC_IMPORT_ENVIN_APP_SECRET: APP_SECRET,
    });
    const token = await base.token('envin-app', APP_SECRET);
    const offered = await base.raw('POST', '/api/issuer/offer', {
      token,
      body: {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['pid'],
        credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika' } } },
      },
    });
    expect(offered.status, offered.text).toBe(201);
    // The wallet fetching the offer is a status change, which the webhook endpoint is told of.
    const offerUri = new URL(decodeURIComponent(offered.body.uri.split('credential_offer_uri=')[1]));
    expect((await base.raw('GET', offerUri.pathname)).status).toBe(200);
    await expect.poll(() => deliveries.map((headers) => headers.authorization), { timeout: 5000 }).toContain(HOOK_TOKEN);
  });
});

describe('{"file"} references', () => {
  /** acme and beta, each with a secret file; `acmeClient` is the secret reference of acme's client. */
  function twoTenants(acmeClient: unknown) {
    return writeFolder({
      'acme/tenant.json': { name: 'ACME' },
      'acme/clients/acme-app.json': { roles: ['issuance:manage'], secret: acmeClient },
      'acme/app-secret.txt': `${APP_SECRET}\n`,
      'beta/tenant.json': { name: 'Beta' },
      'beta/clients/beta-app.json': { roles: ['issuance:manage'], secret: { file: '../secret.txt' } },
      'beta/secret.txt': 'beta-secret-0123456789\n',
    });
  }

  it("refuses a file of another tenant's folder, by path or by link, naming the reference and the tenant; writes nothing", async () => {
    const byPath = twoTenants({ file: '../../beta/secret.txt' });
    const err = await refusal(byPath);
    expect((err as StartUpError).exitCode).toBe(EXIT_CODES.configImport);
    expect(err.message).toBe(
      `CONFIG_IMPORT ${byPath}: acme/clients/acme-app.json: secret: file ../../beta/secret.txt is outside the folder of tenant 'acme' (links followed): a file may name only files in its own tenant's folder`,
    );

    const byLink = twoTenants({ file: '../beta-secret.txt' });
    symlinkSync(join(byLink, 'beta/secret.txt'), join(byLink, 'acme/beta-secret.txt'));
    expect((await refusal(byLink)).message).toContain(
      "acme/clients/acme-app.json: secret: file ../beta-secret.txt is outside the folder of tenant 'acme'",
    );
    for (const tenant of ['acme', 'beta']) expectProblem(await base.call('GET', `/api/tenant/${tenant}`, { token: root }), 404);
  });

  it('refuses a link (to a file or a folder) that leads out of the tenant folder and out of the import folder', async () => {
    const outside = writeFolder({ 'service-secret.txt': 'not-for-any-tenant-0123456789\n', 'keys/app.txt': 'also-not-0123456789\n' });
    const fileLink = twoTenants({ file: '../link.txt' });
    symlinkSync(join(outside, 'service-secret.txt'), join(fileLink, 'acme/link.txt'));
    const err = await refusal(fileLink);
    expect(err.message).toBe(
      `CONFIG_IMPORT ${fileLink}: acme/clients/acme-app.json: secret: file ../link.txt is outside the folder of tenant 'acme' (links followed): a file may name only files in its own tenant's folder`,
    );
    expect(err.message).not.toContain('not-for-any-tenant');

    // A linked folder beside the client files (not a layout folder: it holds no .json).
    const folderLink = twoTenants({ file: 'keys/app.txt' });
    symlinkSync(join(outside, 'keys'), join(folderLink, 'acme/clients/keys'));
    expect((await refusal(folderLink)).message).toBe(
      `CONFIG_IMPORT ${folderLink}: acme/clients/acme-app.json: secret: file keys/app.txt is outside the folder of tenant 'acme' (links followed): a file may name only files in its own tenant's folder`,
    );
    expectProblem(await base.call('GET', '/api/tenant/acme', { token: root }), 404);
  });

  it("takes a plain file of the tenant's own folder, and a link that stays inside it", async () => {
    await importing(twoTenants({ file: '../app-secret.txt' }));
    await expect(base.token('acme-app', APP_SECRET)).resolves.toEqual(expect.any(String));
    await expect(base.token('beta-app', 'beta-secret-0123456789')).resolves.toEqual(expect.any(String));

    const linked = twoTenants({ file: '../current.txt' });
    symlinkSync('app-secret.txt', join(linked, 'acme/current.txt'));
    await importing(linked);
    await expect(base.token('acme-app', APP_SECRET)).resolves.toEqual(expect.any(String));
  });
});
