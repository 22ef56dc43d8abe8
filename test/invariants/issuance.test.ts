// Issue 24: the once-only rules of issuance proper hold under parallel requests: one credential per
// configuration and offer (and at most batchSize of them), the transaction code's lock-out, deferred
// transactions completed, failed and retrieved once, notifications all kept, and a refresh token
// chain bound to the first DPoP key that refreshed it. Each is raced through the real server, over two
// instances of one PostgreSQL database (one instance on SQLite), with exact counts of winners and of
// what the database kept.
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeRequest, pushAuthorizationRequest, redeemCode } from '../support/authorization.js';
import { startService, type TestService } from '../support/service.js';
import { dpopProof, type HolderKey, holderKey, pkce, keyProof as proofFor } from '../support/wallet.js';
import { countOf, type Instances, instancesOf, race, tally } from './support.js';

const PRE_AUTHORIZED_GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt', scope: 'pid_scope' },
  vct: 'urn:example:pid',
  keyBinding: true,
  statusManagement: true,
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['family_name'], type: 'string', mandatory: true },
  ],
};
const INLINE = { pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann' } } };
/** An offer whose claims come from the attribute provider (which answers `providerAnswer`). */
const FROM_REGISTRY = { credentialClaims: { pid: { type: 'attributeProvider', attributeProviderId: 'registry' } } };
const BATCH = 3;
const TX_CODE_ATTEMPTS = 5;

let svc: TestService;
let instances: Instances;
let admin: string;
let provider: Server;
/** What the attribute provider answers: 202 keeps the claims pending, so the credential is deferred. */
const providerAnswer = { status: 202, body: { message: 'checking records' } as unknown };

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  const status = await svc.raw('PUT', '/api/status-list-config', { token: admin, body: { bits: 1, immediateUpdate: false, ttl: 60 } });
  expect(status.status, status.text).toBe(200);
  const created = await svc.raw('POST', '/api/issuer/credentials', { token: admin, body: PID });
  expect(created.status, created.text).toBe(201);
  const settings = await svc.raw('PUT', '/api/issuer/config', {
    token: admin,
    body: { batchSize: BATCH, txCodeMaxAttempts: TX_CODE_ATTEMPTS },
  });
  expect(settings.status, settings.text).toBe(200);
  provider = createServer((_req, res) => {
    res.writeHead(providerAnswer.status, { 'content-type': 'application/json' }).end(JSON.stringify(providerAnswer.body));
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  const registry = await svc.raw('POST', '/api/issuer/attribute-providers', {
    token: admin,
    body: {
      id: 'registry',
      name: 'Registry',
      url: `http://127.0.0.1:${(provider.address() as { port: number }).port}/claims`,
      auth: { type: 'none' },
    },
  });
  expect(registry.status, registry.text).toBe(201);
  instances = await instancesOf(svc);
});
afterAll(async () => {
  await instances?.stop();
  await new Promise<void>((resolve) => provider?.close(() => resolve()));
  await svc?.stop();
});

const issuerUrl = () => `${svc.url}/issuers/acme`;

/** A pre-authorized offer of pid through the management API: its session and code. */
async function offer(body: Record<string, unknown> = {}) {
  const reply = await svc.raw('POST', '/api/issuer/offer', {
    token: admin,
    body: { response_type: 'uri', flow: 'pre_authorized_code', credentialConfigurationIds: ['pid'], credentialClaims: INLINE, ...body },
  });
  expect(reply.status, reply.text).toBe(201);
  const code = reply.body.credentialOffer.grants[PRE_AUTHORIZED_GRANT]['pre-authorized_code'] as string;
  return { session: reply.body.session as string, code };
}

const tokenRequest = (instance: TestService, code: string, txCode?: string) =>
  instance.raw('POST', '/issuers/acme/token', {
    form: { grant_type: PRE_AUTHORIZED_GRANT, 'pre-authorized_code': code, ...(txCode !== undefined && { tx_code: txCode }) },
  });

async function accessToken(code: string) {
  const reply = await tokenRequest(svc, code);
  expect(reply.status, reply.text).toBe(200);
  return reply.body.access_token as string;
}

/** A key proof of `key` for `nonce` (else a fresh c_nonce), made before any race starts. */
async function keyProof(key: HolderKey, nonce?: string) {
  return proofFor(key, issuerUrl(), nonce ?? (await svc.raw('POST', '/issuers/acme/nonce')).body.c_nonce);
}

const credentialRequest = (instance: TestService, token: string, proofs: string[]) =>
  instance.raw('POST', '/issuers/acme/credential', {
    headers: { authorization: `Bearer ${token}` },
    body: { credential_configuration_id: 'pid', proofs: { jwt: proofs } },
  });

const rowsOf = async (table: 'issued_credentials' | 'status_entries' | 'configurations_taken' | 'deferred_transactions', session: string) =>
  (await svc.db.selectFrom(table).select('session_id').where('session_id', '=', session).execute()).length;

/** Proofs for `requests` requests of `keysEach` fresh keys each; each request has its own c_nonce (a batch shares one). */
async function proofSets(requests: number, keysEach: number) {
  return Promise.all(
    Array.from({ length: requests }, async () => {
      const { c_nonce } = (await svc.raw('POST', '/issuers/acme/nonce')).body;
      return Promise.all(Array.from({ length: keysEach }, async () => keyProof(await holderKey(), c_nonce)));
    }),
  );
}

describe('each configuration once per offer', () => {
  it('16 parallel credential requests of one access token, each with its own nonce and key: exactly one credential', async () => {
    const { session, code } = await offer();
    const token = await accessToken(code);
    const proofs = await proofSets(16, 1);
    const replies = await race(instances.all, 16, (instance, i) => credentialRequest(instance, token, proofs[i] as string[]));
    expect(tally(replies)).toEqual({ '200': 1, '400 invalid_credential_request': 15 });
    expect(replies.find((r) => r.status === 200)?.body.credentials).toHaveLength(1);
    expect(await rowsOf('issued_credentials', session)).toBe(1);
    expect(await rowsOf('status_entries', session)).toBe(1);
    expect(await rowsOf('configurations_taken', session)).toBe(1);
  });

  it(`with batches of ${BATCH} keys: exactly ${BATCH} credentials and status entries, never ${BATCH} per request`, async () => {
    const { session, code } = await offer();
    const token = await accessToken(code);
    const proofs = await proofSets(16, BATCH);
    const replies = await race(instances.all, 16, (instance, i) => credentialRequest(instance, token, proofs[i] as string[]));
    expect(tally(replies)).toEqual({ '200': 1, '400 invalid_credential_request': 15 });
    expect(replies.find((r) => r.status === 200)?.body.credentials).toHaveLength(BATCH);
    expect(await rowsOf('status_entries', session)).toBe(BATCH);
    expect(await rowsOf('issued_credentials', session)).toBe(1);
  });

  it('a request that fails before anything is made gives the configuration back', async () => {
    const { session, code } = await offer();
    const token = await accessToken(code);
    providerAnswer.status = 500;
    const failing = await offer(FROM_REGISTRY);
    const failed = await credentialRequest(svc, await accessToken(failing.code), [await keyProof(await holderKey())]);
    providerAnswer.status = 202;
    expect(failed.status).toBe(400);
    expect(await rowsOf('configurations_taken', failing.session)).toBe(0);
    // The unrelated offer is untouched by that, and issues once.
    expect((await credentialRequest(svc, token, [await keyProof(await holderKey())])).status).toBe(200);
    expect(await rowsOf('configurations_taken', session)).toBe(1);
  });
});

describe('the transaction code lock-out', () => {
  /** A wrong guess that was evaluated, or any other refusal (the offer locked, its code gone with the lock). */
  const verdictOf = (reply: { status: number; body: any }) =>
    reply.status === 200 ? '200' : /^wrong transaction code/.test(reply.body.error_description) ? 'evaluated' : 'refused';

  it(`32 parallel wrong guesses: exactly ${TX_CODE_ATTEMPTS} are evaluated, the rest find the offer locked, and then the right code fails too`, async () => {
    const { session, code } = await offer({ tx_code: '493817' });
    const replies = await race(instances.all, 32, (instance, i) => tokenRequest(instance, code, String(100000 + i)));
    expect(tally(replies, verdictOf)).toEqual({ evaluated: TX_CODE_ATTEMPTS, refused: 32 - TX_CODE_ATTEMPTS });
    expect(replies.every((reply) => reply.body.error === 'invalid_grant')).toBe(true);
    const row = await svc.db
      .selectFrom('sessions')
      .select(['tx_code_failed_attempts', 'status'])
      .where('id', '=', session)
      .executeTakeFirst();
    expect(row).toEqual({ tx_code_failed_attempts: TX_CODE_ATTEMPTS, status: 'failed' });
    const right = await tokenRequest(svc, code, '493817');
    expect(right.status).toBe(400);
    expect(right.body.error).toBe('invalid_grant');
  });

  it('the right code racing 12 copies of itself and 3 wrong guesses: exactly one token', async () => {
    const { session, code } = await offer({ tx_code: '204060' });
    const replies = await race(instances.all, 16, (instance, i) =>
      tokenRequest(instance, code, i % 5 === 4 ? String(900000 + i) : '204060'),
    );
    expect(tally(replies)).toEqual({ '200': 1, '400 invalid_grant': 15 });
    const row = await svc.db
      .selectFrom('sessions')
      .select(['tx_code_failed_attempts', 'consumed'])
      .where('id', '=', session)
      .executeTakeFirst();
    expect(row?.tx_code_failed_attempts).toBeLessThanOrEqual(3);
    expect(Boolean(row?.consumed)).toBe(true);
  });
});

describe('deferred transactions', () => {
  /** A credential request whose claims are pending: its transaction id and access token. */
  async function deferred() {
    const made = await offer(FROM_REGISTRY);
    const token = await accessToken(made.code);
    const reply = await credentialRequest(svc, token, [await keyProof(await holderKey())]);
    expect(reply.status, reply.text).toBe(202);
    return { session: made.session, token, transactionId: reply.body.transaction_id as string };
  }
  const complete = (instance: TestService, transactionId: string) =>
    instance.raw('POST', `/api/issuer/deferred/${transactionId}/complete`, {
      token: admin,
      body: { claims: { given_name: 'Erika', family_name: 'Mustermann' } },
    });
  const poll = (instance: TestService, token: string, transactionId: string) =>
    instance.raw('POST', '/issuers/acme/deferred-credential', {
      headers: { authorization: `Bearer ${token}` },
      body: { transaction_id: transactionId },
    });

  it('16 parallel completions: exactly one; 16 parallel polls then: the credentials exactly once', async () => {
    const { session, token, transactionId } = await deferred();
    const completions = await race(instances.all, 16, (instance) => complete(instance, transactionId));
    expect(tally(completions)).toEqual({ '200': 1, '409': 15 });
    const polls = await race(instances.all, 16, (instance) => poll(instance, token, transactionId));
    expect(tally(polls)).toEqual({ '200': 1, '400 invalid_transaction_id': 15 });
    expect(polls.find((r) => r.status === 200)?.body.credentials).toHaveLength(1);
    expect(await rowsOf('issued_credentials', session)).toBe(1);
    const row = await svc.db
      .selectFrom('deferred_transactions')
      .select(['status', 'credentials'])
      .where('id', '=', transactionId)
      .executeTakeFirst();
    expect(row).toEqual({ status: 'retrieved', credentials: null });
  });

  it('completions racing failures: exactly one of them applies', async () => {
    const { transactionId } = await deferred();
    const replies = await race(instances.all, 16, (instance, i) =>
      i % 2 ? instance.raw('POST', `/api/issuer/deferred/${transactionId}/fail`, { token: admin }) : complete(instance, transactionId),
    );
    expect(tally(replies)).toEqual({ '200': 1, '409': 15 });
    const row = await svc.db.selectFrom('deferred_transactions').select('status').where('id', '=', transactionId).executeTakeFirst();
    expect(['ready', 'failed']).toContain(row?.status);
  });
});

describe('notifications', () => {
  it('16 parallel notifications of one credential: every one is kept in the session', async () => {
    const { session, code } = await offer();
    const token = await accessToken(code);
    const issued = await credentialRequest(svc, token, [await keyProof(await holderKey())]);
    expect(issued.status, issued.text).toBe(200);
    const events = ['credential_accepted', 'credential_deleted'];
    const replies = await race(instances.all, 16, (instance, i) =>
      instance.raw('POST', '/issuers/acme/notification', {
        headers: { authorization: `Bearer ${token}` },
        body: { notification_id: issued.body.notification_id, event: events[i % 2] },
      }),
    );
    expect(tally(replies)).toEqual({ '204': 16 });
    const view = await svc.raw('GET', `/api/session/${session}`, { token: admin });
    expect(countOf(view.body.notifications.map((n: { event: string }) => n.event))).toEqual({
      credential_accepted: 8,
      credential_deleted: 8,
    });
  });
});

describe('refresh tokens and DPoP', () => {
  /** The authorization code flow as Bearer (no DPoP anywhere): its tokens. */
  async function codeFlowTokens() {
    const made = await svc.raw('POST', '/api/issuer/offer', {
      token: admin,
      body: { response_type: 'uri', flow: 'authorization_code', credentialConfigurationIds: ['pid'], credentialClaims: INLINE },
    });
    expect(made.status, made.text).toBe(201);
    const { verifier, challenge } = pkce();
    const issuerState = made.body.credentialOffer.grants.authorization_code.issuer_state as string;
    const pushed = await pushAuthorizationRequest(svc, 'acme', issuerState, { code_challenge: challenge });
    expect(pushed.status, pushed.text).toBe(201);
    const answer = await authorizeRequest(svc, 'acme', { client_id: 'raw-wallet', request_uri: pushed.body.request_uri });
    const code = answer.location?.searchParams.get('code') as string;
    const token = await redeemCode(svc, 'acme', code, verifier);
    expect(token.status, token.text).toBe(200);
    expect(token.body.token_type).toBe('Bearer');
    return token.body as { access_token: string; refresh_token: string };
  }
  const bearerRefreshToken = async () => (await codeFlowTokens()).refresh_token;
  const refresh = async (refreshToken: string, key?: HolderKey) =>
    svc.raw('POST', '/issuers/acme/token', {
      form: { grant_type: 'refresh_token', refresh_token: refreshToken },
      ...(key && { headers: { dpop: await dpopProof(key, `${issuerUrl()}/token`) } }),
    });

  it('a refresh proven with a DPoP key binds the refresh tokens that follow to that key', async () => {
    const key = await holderKey();
    const bound = await refresh(await bearerRefreshToken(), key);
    expect(bound.status, bound.text).toBe(200);
    expect(bound.body.token_type).toBe('DPoP');
    const next = bound.body.refresh_token as string;
    for (const [name, attempt] of [
      ['without a proof', () => refresh(next)],
      ['with another key', async () => refresh(next, await holderKey())],
    ] as const) {
      const reply = await attempt();
      expect(reply.status, name).toBe(400);
      expect(reply.body, name).toMatchObject({
        error: 'invalid_grant',
        error_description: expect.stringMatching(/bound to another DPoP key/),
      });
    }
    const proven = await refresh(next, key);
    expect(proven.status, proven.text).toBe(200);
    expect(proven.body.token_type).toBe('DPoP');
  });

  it('each refreshed access token obtains each configuration once more (16 parallel requests each), the first one never again', async () => {
    const first = await codeFlowTokens();
    expect((await credentialRequest(svc, first.access_token, [await keyProof(await holderKey())])).status).toBe(200);
    let refreshToken = first.refresh_token;
    for (const round of [1, 2]) {
      const refreshed = await refresh(refreshToken);
      expect(refreshed.status, refreshed.text).toBe(200);
      refreshToken = refreshed.body.refresh_token;
      const proofs = await proofSets(16, 1);
      const replies = await race(instances.all, 16, (instance, i) =>
        credentialRequest(instance, refreshed.body.access_token, proofs[i] as string[]),
      );
      expect(tally(replies), `round ${round}`).toEqual({ '200': 1, '400 invalid_credential_request': 15 });
    }
    const again = await credentialRequest(svc, first.access_token, [await keyProof(await holderKey())]);
    expect(again.body).toMatchObject({
      error: 'invalid_credential_request',
      error_description: expect.stringMatching(/already been issued/),
    });
    const [session] = await svc.db
      .selectFrom('configurations_taken')
      .select(['session_id', 'round'])
      .orderBy('created_at', 'desc')
      .limit(1)
      .execute();
    const rounds = await svc.db
      .selectFrom('configurations_taken')
      .select('round')
      .where('session_id', '=', session?.session_id as string)
      .execute();
    expect(rounds.map((r) => r.round).sort()).toEqual([0, 1, 2]);
    // A credential of its own each time: its own status entry and notification.
    expect(await rowsOf('issued_credentials', session?.session_id as string)).toBe(3);
    expect(await rowsOf('status_entries', session?.session_id as string)).toBe(3);
  });

  it('a Bearer refresh token stays usable as Bearer until a proof binds it', async () => {
    const first = await refresh(await bearerRefreshToken());
    expect(first.status, first.text).toBe(200);
    expect(first.body.token_type).toBe('Bearer');
    const second = await refresh(first.body.refresh_token);
    expect(second.status, second.text).toBe(200);
  });
});
