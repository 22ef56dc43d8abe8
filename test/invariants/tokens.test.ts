// Issue 24: the single-use rules of the issuer's authorization server hold when a wallet (or an
// attacker with its secret) sends the same thing many times at once. Each rule is raced through the
// real server, over two instances of one PostgreSQL database (one instance on SQLite), and the test
// states exactly how many requests won, how the others lost, and what the database kept. PostgreSQL is
// the run that can catch a read-then-write: on SQLite the one process runs a request's queries
// synchronously (node:sqlite), so requests interleave only where one waits on I/O in between.
import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthorizationAnswer, authorizeRequest, pushAuthorizationRequest } from '../support/authorization.js';
import { startService, type TestService } from '../support/service.js';
import { authorizeFromOffer, dpopProof, holderKey, pkce, WALLET_REDIRECT_URI, walletClient } from '../support/wallet.js';
import { attestationHeaders, type WalletProvider, walletInstance, walletProvider } from '../support/wallet-provider.js';
import { countOf, type Instances, instancesOf, outcome, race, tally } from './support.js';

const PRE_AUTHORIZED_GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const CLIENT_ID = 'raw-wallet';
const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt', scope: 'pid_scope' },
  vct: 'urn:example:pid',
  keyBinding: true,
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['family_name'], type: 'string', mandatory: true },
  ],
};
const CLAIMS = { pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann' } } };

let svc: TestService;
let instances: Instances;
let provider: WalletProvider;
/** Admin tokens per tenant: acme (plain), attested (wallet attestation required), challenged (and a challenge in every proof). */
const admins: Record<string, string> = {};

beforeAll(async () => {
  svc = await startService();
  provider = await walletProvider('Invariant Wallets');
  const settings = {
    acme: {},
    attested: { walletProviders: [{ name: provider.name, certificates: [provider.caPem] }], walletAttestationRequired: true },
    challenged: {
      walletProviders: [{ name: provider.name, certificates: [provider.caPem] }],
      walletAttestationRequired: true,
      walletAttestationChallengeRequired: true,
    },
  };
  for (const [tenant, body] of Object.entries(settings)) {
    const token = (await svc.tenant(tenant)).token;
    admins[tenant] = token;
    const created = await svc.raw('POST', '/api/issuer/credentials', { token, body: PID });
    expect(created.status, created.text).toBe(201);
    const put = await svc.raw('PUT', '/api/issuer/config', { token, body });
    expect(put.status, put.text).toBe(200);
  }
  // Started once the tenants are set up, so that nothing depends on how fast settings reach another instance.
  instances = await instancesOf(svc);
});
afterAll(async () => {
  await instances?.stop();
  await svc?.stop();
});

const issuerOf = (tenant: string) => `${svc.url}/issuers/${tenant}`;

async function offer(flow: 'pre_authorized_code' | 'authorization_code', tenant = 'acme') {
  const reply = await svc.raw('POST', '/api/issuer/offer', {
    token: admins[tenant],
    body: { response_type: 'uri', flow, credentialConfigurationIds: ['pid'], credentialClaims: CLAIMS },
  });
  expect(reply.status, reply.text).toBe(201);
  const grants = reply.body.credentialOffer.grants;
  return {
    session: reply.body.session as string,
    uri: reply.body.uri as string,
    preAuthorizedCode: grants[PRE_AUTHORIZED_GRANT]?.['pre-authorized_code'] as string,
    issuerState: grants.authorization_code?.issuer_state as string,
  };
}

const offers = (count: number, flow: 'pre_authorized_code' | 'authorization_code', tenant = 'acme') =>
  Promise.all(Array.from({ length: count }, () => offer(flow, tenant)));

const tokenRequest = (instance: TestService, form: Record<string, string>, headers: Record<string, string> = {}, tenant = 'acme') =>
  instance.raw('POST', `/issuers/${tenant}/token`, { form, headers });

const preAuthorizedGrant = (code: string) => ({ grant_type: PRE_AUTHORIZED_GRANT, 'pre-authorized_code': code });

/** A credential request with whatever the access token allows: invalid_token when the token no longer works. */
const credentialRequest = (
  instance: TestService,
  accessToken: string,
  body: Record<string, unknown> = { credential_configuration_id: 'pid' },
) => instance.raw('POST', '/issuers/acme/credential', { headers: { authorization: `Bearer ${accessToken}` }, body });

/** Offer, PAR and the authorization endpoint by hand: a code of client raw-wallet, its PKCE verifier and its session. */
async function authorizationCode() {
  const created = await offer('authorization_code');
  const { verifier, challenge } = pkce();
  const pushed = await pushAuthorizationRequest(svc, 'acme', created.issuerState, { code_challenge: challenge });
  expect(pushed.status, pushed.text).toBe(201);
  const answer = await authorizeRequest(svc, 'acme', { client_id: CLIENT_ID, request_uri: pushed.body.request_uri });
  expect(answer.status, answer.body).toBe(302);
  return { session: created.session, code: answer.location?.searchParams.get('code') as string, verifier };
}

const codeGrant = (code: string, verifier: string) => ({
  grant_type: 'authorization_code',
  code,
  code_verifier: verifier,
  redirect_uri: WALLET_REDIRECT_URI,
  client_id: CLIENT_ID,
});

/** How the one-time value stores keep a value: its SHA-256, base64url, never the value itself. */
const storedHash = (value: string) => createHash('sha256').update(value).digest('base64url');

async function handlesOf(sessionId: string) {
  const rows = await svc.db.selectFrom('session_handles').select('purpose').where('session_id', '=', sessionId).execute();
  return countOf(rows.map((row) => row.purpose));
}

async function logsOf(sessionId: string) {
  const rows = await svc.db.selectFrom('session_logs').select('message').where('session_id', '=', sessionId).execute();
  return countOf(rows.map((row) => row.message));
}

async function sessionRow(sessionId: string) {
  const row = await svc.db
    .selectFrom('sessions')
    .select(['status', 'consumed', 'public_data'])
    .where('id', '=', sessionId)
    .executeTakeFirstOrThrow();
  return { status: row.status, consumed: Boolean(Number(row.consumed)), public: JSON.parse(row.public_data) as Record<string, unknown> };
}

const nonceRows = (purpose: string, value: string) =>
  svc.db
    .selectFrom('nonces')
    .select('purpose')
    .where('hash', '=', storedHash(`${purpose}:${value}`))
    .execute();

describe('single use under concurrency: codes and tokens', () => {
  it('a pre-authorized code raced 32 times yields exactly one access token', async () => {
    const created = await offer('pre_authorized_code');
    const replies = await race(instances.all, 32, (instance) => tokenRequest(instance, preAuthorizedGrant(created.preAuthorizedCode)));
    expect(tally(replies)).toEqual({ '200': 1, '400 invalid_grant': 31 });
    expect(replies.filter((reply) => reply.body.access_token)).toHaveLength(1);
    // Decided by one conditional UPDATE of sessions (consumed = 0 and an open status): one row changed, one log line.
    expect(await sessionRow(created.session)).toMatchObject({ consumed: true, status: 'fetched' });
    expect((await logsOf(created.session))['pre-authorized code redeemed']).toBe(1);
  });

  it('an authorization code raced 32 times is spent once; each of the 31 replays revokes what it obtained (RFC 6749 section 4.1.2)', async () => {
    const { session, code, verifier } = await authorizationCode();
    const replies = await race(instances.all, 32, (instance) => tokenRequest(instance, codeGrant(code, verifier)));
    // Exactly one request spent the code (a conditional UPDATE renaming the purpose of its one row in
    // session_handles): the other 31 each found it spent, as a replay.
    const replayed = (reply: (typeof replies)[number]) =>
      reply.status === 400 &&
      reply.body.error === 'invalid_grant' &&
      reply.body.error_description === 'the authorization code was already used; the tokens issued for it are revoked';
    expect(replies.filter(replayed)).toHaveLength(31);
    expect(await handlesOf(session)).toMatchObject({ 'authorization_code:spent': 1 });
    expect((await handlesOf(session)).authorization_code).toBeUndefined();
    // The one that spent it gets its tokens, unless a replay's revocation (status failed) commits before
    // its compare-and-set on the offer, which then refuses it too: by design, as RFC 6749 section 4.1.2
    // lets a replayed code take down the first use.
    const [spender] = replies.filter((reply) => !replayed(reply));
    expect(outcome(spender as (typeof replies)[number])).toBeOneOf(['200', '400 invalid_grant']);

    // Every replay revoked the session's tokens: the winner's are dead however the race went.
    expect((await logsOf(session))['tokens revoked']).toBe(31);
    expect(await sessionRow(session)).toMatchObject({ status: 'failed', public: expect.objectContaining({ tokensRevoked: true }) });
    if (spender?.status === 200) {
      expect((await credentialRequest(svc, spender.body.access_token)).body.error).toBe('invalid_token');
      const refreshed = await tokenRequest(svc, { grant_type: 'refresh_token', refresh_token: spender.body.refresh_token });
      expect(refreshed.body.error).toBe('invalid_grant');
    }
  });

  it('a request_uri raced 16 times at the authorization endpoint is taken once: one code, 15 invalid_request_uri', async () => {
    const created = await offer('authorization_code');
    const pushed = await pushAuthorizationRequest(svc, 'acme', created.issuerState);
    expect(pushed.status, pushed.text).toBe(201);
    const query = { client_id: CLIENT_ID, request_uri: pushed.body.request_uri };
    const answers = await race(instances.all, 16, (instance) => authorizeRequest(instance, 'acme', query));
    expect(tally(answers, authorizationOutcome)).toEqual({ '302 code': 1, '400 invalid_request_uri': 15 });
    // One conditional UPDATE of session_handles.purpose took the request_uri; only its taker issued a code.
    const handles = await handlesOf(created.session);
    expect(handles).toMatchObject({ 'request_uri:spent': 1, authorization_code: 1 });
    expect(handles.request_uri).toBeUndefined();
    expect((await logsOf(created.session))['authorization code issued']).toBe(1);
  });

  it('16 pushed requests for one offer at once: each stored in turn, and only the request_uri of the one kept works', async () => {
    const created = await offer('authorization_code');
    const pushed = await race(instances.all, 16, (instance) => pushAuthorizationRequest(instance, 'acme', created.issuerState));
    expect(tally(pushed)).toEqual({ '201': 16 });
    // Each request replaced the one before in the statement that stored it (a compare-and-set on the
    // session's version, the handles dropped and added only with it): one request_uri is left.
    expect((await handlesOf(created.session)).request_uri).toBe(1);
    expect((await logsOf(created.session))['authorization request pushed']).toBe(16);
    const answers = await Promise.all(
      pushed.map((reply) => authorizeRequest(svc, 'acme', { client_id: CLIENT_ID, request_uri: reply.body.request_uri })),
    );
    expect(tally(answers, authorizationOutcome)).toEqual({ '302 code': 1, '400 invalid_request_uri': 15 });
  });

  it('a DPoP proof jti used at PAR and again at the token endpoint is refused there, and the code stays unspent', async () => {
    const key = await holderKey();
    const created = await offer('authorization_code');
    const { verifier, challenge } = pkce();
    const jti = `par-then-token-${Date.now()}`;
    const parProof = await dpopProof(key, `${issuerOf('acme')}/par`, { claims: { jti } });
    const pushed = await pushAuthorizationRequest(svc, 'acme', created.issuerState, { code_challenge: challenge }, { dpop: parProof });
    expect(pushed.status, pushed.text).toBe(201);
    const answer = await authorizeRequest(svc, 'acme', { client_id: CLIENT_ID, request_uri: pushed.body.request_uri });
    const code = answer.location?.searchParams.get('code') as string;
    const token = `${issuerOf('acme')}/token`;
    // The same jti from 8 token requests at once (each on its own instance's statement): all refused, nothing spent.
    const replayed = await race(instances.all, 8, async (instance) =>
      tokenRequest(instance, codeGrant(code, verifier), { dpop: await dpopProof(key, token, { claims: { jti } }) }),
    );
    expect(tally(replayed)).toEqual({ '400 invalid_dpop_proof': 8 });
    expect(await handlesOf(created.session)).toMatchObject({ authorization_code: 1 });
    const fresh = await tokenRequest(svc, codeGrant(code, verifier), { dpop: await dpopProof(key, token) });
    expect(fresh.status, fresh.text).toBe(200);
    expect(fresh.body.token_type).toBe('DPoP');
    expect(await nonceRows('dpop-jti', jti)).toHaveLength(1);
  });

  it('a refresh token raced 32 times rotates once; the 31 replays revoke every token of the session (RFC 9700 section 4.14.2)', async () => {
    const created = await offer('authorization_code');
    const { token } = await authorizeFromOffer(created.uri, { scope: 'pid_scope' });
    const { access_token: accessToken, refresh_token: refreshToken } = token.accessTokenResponse;
    const replies = await race(instances.all, 32, (instance) =>
      tokenRequest(instance, { grant_type: 'refresh_token', refresh_token: refreshToken as string }),
    );
    expect(tally(replies)).toEqual({ '200': 1, '400 invalid_grant': 31 });
    const winner = replies.find((reply) => reply.status === 200);
    expect(winner?.body.refresh_token).toEqual(expect.any(String));

    expect(await handlesOf(created.session)).toMatchObject({ 'refresh_token:spent': 1 });
    expect((await logsOf(created.session))['tokens revoked']).toBe(31);
    expect(await sessionRow(created.session)).toMatchObject({ status: 'failed', public: expect.objectContaining({ tokensRevoked: true }) });
    // Nothing of the session works any more: the new pair, the old access token.
    expect((await tokenRequest(svc, { grant_type: 'refresh_token', refresh_token: winner?.body.refresh_token })).body.error).toBe(
      'invalid_grant',
    );
    expect((await credentialRequest(svc, winner?.body.access_token)).body.error).toBe('invalid_token');
    expect((await credentialRequest(svc, accessToken)).body.error).toBe('invalid_token');
  });
});

/** A 302 with a code, a 302 with an error, or the error of a 400. */
function authorizationOutcome({ status, location, body }: AuthorizationAnswer): string {
  if (status === 302) return location?.searchParams.has('code') ? '302 code' : `302 ${location?.searchParams.get('error')}`;
  return `${status} ${JSON.parse(body).error}`;
}

describe('single use under concurrency: proofs and nonces', () => {
  it('one DPoP proof sent with 16 different pre-authorized codes at once is accepted once', async () => {
    const created = await offers(16, 'pre_authorized_code');
    const key = await holderKey();
    const proof = await dpopProof(key, `${issuerOf('acme')}/token`);
    const replies = await race(instances.all, 16, (instance, i) =>
      tokenRequest(instance, preAuthorizedGrant((created[i] as (typeof created)[number]).preAuthorizedCode), { dpop: proof }),
    );
    expect(tally(replies)).toEqual({ '200': 1, '400 invalid_dpop_proof': 15 });
    expect(replies.filter((reply) => reply.status === 400).map((reply) => reply.body.error_description)).toEqual(
      Array(15).fill('this DPoP proof was used before'),
    );
    expect(replies.find((reply) => reply.status === 200)?.body.token_type).toBe('DPoP');
    // The proof's jti is one row of nonces (primary key on its hash); the refused requests spent nothing.
    expect(await nonceRows('dpop-jti', decodeJwt(proof).jti as string)).toHaveLength(1);
    const consumed = await Promise.all(created.map(async ({ session }) => (await sessionRow(session)).consumed));
    expect(consumed.filter(Boolean)).toHaveLength(1);
    const retried = await Promise.all(
      created
        .filter((_, i) => !consumed[i])
        .map(async ({ preAuthorizedCode }) =>
          tokenRequest(svc, preAuthorizedGrant(preAuthorizedCode), { dpop: await dpopProof(key, `${issuerOf('acme')}/token`) }),
        ),
    );
    expect(tally(retried)).toEqual({ '200': 15 });
  });

  it('one DPoP proof sent with 16 credential requests of its access token at once is accepted once; the refused ones spend no c_nonce', async () => {
    const [created] = await offers(1, 'pre_authorized_code');
    const key = await holderKey();
    const token = await tokenRequest(svc, preAuthorizedGrant((created as { preAuthorizedCode: string }).preAuthorizedCode), {
      dpop: await dpopProof(key, `${issuerOf('acme')}/token`),
    });
    expect(token.status, token.text).toBe(200);
    const accessToken = token.body.access_token as string;
    const client = walletClient([key]);
    const issuerMetadata = await client.resolveIssuerMetadata(issuerOf('acme'));
    const nonces = await Promise.all(
      Array.from({ length: 16 }, async () => (await svc.raw('POST', '/issuers/acme/nonce')).body.c_nonce as string),
    );
    const keyProofs = await Promise.all(
      nonces.map(
        async (nonce) =>
          (await client.createCredentialRequestJwtProof({ issuerMetadata, signer: key.signer, nonce, credentialConfigurationId: 'pid' }))
            .jwt,
      ),
    );
    const proof = await dpopProof(key, `${issuerOf('acme')}/credential`, { accessToken });
    const replies = await race(instances.all, 16, (instance, i) =>
      instance.raw('POST', '/issuers/acme/credential', {
        headers: { authorization: `DPoP ${accessToken}`, dpop: proof },
        body: { credential_configuration_id: 'pid', proofs: { jwt: [keyProofs[i]] } },
      }),
    );
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1);
    const refused = replies.filter((reply) => reply.status !== 200);
    expect(refused.map((reply) => reply.body?.error_description ?? reply.headers.get('www-authenticate'))).toEqual(
      Array(15).fill(expect.stringMatching(/used before/)),
    );
    expect(await nonceRows('dpop-jti', decodeJwt(proof).jti as string)).toHaveLength(1);
    // The proof was refused before the request's c_nonce was looked at: 15 of the 16 are still there.
    const left = await Promise.all(nonces.map((nonce) => nonceRows('c_nonce', nonce)));
    expect(left.filter((rows) => rows.length === 1)).toHaveLength(15);
  });

  it('one c_nonce in the key proofs of 16 credential requests at once (each its own offer and access token) issues one credential', async () => {
    const created = await offers(16, 'pre_authorized_code');
    const accessTokens = await Promise.all(
      created.map(async ({ preAuthorizedCode }) => {
        const reply = await tokenRequest(svc, preAuthorizedGrant(preAuthorizedCode));
        expect(reply.status, reply.text).toBe(200);
        return reply.body.access_token as string;
      }),
    );
    const keys = await Promise.all(created.map(() => holderKey()));
    const client = walletClient(keys);
    const issuerMetadata = await client.resolveIssuerMetadata(issuerOf('acme'));
    const keyProof = async (index: number, nonce: string) =>
      (
        await client.createCredentialRequestJwtProof({
          issuerMetadata,
          signer: (keys[index] as (typeof keys)[number]).signer,
          nonce,
          credentialConfigurationId: 'pid',
        })
      ).jwt;
    const nonce = (await svc.raw('POST', '/issuers/acme/nonce')).body.c_nonce as string;
    const proofs = await Promise.all(keys.map((_, i) => keyProof(i, nonce)));
    const replies = await race(instances.all, 16, (instance, i) =>
      credentialRequest(instance, accessTokens[i] as string, { credential_configuration_id: 'pid', proofs: { jwt: [proofs[i]] } }),
    );
    expect(tally(replies)).toEqual({ '200': 1, '400 invalid_nonce': 15 });
    expect(replies.find((reply) => reply.status === 200)?.body.credentials).toHaveLength(1);
    // The nonce was one row of nonces, deleted by the one request whose DELETE found it.
    expect(await nonceRows('c_nonce', nonce)).toHaveLength(0);
    const statuses = await Promise.all(created.map(async ({ session }) => (await sessionRow(session)).status));
    expect(countOf(statuses)).toEqual({ completed: 1, fetched: 15 });
    // The refused requests spent nothing: each gets its credential with a nonce of its own.
    const retried = await Promise.all(
      statuses.map(async (status, i) => {
        if (status === 'completed') return undefined;
        const fresh = (await svc.raw('POST', '/issuers/acme/nonce')).body.c_nonce as string;
        return credentialRequest(svc, accessTokens[i] as string, {
          credential_configuration_id: 'pid',
          proofs: { jwt: [await keyProof(i, fresh)] },
        });
      }),
    );
    expect(tally(retried.filter((reply) => reply !== undefined))).toEqual({ '200': 15 });
  });
});

describe('single use under concurrency: wallet attestation', () => {
  it('one client attestation proof (one jti) sent with 16 pushed requests at once is accepted once', async () => {
    const created = await offers(16, 'authorization_code', 'attested');
    const headers = await attestationHeaders(provider, await walletInstance(), CLIENT_ID, issuerOf('attested'));
    const replies = await race(instances.all, 16, (instance, i) =>
      pushAuthorizationRequest(instance, 'attested', (created[i] as (typeof created)[number]).issuerState, {}, headers),
    );
    expect(tally(replies)).toEqual({ '201': 1, '401 invalid_client': 15 });
    expect(replies.filter((reply) => reply.status === 401).map((reply) => reply.body.error_description)).toEqual(
      Array(15).fill('this client attestation proof was used before'),
    );
    const jti = decodeJwt(headers['oauth-client-attestation-pop'] as string).jti as string;
    expect(await nonceRows('attestation-pop-jti', jti)).toHaveLength(1);
    const pushedFor = await Promise.all(created.map(async ({ session }) => (await handlesOf(session)).request_uri ?? 0));
    expect(pushedFor.filter((count) => count > 0)).toEqual([1]);
  });

  it('a client attestation proof used at PAR is refused at the token endpoint (named as a replay), and the code stays unspent', async () => {
    const created = await offer('authorization_code', 'attested');
    const instance = await walletInstance();
    const headers = await attestationHeaders(provider, instance, CLIENT_ID, issuerOf('attested'));
    const { verifier, challenge } = pkce();
    const pushed = await pushAuthorizationRequest(svc, 'attested', created.issuerState, { code_challenge: challenge }, headers);
    expect(pushed.status, pushed.text).toBe(201);
    const answer = await authorizeRequest(svc, 'attested', { client_id: CLIENT_ID, request_uri: pushed.body.request_uri });
    const code = answer.location?.searchParams.get('code') as string;
    // The same attestation and proof again, from 4 token requests at once: each refused as a replay, nothing spent.
    const replayed = await race(instances.all, 4, (other) => tokenRequest(other, codeGrant(code, verifier), headers, 'attested'));
    expect(tally(replayed)).toEqual({ '401 invalid_client': 4 });
    expect(replayed.map((reply) => reply.body.error_description)).toEqual(Array(4).fill('this client attestation proof was used before'));
    expect(await handlesOf(created.session)).toMatchObject({ authorization_code: 1 });
    const fresh = await tokenRequest(
      svc,
      codeGrant(code, verifier),
      await attestationHeaders(provider, instance, CLIENT_ID, issuerOf('attested')),
      'attested',
    );
    expect(fresh.status, fresh.text).toBe(200);
  });

  it('one attestation challenge in the proofs of 16 pushed requests at once (each proof its own jti) is accepted once', async () => {
    const created = await offers(16, 'authorization_code', 'challenged');
    const challenge = (await svc.raw('POST', '/issuers/challenged/challenge')).body.attestation_challenge as string;
    const instance = await walletInstance();
    const headers = await Promise.all(
      created.map(() => attestationHeaders(provider, instance, CLIENT_ID, issuerOf('challenged'), { pop: { challenge } })),
    );
    const replies = await race(instances.all, 16, (target, i) =>
      pushAuthorizationRequest(target, 'challenged', (created[i] as (typeof created)[number]).issuerState, {}, headers[i]),
    );
    expect(tally(replies)).toEqual({ '201': 1, '400 use_attestation_challenge': 15 });
    // Each refusal hands out a fresh challenge of its own to retry with.
    const fresh = replies.filter((reply) => reply.status === 400).map((reply) => reply.headers.get('oauth-client-attestation-challenge'));
    expect(new Set(fresh).size).toBe(15);
    expect(fresh).not.toContain(challenge);
    // The challenge was one row of nonces, deleted once; the refused proofs' jti were never remembered.
    expect(await nonceRows('attestation-challenge', challenge)).toHaveLength(0);
    const remembered = await Promise.all(
      headers.map(
        async (h) => (await nonceRows('attestation-pop-jti', decodeJwt(h['oauth-client-attestation-pop'] as string).jti as string)).length,
      ),
    );
    expect(remembered.filter(Boolean)).toEqual([1]);
  });
});
