// The demo wallet (wallet/, `npm run wallet`) against the real service over HTTP: offers redeemed with
// a transaction code and DPoP (SD-JWT VC and mdoc), credentials stored privately, presentation
// requests answered (SD-JWT VC and mdoc) and the sessions completed; and what it refuses.
// @peculiar/x509 (certificate extensions) needs it loaded first.
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthorityKeyIdentifierExtension, X509Certificate } from '@peculiar/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWallet } from '../../wallet/cli.js';
import type { Io } from '../../wallet/io.js';
import { MDL_DOC_TYPE, MDL_NAMESPACE, mdl, PID_ADULT_QUERY, PID as SHARED_PID } from '../support/fixtures.js';
import { root } from '../support/process.js';
import { startService, type TestService } from '../support/service.js';

const DOC_TYPE = MDL_DOC_TYPE;
const NS = MDL_NAMESPACE;
// The wallet shows the configuration's display name.
const PID = { ...SHARED_PID, config: { ...SHARED_PID.config, display: [{ name: 'Person ID', locale: 'en' }] } };
const MDL = mdl(['family_name', 'given_name', 'age_over_18']);
const PID_QUERY = PID_ADULT_QUERY;
const MDL_QUERY = {
  credentials: [
    {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: DOC_TYPE },
      claims: [{ path: [NS, 'given_name'] }, { path: [NS, 'age_over_18'], values: [true] }],
    },
  ],
};

/** A running service with tenant acme set up as below: its admin token. */
interface Deployment {
  svc: TestService;
  admin: string;
}

let svc: TestService;
let admin: string;
let main: Deployment;
const dirs: string[] = [];

/** A wallet folder of its own and an Io that records what the wallet says and answers its questions in turn. */
function wallet(answers: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-wallet-'));
  dirs.push(dir);
  const lines: string[] = [];
  const questions: string[] = [];
  const io: Io = {
    print: (text) => lines.push(text),
    ask: async (question) => {
      questions.push(question);
      return answers.shift() ?? '';
    },
  };
  const run = (...argv: string[]) => runWallet([...argv, '--dir', dir], io, {});
  return { dir, io, run, questions, output: () => lines.join('\n') };
}

/** Tenant acme with the PID and mDL configurations, DPoP required, a trust list of its issuing key and the two presentation configurations. */
async function deploy(svc: TestService): Promise<Deployment> {
  const admin = (await svc.tenant('acme')).token;
  for (const body of [PID, MDL]) expect((await svc.call('POST', '/api/issuer/credentials', { token: admin, body })).status).toBe(201);
  // DPoP required: a wallet that did not bind its token would be refused.
  const settings = await svc.raw('PUT', '/api/issuer/config', { token: admin, body: { dpopRequired: true } });
  expect(settings.status, settings.text).toBe(200);
  const trust = await svc.call('POST', '/api/trust-list', {
    token: admin,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(trust.status, trust.text).toBe(201);
  for (const [id, dcql_query] of [
    ['adult', PID_QUERY],
    ['mdl-check', MDL_QUERY],
  ] as const) {
    const config = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id, dcql_query } });
    expect(config.status, config.text).toBe(201);
  }
  return { svc, admin };
}

beforeAll(async () => {
  svc = await startService();
  main = await deploy(svc);
  admin = main.admin;
});
afterAll(async () => {
  await svc.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const session = (id: string) => svc.running.services.sessions.get('acme', id);

async function offer(configurationId: string, claims: Record<string, unknown>, txCode = '493817', { svc, admin } = main) {
  const reply = await svc.call('POST', '/api/issuer/offer', {
    token: admin,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: [configurationId],
      tx_code: txCode,
      credentialClaims: { [configurationId]: { type: 'inline', claims } },
    },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { uri: string; session: string };
}

async function request(requestId: string, body: Record<string, unknown> = {}, { svc, admin } = main) {
  const reply = await svc.call('POST', '/api/verifier/offer', { token: admin, body: { response_type: 'uri', requestId, ...body } });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { uri: string; session: string };
}

const ERIKA = { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true };
const storedFiles = (dir: string) => readdirSync(join(dir, 'credentials')).map((name) => join(dir, 'credentials', name));
const mode = (path: string) => statSync(path).mode & 0o777;

describe('redeeming offers', () => {
  it('redeems an SD-JWT VC offer with the transaction code and DPoP, stores it privately and reports it accepted', async () => {
    const holder = wallet();
    const created = await offer('pid', ERIKA);
    expect(await holder.run(created.uri, '--tx-code', '493817'), holder.output()).toBe(0);
    expect(holder.output()).toContain('bound to a DPoP key');
    expect(holder.output()).toMatch(/→ POST http:\/\/127\.0\.0\.1:\d+\/issuers\/acme\/token {2}\(dpop: /);
    expect(holder.output()).toContain('"given_name": "Erika"');
    expect(holder.questions).toEqual([]);

    const [file] = storedFiles(holder.dir);
    const stored = JSON.parse(readFileSync(file as string, 'utf8'));
    expect(stored).toMatchObject({ format: 'dc+sd-jwt', configurationId: 'pid', issuer: `${svc.url}/issuers/acme` });
    expect(mode(file as string)).toBe(0o600);
    expect(mode(join(holder.dir, 'holder-key.json'))).toBe(0o600);
    expect(mode(join(holder.dir, 'credentials'))).toBe(0o700);
    const key = JSON.parse(readFileSync(join(holder.dir, 'holder-key.json'), 'utf8'));
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', d: expect.any(String) });

    const state = await session(created.session);
    expect(state).toMatchObject({ status: 'completed', consumed: true });
    expect(state.public.notifications).toEqual([expect.objectContaining({ event: 'credential_accepted' })]);
  });

  it('asks for the transaction code when it is not given, and reports a wrong one as the issuer answered', async () => {
    const created = await offer('pid', ERIKA, 'bluebird');
    const wrong = wallet(['nope']);
    expect(await wrong.run(created.uri)).toBe(1);
    expect(wrong.questions).toEqual(['Transaction code, 8 characters: ']);
    expect(wrong.output()).toMatch(/error: invalid_grant/);
    expect((await session(created.session)).txCodeFailedAttempts).toBe(1);

    const right = wallet(['bluebird']);
    expect(await right.run(created.uri), right.output()).toBe(0);
    expect(storedFiles(right.dir)).toHaveLength(1);
  });

  it('redeems an mdoc offer and lists its claims by namespace', async () => {
    const holder = wallet();
    const created = await offer('mdl', { [NS]: { family_name: 'Mustermann', given_name: 'Erika', age_over_18: true } });
    expect(await holder.run(created.uri, '--tx-code', '493817'), holder.output()).toBe(0);
    expect(JSON.parse(readFileSync(storedFiles(holder.dir)[0] as string, 'utf8')).format).toBe('mso_mdoc');
    const listing = wallet();
    expect(await runWallet(['list', '--dir', holder.dir], listing.io, {})).toBe(0);
    expect(listing.output()).toMatch(new RegExp(`mdl-[0-9a-f]{8} {2}mso_mdoc {2}${DOC_TYPE.replaceAll('.', '\\.')}`));
    expect(listing.output()).toContain(`"${NS}": {`);
    expect(listing.output()).toContain('"given_name": "Erika"');
  });
});

describe('a credential issued with OpenID Federation trust', () => {
  it('is refused plainly when received (kid, no x5c: the wallet cannot resolve trust chains), and nothing is stored', async () => {
    const fed = await startService();
    try {
      const token = (await fed.tenant('acme')).token;
      const settings = await fed.raw('PUT', '/api/issuer/config', {
        token,
        body: { federation: { role: 'leaf', authorityHints: ['https://intermediate.example.eu'] } },
      });
      expect(settings.status, settings.text).toBe(200);
      const config = await fed.call('POST', '/api/issuer/credentials', { token, body: { ...PID, sdJwtTrustFormat: 'federation' } });
      expect(config.status, config.text).toBe(201);
      const holder = wallet();
      expect(await holder.run((await offer('pid', ERIKA, '493817', { svc: fed, admin: token })).uri, '--tx-code', '493817')).toBe(1);
      expect(holder.output()).toContain(
        'error: this SD-JWT VC names its issuer key by kid (OpenID Federation trust), not by an x5c certificate; this demo wallet cannot resolve federation trust chains',
      );
      expect(existsSync(join(holder.dir, 'credentials')) ? storedFiles(holder.dir) : []).toEqual([]);
    } finally {
      await fed.stop();
    }
  });
});

describe('answering presentation requests', () => {
  let holder: ReturnType<typeof wallet>;
  beforeAll(async () => {
    holder = wallet();
    expect(await holder.run((await offer('pid', ERIKA)).uri, '--tx-code', '493817')).toBe(0);
    expect(await holder.run((await offer('mdl', { [NS]: ERIKA })).uri, '--tx-code', '493817')).toBe(0);
  });
  const answer = (uri: string, answers: string[] = [], ...flags: string[]) => {
    const run = wallet(answers);
    return runWallet([uri, '--dir', holder.dir, ...flags], run.io, {}).then((code) => ({ code, ...run }));
  };

  for (const [clientIdPrefix, responseMode, requestUriMethod] of [
    ['x509_hash', 'direct_post.jwt', 'get'],
    ['x509_san_dns', 'direct_post', 'post'],
  ] as const) {
    it(`presents an SD-JWT VC disclosing only the claims asked for (${clientIdPrefix}, ${responseMode}, ${requestUriMethod})`, async () => {
      const created = await request('adult', { clientIdPrefix, responseMode, requestUriMethod });
      const result = await answer(created.uri, [], '--yes');
      expect(result.code, result.output()).toBe(0);
      expect(result.output()).toContain(`Verifier: ${clientIdPrefix}:`);
      expect(result.output()).toMatch(/request signed by .*CN=acme access/);
      expect(result.output()).toContain('SD-JWT VC with 2 disclosure(s) and a KB-JWT');
      expect(result.output()).toContain('The verifier accepted the presentation.');
      const done = await session(created.session);
      expect(done).toMatchObject({ status: 'completed', consumed: true });
      expect(done.private?.credentials).toEqual([
        expect.objectContaining({ queryId: 'pid', format: 'dc+sd-jwt', claims: { given_name: 'Erika', age_over_18: true } }),
      ]);
    });
  }

  it('presents an mdoc with only the elements asked for, after the user consents', async () => {
    const created = await request('mdl-check');
    const result = await answer(created.uri, ['y']);
    expect(result.code, result.output()).toBe(0);
    expect(result.questions).toEqual(['Send these claims to the verifier? [y/N] ']);
    expect(result.output()).toContain('mdoc DeviceResponse for org.iso.18013.5.1.mDL');
    const done = await session(created.session);
    expect(done).toMatchObject({ status: 'completed', consumed: true });
    expect(done.private?.credentials).toEqual([
      expect.objectContaining({ queryId: 'mdl', format: 'mso_mdoc', claims: { [NS]: { given_name: 'Erika', age_over_18: true } } }),
    ]);
  });

  it('shows the transaction data of a request and binds the presentation to it', async () => {
    const transaction = { type: 'payment', credential_ids: ['pid'], amount: '42.00 EUR' };
    const created = await request('adult', { transaction_data: [transaction] });
    const result = await answer(created.uri, ['y']);
    expect(result.code, result.output()).toBe(0);
    expect(result.output()).toMatch(/and confirms the transaction \{\n {2}"type": "payment",[\s\S]*"amount": "42.00 EUR"/);
    expect(result.output()).toMatch(/"transaction_data_hashes": \[\n\s+"[\w-]{43}"\n\s+\]/);
    expect((await session(created.session)).status).toBe('completed');
  });

  it('sends nothing when the user declines', async () => {
    const created = await request('adult');
    const result = await answer(created.uri, ['n']);
    expect(result.code).toBe(1);
    expect(result.output()).toContain('Nothing was sent.');
    expect(result.output()).not.toContain('/response');
    expect((await session(created.session)).status).toBe('fetched');
  });

  it('says so when no stored credential satisfies the query, and sends nothing', async () => {
    const config = await svc.call('POST', '/api/verifier/config', {
      token: admin,
      body: { id: 'over-65', dcql_query: { credentials: [{ ...PID_QUERY.credentials[0], claims: [{ path: ['age_over_65'] }] }] } },
    });
    expect(config.status, config.text).toBe(201);
    const created = await request('over-65');
    const result = await answer(created.uri, [], '--yes');
    expect(result.code).toBe(1);
    expect(result.output()).toContain("error: no credential in this wallet satisfies the credential query 'pid'");
    expect((await session(created.session)).status).toBe('fetched');
  });

  describe('a request object whose signature does not verify', () => {
    let forger: Server;
    let forged = '';
    beforeAll(async () => {
      forger = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/oauth-authz-req+jwt' }).end(forged));
      await new Promise<void>((resolve) => forger.listen(0, '127.0.0.1', resolve));
    });
    afterAll(() => new Promise<void>((resolve) => forger.close(() => resolve())));

    it('is refused before anything is shown or sent', async () => {
      const created = await request('adult');
      const params = new URL(created.uri).searchParams;
      const genuine = await (await fetch(params.get('request_uri') as string)).text();
      const [header, payload, signature] = genuine.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
      const changed = Buffer.from(JSON.stringify({ ...claims, response_uri: 'http://127.0.0.1:1/steal' })).toString('base64url');
      forged = [header, changed, signature].join('.');
      const { port } = forger.address() as { port: number };
      const uri = `openid4vp://?client_id=${encodeURIComponent(params.get('client_id') as string)}&request_uri=${encodeURIComponent(`http://127.0.0.1:${port}/request`)}`;
      const result = await answer(uri, [], '--yes');
      expect(result.code).toBe(1);
      expect(result.output()).toMatch(/error: .*verification of jwt/i);
      expect(result.output()).not.toContain('It asks for');
    });
  });
});

const storedCredentials = (dir: string) =>
  storedFiles(dir).map((file) => JSON.parse(readFileSync(file, 'utf8')) as { id: string; issuer: string; credential: string });

/** The base64url AuthorityKeyIdentifier of an SD-JWT VC's issuer certificate, as DCQL trusted_authorities of type aki name it. */
function authorityKeyId(sdJwtVc: string): string {
  const header = JSON.parse(Buffer.from(sdJwtVc.split('.')[0] as string, 'base64url').toString()) as { x5c: string[] };
  const keyId = new X509Certificate(Buffer.from(header.x5c[0] as string, 'base64')).getExtension(AuthorityKeyIdentifierExtension)?.keyId;
  return Buffer.from(keyId as string, 'hex').toString('base64url');
}

describe('choosing among stored credentials', () => {
  let other: Deployment;
  let holder: ReturnType<typeof wallet>;
  const held = (deployment: Deployment) =>
    storedCredentials(holder.dir).find((c) => c.issuer === `${deployment.svc.url}/issuers/acme`) as { id: string; credential: string };
  beforeAll(async () => {
    // Another deployment with the same tenant and configurations (a service started over, say): its
    // credentials look alike, but the other verifier does not trust its keys.
    other = await deploy(await startService());
    holder = wallet();
    // Received from the other deployment first: the first stored match of every query is its credential.
    expect(await holder.run((await offer('pid', ERIKA, '493817', other)).uri, '--tx-code', '493817')).toBe(0);
    expect(await holder.run((await offer('pid', ERIKA)).uri, '--tx-code', '493817')).toBe(0);
  });
  afterAll(() => other.svc.stop());

  it('presents to each verifier the credential of its own deployment, and says that another one fits too', async () => {
    for (const deployment of [main, other]) {
      const created = await request('adult', {}, deployment);
      const run = wallet();
      const code = await runWallet([created.uri, '--dir', holder.dir, '--yes'], run.io, {});
      expect(code, run.output()).toBe(0);
      expect(run.output()).toContain(`pid: urn:eudi:pid:1 (${held(deployment).id}, issued by`);
      expect(run.output()).toContain('(1 other stored credential(s) satisfy it too; --credential <id> presents another)');
      expect((await deployment.svc.running.services.sessions.get('acme', created.session)).status).toBe('completed');
    }
  });

  it('presents the newest of the credentials of one deployment, and --credential presents the one named', async () => {
    const twice = wallet();
    expect(await twice.run((await offer('pid', ERIKA)).uri, '--tx-code', '493817')).toBe(0);
    const older = /Stored (\S+) /.exec(twice.output())?.[1] as string;
    expect(await twice.run((await offer('pid', { ...ERIKA, given_name: 'Eva' })).uri, '--tx-code', '493817')).toBe(0);
    const present = async (...flags: string[]) => {
      const created = await request('adult');
      const run = wallet();
      const code = await runWallet([created.uri, '--dir', twice.dir, '--yes', ...flags], run.io, {});
      expect(code, run.output()).toBe(0);
      const done = (await session(created.session)) as { private?: { credentials?: { claims: unknown }[] } };
      return done.private?.credentials?.[0]?.claims;
    };
    expect(await present()).toEqual({ given_name: 'Eva', age_over_18: true });
    expect(await present('--credential', older)).toEqual({ given_name: 'Erika', age_over_18: true });
  });

  it('refuses in one line a --credential that is not stored or does not fit the request, and sends nothing', async () => {
    const both = wallet();
    expect(await both.run((await offer('pid', ERIKA)).uri, '--tx-code', '493817')).toBe(0);
    const pid = /Stored (\S+) /.exec(both.output())?.[1] as string;
    expect(await both.run((await offer('mdl', { [NS]: ERIKA })).uri, '--tx-code', '493817')).toBe(0);
    for (const [requestId, credential, message] of [
      ['adult', 'nope', "error: no stored credential 'nope' (npm run wallet -- list shows them)"],
      ['mdl-check', pid, `error: the stored credential '${pid}' does not satisfy what the request asks for`],
    ] as const) {
      const created = await request(requestId);
      const run = wallet();
      expect(await runWallet([created.uri, '--dir', both.dir, '--yes', '--credential', credential], run.io, {})).toBe(1);
      expect(run.output()).toContain(message);
      expect((await session(created.session)).status).toBe('fetched');
    }
  });

  it("follows a query's trusted_authorities of type aki, even to another deployment's credential", async () => {
    const aki = authorityKeyId(held(other).credential);
    const [pidQuery] = PID_QUERY.credentials;
    for (const [id, values] of [
      ['other-issuers', [aki]],
      ['nobody', [Buffer.from('no such key identifier').toString('base64url')]],
    ] as const) {
      const dcql_query = { credentials: [{ ...pidQuery, trusted_authorities: [{ type: 'aki', values }] }] };
      const config = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id, dcql_query } });
      expect(config.status, config.text).toBe(201);
    }
    const trusted = wallet(['n']);
    expect(await runWallet([(await request('other-issuers')).uri, '--dir', holder.dir], trusted.io, {})).toBe(1);
    expect(trusted.output()).toContain(`pid: urn:eudi:pid:1 (${held(other).id}, issued by`);
    expect(trusted.output()).not.toContain('other stored credential(s)');

    const none = wallet();
    expect(await runWallet([(await request('nobody')).uri, '--dir', holder.dir, '--yes'], none.io, {})).toBe(1);
    expect(none.output()).toContain(
      "error: no credential in this wallet satisfies the credential query 'pid' from the trusted authorities it names",
    );
  });

  it('says plainly that it cannot answer a query that asks for OpenID Federation trust, and sends nothing', async () => {
    const [pidQuery] = PID_QUERY.credentials;
    const dcql_query = {
      credentials: [{ ...pidQuery, trusted_authorities: [{ type: 'openid_federation', values: ['https://anchor.example.eu'] }] }],
    };
    // The service takes such a query only from a tenant with federation settings of its own.
    const federation = { role: 'leaf', trustAnchors: [{ entityId: 'https://anchor.example.eu' }] };
    const settings = (body: Record<string, unknown>) => svc.raw('PUT', '/api/issuer/config', { token: admin, body });
    expect((await settings({ federation })).status).toBe(200);
    const config = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id: 'federated', dcql_query } });
    expect(config.status, config.text).toBe(201);
    const created = await request('federated');
    expect((await settings({ federation: null })).status).toBe(200);
    const run = wallet();
    expect(await runWallet([created.uri, '--dir', holder.dir, '--yes'], run.io, {})).toBe(1);
    expect(run.output()).toContain(
      "error: the credential query 'pid' accepts only issuers trusted through OpenID Federation (https://anchor.example.eu); this demo wallet cannot resolve federation trust chains",
    );
    expect(run.output()).not.toContain('It asks for');
    expect((await session(created.session)).status).toBe('fetched');
  });
});

describe('managing the stored credentials', () => {
  it('lists each credential with its id, format, type, issuer and when it was issued; a damaged one on its own line', async () => {
    const holder = wallet();
    expect(await holder.run((await offer('pid', ERIKA)).uri, '--tx-code', '493817')).toBe(0);
    writeFileSync(
      join(holder.dir, 'credentials', 'damaged.json'),
      JSON.stringify({ id: 'damaged', format: 'dc+sd-jwt', credential: 'x', receivedAt: '' }),
    );
    const listing = wallet();
    expect(await runWallet(['list', '--dir', holder.dir], listing.io, {})).toBe(0);
    const [stored] = storedCredentials(holder.dir).filter((c) => c.id !== 'damaged');
    expect(listing.output()).toMatch(
      new RegExp(
        `^${stored?.id}  dc\\+sd-jwt  urn:eudi:pid:1  from ${svc.url}/issuers/acme \\(.*CN=.*\\), issued \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z$`,
        'm',
      ),
    );
    expect(listing.output()).toMatch(/^damaged {2}dc\+sd-jwt {2}unreadable: .+$/m);

    // The damaged file does not stop a presentation either: it is named and left out.
    const created = await request('adult');
    const presenting = wallet();
    expect(await runWallet([created.uri, '--dir', holder.dir, '--yes'], presenting.io, {}), presenting.output()).toBe(0);
    expect(presenting.output()).toContain('(leaving out damaged: ');
  });

  it('removes one credential by id, and refuses an id it does not hold (a path least of all)', async () => {
    const holder = wallet();
    for (const name of ['Erika', 'Eva'])
      expect(await holder.run((await offer('pid', { ...ERIKA, given_name: name })).uri, '--tx-code', '493817')).toBe(0);
    const [first, second] = storedCredentials(holder.dir).map((c) => c.id);
    expect(await holder.run('rm', first as string)).toBe(0);
    expect(holder.output()).toContain(`Removed ${first}.`);
    expect(storedCredentials(holder.dir).map((c) => c.id)).toEqual([second]);

    for (const id of [first as string, '../holder-key', `../credentials/${second}`]) {
      const run = wallet();
      expect(await runWallet(['rm', id, '--dir', holder.dir], run.io, {})).toBe(1);
      expect(run.output()).toMatch(/^error: no stored credential '.*' in /);
    }
    expect(existsSync(join(holder.dir, 'holder-key.json'))).toBe(true);
    expect(storedCredentials(holder.dir)).toHaveLength(1);

    // A file in the folder that is not JSON at all is named, with the command that removes it.
    writeFileSync(join(holder.dir, 'credentials', 'garbage.json'), 'garbage');
    const listing = wallet();
    expect(await runWallet(['list', '--dir', holder.dir], listing.io, {})).toBe(1);
    expect(listing.output()).toBe(
      `error: ${join(holder.dir, 'credentials', 'garbage.json')} is not a stored credential (not JSON); npm run wallet -- rm garbage removes it`,
    );
    expect(await runWallet(['rm', 'garbage', '--dir', holder.dir], wallet().io, {})).toBe(0);
    const usage = wallet();
    expect(await runWallet(['rm', '--dir', holder.dir], usage.io, {})).toBe(2);
    expect(usage.output()).toContain('rm needs the id of the credential to remove');
  });

  it('resets the wallet after asking (or with --yes): every credential and the holder key', async () => {
    const holder = wallet(['n']);
    expect(await holder.run((await offer('pid', ERIKA)).uri, '--tx-code', '493817')).toBe(0);
    expect(await holder.run('reset')).toBe(1);
    expect(holder.output()).toContain('Nothing was removed.');
    expect(storedCredentials(holder.dir)).toHaveLength(1);

    const confirmed = wallet(['y']);
    expect(await runWallet(['reset', '--dir', holder.dir], confirmed.io, {})).toBe(0);
    expect(confirmed.questions).toEqual([`Remove every credential and the holder key from ${holder.dir}? [y/N] `]);
    expect(confirmed.output()).toContain(`Removed 1 credential(s) and the holder key from ${holder.dir}.`);
    expect(existsSync(join(holder.dir, 'holder-key.json'))).toBe(false);
    const listing = wallet();
    expect(await runWallet(['list', '--dir', holder.dir], listing.io, {})).toBe(0);
    expect(listing.output()).toBe(`No credentials in ${holder.dir}.`);
    expect(await runWallet(['reset', '--yes', '--dir', holder.dir], wallet().io, {})).toBe(0);
  });
});

describe('the command line', () => {
  it('runs as `npm run wallet`, reading the transaction code and the consent from standard input', async () => {
    const dir = wallet().dir;
    const npm = (args: string[], input: string) =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn('npm', ['run', '-s', 'wallet', '--', ...args, '--dir', dir], { cwd: root });
        let output = '';
        child.stdout.on('data', (d) => (output += d));
        child.stderr.on('data', (d) => (output += d));
        child.on('exit', (code) => resolve({ code, output }));
        child.stdin.end(input);
      });
    const received = await npm([(await offer('pid', ERIKA)).uri], '493817\n');
    expect(received.code, received.output).toBe(0);
    expect(received.output).toContain('Transaction code, 6 digits: ');
    const created = await request('adult');
    const presented = await npm([created.uri], 'yes\n');
    expect(presented.code, presented.output).toBe(0);
    expect(presented.output).toContain('Send these claims to the verifier? [y/N] ');
    expect((await session(created.session)).status).toBe('completed');
  }, 60_000);

  it('refuses plain HTTP to anything but this machine', async () => {
    const run = wallet();
    const uri = `openid-credential-offer://?credential_offer_uri=${encodeURIComponent('http://issuer.example.com/offer/1')}`;
    expect(await run.run(uri)).toBe(1);
    expect(run.output()).toMatch(/^error: .*\n?.*refusing http:\/\/issuer\.example\.com\/offer\/1: only https, or http to localhost/m);
    expect(run.output()).not.toContain('Issuer:');
  });

  it('draws a URI as a QR code', async () => {
    const run = wallet();
    const uri = (await request('adult')).uri;
    expect(await run.run('qr', uri)).toBe(0);
    const [qr, echoed] = [run.output().slice(0, run.output().lastIndexOf('\n')), run.output().split('\n').at(-1)];
    expect(echoed).toBe(uri);
    // Version 10 or so for a URI this long: dozens of rows of half-block modules.
    expect(qr.split('\n').length).toBeGreaterThan(20);
    expect(qr).toMatch(/[▀▄█]/);
  });

  it('answers wrong usage with the usage text and exit code 2', async () => {
    for (const argv of [[], ['https://example.com/nothing'], ['qr'], ['--bogus']]) {
      const run = wallet();
      expect(await runWallet(argv, run.io, {})).toBe(2);
      expect(run.output()).toContain('Usage: npm run wallet --');
    }
  });
});
