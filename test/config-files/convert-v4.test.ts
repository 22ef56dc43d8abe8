// npm run convert-v4: version-4 credential configuration files rewritten into the field model,
// each change printed, what cannot be mapped refused by file and key; the result imports as is.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultClaims, type FieldDefinition } from '../../src/credential-configs/service.js';
import { root } from '../support/process.js';
import { startService } from '../support/service.js';
import { removeFolders, writeFolder } from './support.js';

afterAll(removeFolders);

const PID_CLAIMS = {
  given_name: 'ERIKA',
  birthdate: '1964-08-12',
  age_in_years: 59,
  age_equal_or_over: { '18': true, '65': false },
  address: { locality: 'KÖLN', postal_code: '51147' },
  nationalities: ['DE'],
};

const V4 = {
  'acme/credential-configs/pid.json': {
    config: {
      format: 'dc+sd-jwt',
      display: [{ name: 'PID', locale: 'en-US', logo: { uri: 'https://issuer.example/logo.png', url: 'https://issuer.example/logo.png' } }],
    },
    lifeTime: 3600,
    keyBinding: true,
    claims: PID_CLAIMS,
    disclosureFrame: { _sd: ['given_name', 'birthdate', 'address', 'nationalities'], address: { _sd: ['locality'] } },
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { birthdate: { type: 'string', format: 'date' }, given_name: { type: 'string', minLength: 1, title: 'Given name' } },
      required: ['given_name'],
    },
    vct: 'urn:example:pid',
  },
  'acme/credential-configs/mdl.json': {
    config: {
      format: 'mso_mdoc',
      docType: 'org.iso.18013.5.1.mDL',
      claimsByNamespace: {
        'org.iso.18013.5.1': { given_name: 'Erika', family_name: 'Mustermann' },
        'org.iso.18013.5.1.aamva': { DHS_compliance: 'F' },
      },
      claimsMetadata: [{ path: ['org.iso.18013.5.1', 'given_name'], mandatory: true, display: [{ name: 'Given name', locale: 'en' }] }],
    },
  },
  'acme/credential-configs/badge.json': {
    config: { format: 'mso_mdoc', docType: 'org.example.badge', namespace: 'org.example.badge.1' },
    claims: { holder: 'Erika', level: 3 },
    disclosureFrame: { _sd: ['holder'] },
  },
  'acme/credential-configs/legacy.json': {
    config: { format: 'dc+sd-jwt' },
    certId: 'signing-cert',
    claims: { nickname: null },
    disclosureFrame: { _sd: ['nickname'], _sd_decoy: 2 },
  },
  'acme/credential-configs/current.json': { config: { format: 'dc+sd-jwt' }, fields: [] },
  'acme/tenant.json': { name: 'ACME' },
};

function convert(...args: string[]) {
  const run = spawnSync('npm', ['run', '--silent', 'convert-v4', '--', ...args], { cwd: root, encoding: 'utf8' });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

const read = (dir: string, path: string) => JSON.parse(readFileSync(join(dir, path), 'utf8'));
const fieldAt = (fields: FieldDefinition[], ...path: string[]): FieldDefinition | undefined => {
  const [head, ...rest] = path;
  const field = fields.find((f) => f.path[0] === head);
  return rest.length ? fieldAt(field?.children ?? [], ...rest) : field;
};

describe('npm run convert-v4', () => {
  it('rewrites version-4 files in place, printing each change, and refuses by file and key what it cannot map', () => {
    const dir = writeFolder(V4);
    const { code, stdout, stderr } = convert(dir);

    expect(code).toBe(1);
    expect(stdout).toContain('acme/credential-configs/pid.json: converted');
    expect(stdout).toContain('claims -> fields[].defaultValue');
    expect(stdout).toContain('disclosureFrame -> fields[].disclosable');
    expect(stdout).toContain('config.display.0.logo.url -> uri');
    expect(stdout).toContain('config.claimsMetadata -> fields[].display and fields[].mandatory');
    expect(stdout).toContain('config.claimsByNamespace -> fields[].namespace');
    expect(stdout).toContain('config.namespace -> fields[].namespace (org.example.badge.1)');
    expect(stdout).toContain('3 file(s) converted, 1 refused');
    expect(stdout).not.toContain('current.json');
    expect(stderr).toContain('acme/credential-configs/legacy.json: refused, left unchanged');
    expect(stderr).toContain('certId: removed in version 5: set keyChainId');
    expect(stderr).toContain('disclosureFrame._sd_decoy: has no counterpart');
    expect(stderr).toContain('claim nickname: has no type');
    expect(read(dir, 'acme/credential-configs/legacy.json')).toEqual(V4['acme/credential-configs/legacy.json']);
    expect(read(dir, 'acme/credential-configs/current.json')).toEqual(V4['acme/credential-configs/current.json']);

    const pid = read(dir, 'acme/credential-configs/pid.json');
    for (const key of ['claims', 'disclosureFrame', 'schema']) expect(pid).not.toHaveProperty(key);
    expect(pid.config.display[0].logo).toEqual({ uri: 'https://issuer.example/logo.png' });
    expect(defaultClaims(pid)).toEqual(PID_CLAIMS);
    expect(fieldAt(pid.fields, 'given_name')).toMatchObject({
      type: 'string',
      mandatory: true,
      disclosable: true,
      constraints: { minLength: 1 },
      display: [{ name: 'Given name' }],
    });
    expect(fieldAt(pid.fields, 'birthdate')).toMatchObject({ type: 'date', disclosable: true });
    expect(fieldAt(pid.fields, 'age_in_years')).toMatchObject({ type: 'number', disclosable: false });
    expect(fieldAt(pid.fields, 'address', 'locality')).toMatchObject({ disclosable: true });
    expect(fieldAt(pid.fields, 'address', 'postal_code')).toMatchObject({ disclosable: false });

    const mdl = read(dir, 'acme/credential-configs/mdl.json');
    expect(mdl.config).toEqual({ format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' });
    expect(defaultClaims(mdl)).toEqual(V4['acme/credential-configs/mdl.json'].config.claimsByNamespace);
    expect(mdl.fields.find((f: FieldDefinition) => f.path[0] === 'given_name')).toEqual({
      path: ['given_name'],
      type: 'string',
      defaultValue: 'Erika',
      mandatory: true,
      display: [{ name: 'Given name', locale: 'en' }],
      namespace: 'org.iso.18013.5.1',
    });
    const badge = read(dir, 'acme/credential-configs/badge.json');
    expect(defaultClaims(badge)).toEqual({ 'org.example.badge.1': { holder: 'Erika', level: 3 } });
    expect(badge).not.toHaveProperty('disclosureFrame');

    const again = convert(dir);
    expect(again.stdout).toContain('0 file(s) converted, 1 refused');
  });

  it('writes into --out and leaves the originals; --dry-run writes nothing', () => {
    const dir = writeFolder(V4);
    const out = mkdtempSync(join(tmpdir(), 'svc-convert-out-'));
    writeFolder({}, out);
    expect(convert(dir, '--dry-run').stdout).toContain('(dry run: nothing written)');
    expect(read(dir, 'acme/credential-configs/pid.json')).toEqual(V4['acme/credential-configs/pid.json']);

    expect(convert(dir, '--out', out).code).toBe(1);
    expect(read(dir, 'acme/credential-configs/pid.json')).toEqual(V4['acme/credential-configs/pid.json']);
    expect(read(out, 'acme/credential-configs/pid.json')).toHaveProperty('fields');
    expect(() => read(out, 'acme/credential-configs/legacy.json')).toThrow(/ENOENT/);
  });

  it('answers a missing folder with its usage and exit code 2', () => {
    expect(convert().code).toBe(2);
    expect(convert('/nonexistent-folder').stderr).toContain('/nonexistent-folder: no such folder');
  });

  it('writes with --out a folder that the import accepts, tenant.json included, which the issuer publishes', async () => {
    // Spelled as in docs/config-files.md, without `--`: npm keeps --out for itself and the script still finds it.
    const pid = V4['acme/credential-configs/pid.json'];
    const dir = writeFolder({
      ...V4,
      'acme/clients/acme-admin.json': { roles: ['issuance:manage'], secret: 'a-client-secret-of-sixteen-or-more' },
      // A tenant folder of version 4 without tenant.json: the converter writes one.
      'beta/credential-configs/pid.json': pid,
    });
    const out = mkdtempSync(join(tmpdir(), 'svc-convert-out-'));
    const run = spawnSync('npm', ['run', '--silent', 'convert-v4', dir, '--out', out], { cwd: root, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(1); // legacy.json is refused, and left out
    expect(run.stdout).toContain('beta/tenant.json: written');
    expect(read(out, 'acme/tenant.json')).toEqual({ name: 'ACME' });
    expect(read(out, 'beta/tenant.json')).toEqual({ name: 'beta' });
    expect(read(out, 'acme/clients/acme-admin.json')).toEqual({ roles: ['issuance:manage'], secret: 'a-client-secret-of-sixteen-or-more' });
    expect(read(out, 'acme/credential-configs/current.json')).toEqual(V4['acme/credential-configs/current.json']);
    expect(() => read(out, 'acme/credential-configs/legacy.json')).toThrow(/ENOENT/);

    const service = await startService({ CONFIG_IMPORT: out });
    try {
      const acme = await service.raw('GET', '/.well-known/openid-credential-issuer/issuers/acme');
      expect(Object.keys(acme.body.credential_configurations_supported).sort()).toEqual(['badge', 'current', 'mdl', 'pid']);
      const beta = await service.raw('GET', '/.well-known/openid-credential-issuer/issuers/beta');
      expect(Object.keys(beta.body.credential_configurations_supported)).toEqual(['pid']);
      expect(
        (
          await service.call('POST', '/api/oauth2/token', {
            body: { client_id: 'acme-admin', client_secret: 'a-client-secret-of-sixteen-or-more' },
          })
        ).status,
      ).toBe(200);
    } finally {
      await service.stop();
    }
  });
});
