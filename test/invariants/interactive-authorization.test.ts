// Issue 24: the single-use handles of interactive authorization and the flow's binding to its pushed
// request hold under parallel requests: a web step's request_uri opens the page once, a web_session
// takes one result, an auth_session one follow-up, and a flow raced by pushes for another
// configuration never yields a code for that configuration. Raced over two instances of one
// PostgreSQL database (one instance on SQLite), with exact counts.
import 'reflect-metadata';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redeemCode } from '../support/authorization.js';
import { signWebResult } from '../support/iae.js';
import { startService, type TestService } from '../support/service.js';
import { pkce, WALLET_REDIRECT_URI } from '../support/wallet.js';
import { countOf, type Instances, instancesOf, race, tally } from './support.js';

const CLIENT_ID = 'iae-wallet';
const PAGE = 'https://integrator.example/step';

let svc: TestService;
let instances: Instances;
let admin: string;
let integrator: CryptoKeyPair;

const membership = (id: string, scope: string, iaeActions: unknown[]) => ({
  id,
  config: { format: 'dc+sd-jwt', scope },
  vct: `urn:example:${id}`,
  fields: [{ path: ['member_level'], type: 'string', mandatory: true }],
  iaeActions,
});

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  integrator = (await generateKeyPair('ES256', { extractable: true })) as CryptoKeyPair;
  const callbackKey: JWK = await exportJWK(integrator.publicKey);
  const kycKey: JWK = await exportJWK((await generateKeyPair('ES256', { extractable: true })).publicKey);
  const step = (label: string, key = callbackKey, url = PAGE) => ({ type: 'redirect-to-web', url, callbackKey: key, label });
  for (const body of [
    membership('one-step', 'one_step_scope', [step('form')]),
    membership('two-steps', 'two_steps_scope', [step('form'), step('consent')]),
    membership('kyc', 'kyc_scope', [step('identity check', kycKey, 'https://kyc.example/check')]),
  ]) {
    const created = await svc.raw('POST', '/api/issuer/credentials', { token: admin, body });
    expect(created.status, created.text).toBe(201);
  }
  instances = await instancesOf(svc);
});
afterAll(async () => {
  await instances?.stop();
  await svc?.stop();
});

/** An authorization code offer of `ids` and a first interactive request for the configuration of `scope`: the web step's request_uri. */
async function startFlow(ids: string[], scope: string) {
  const offer = await svc.raw('POST', '/api/issuer/offer', {
    token: admin,
    body: { response_type: 'uri', flow: 'authorization_code', credentialConfigurationIds: ids },
  });
  expect(offer.status, offer.text).toBe(201);
  const issuerState = offer.body.credentialOffer.grants.authorization_code.issuer_state as string;
  const { verifier, challenge } = pkce();
  const started = await svc.raw('POST', '/issuers/acme/iae', {
    form: {
      client_id: CLIENT_ID,
      response_type: 'code',
      redirect_uri: WALLET_REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      issuer_state: issuerState,
      scope,
      interaction_types_supported: 'redirect_to_web',
    },
  });
  expect(started.status, started.text).toBe(200);
  return { session: offer.body.session as string, issuerState, verifier, challenge, requestUri: started.body.request_uri as string };
}

const openStep = (instance: TestService, requestUri: string) =>
  fetch(`${instance.url}/issuers/acme/authorize?${new URLSearchParams({ client_id: CLIENT_ID, request_uri: requestUri })}`, {
    redirect: 'manual',
  });

async function openPage(requestUri: string) {
  const response = await openStep(svc, requestUri);
  expect(response.status).toBe(302);
  return new URL(response.headers.get('location') as string);
}

/** The integrator's page posts a result; the 303 back to the wallet is read, not followed. */
async function postResult(instance: TestService, result: string) {
  const response = await fetch(`${instance.url}/issuers/acme/iae/web-result`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ result }).toString(),
    redirect: 'manual',
  });
  const location = response.headers.get('location');
  const text = await response.text();
  return { status: response.status, location: location ? new URL(location) : undefined, body: text ? JSON.parse(text) : undefined, text };
}

const liveHandles = async (session: string) =>
  countOf(
    (
      await svc.db
        .selectFrom('session_handles')
        .select('purpose')
        .where('session_id', '=', session)
        .where('purpose', 'not like', '%:spent')
        .execute()
    ).map((h) => h.purpose),
  );

describe('interactive authorization under parallel requests', () => {
  it("a web step's request_uri opens the integrator's page once", async () => {
    const flow = await startFlow(['one-step'], 'one_step_scope');
    const replies = await race(instances.all, 16, async (instance) => {
      const response = await openStep(instance, flow.requestUri);
      return { status: response.status, body: response.status === 302 ? undefined : await response.json() };
    });
    expect(tally(replies)).toEqual({ '302': 1, '400 invalid_request_uri': 15 });
    expect((await liveHandles(flow.session)).iae_web_session).toBe(1);
  });

  it('a web_session takes one result: 16 parallel signed results, one code', async () => {
    const flow = await startFlow(['one-step'], 'one_step_scope');
    const page = await openPage(flow.requestUri);
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => signWebResult(page, integrator.privateKey, { claims: { n: i } })),
    );
    const replies = await race(instances.all, 16, (instance, i) => postResult(instance, results[i] as string));
    expect(tally(replies)).toEqual({ '303': 1, '400 invalid_request': 15 });
    expect(await liveHandles(flow.session)).toMatchObject({ authorization_code: 1 });
    expect((await liveHandles(flow.session)).iae_web_session).toBeUndefined();
  });

  it('an auth_session takes one follow-up: 16 parallel continuations after the first web step, one second step', async () => {
    const flow = await startFlow(['two-steps'], 'two_steps_scope');
    const page = await openPage(flow.requestUri);
    const back = await postResult(svc, await signWebResult(page, integrator.privateKey));
    expect(back.status, back.text).toBe(303);
    const authSession = back.location?.searchParams.get('auth_session') as string;
    const replies = await race(instances.all, 16, (instance) =>
      instance.call('POST', '/issuers/acme/iae', { form: { auth_session: authSession, code_verifier: flow.verifier } }),
    );
    expect(tally(replies)).toEqual({ '200': 1, '400 invalid_request': 15 });
    expect(replies.find((r) => r.status === 200)?.body).toMatchObject({ status: 'require_interaction', type: 'redirect_to_web' });
    expect(await liveHandles(flow.session)).toMatchObject({ iae_auth_session: 1, request_uri: 1 });
  });

  it('a web result racing 15 pushes for another configuration never yields a code for that configuration', async () => {
    const flow = await startFlow(['one-step', 'kyc'], 'one_step_scope');
    const page = await openPage(flow.requestUri);
    const result = await signWebResult(page, integrator.privateKey);
    const push = (instance: TestService) =>
      instance.call('POST', '/issuers/acme/par', {
        form: {
          client_id: CLIENT_ID,
          response_type: 'code',
          redirect_uri: WALLET_REDIRECT_URI,
          code_challenge: flow.challenge,
          code_challenge_method: 'S256',
          issuer_state: flow.issuerState,
          authorization_details: JSON.stringify([{ type: 'openid_credential', credential_configuration_id: 'kyc' }]),
        },
      });
    // The result is posted in the middle of the pushes, to the last instance.
    const [pushes, raced] = await Promise.all([
      race(instances.all, 15, push),
      new Promise((resolve) => setImmediate(resolve)).then(() => postResult(instances.all.at(-1) as TestService, result)),
    ]);
    expect(tally(pushes)).toEqual({ '201': 15 });
    const code = raced.status === 303 ? raced.location?.searchParams.get('code') : undefined;
    if (code) {
      // The result won the race, so its code is for one-step alone, and a push after it dropped it or left it.
      const token = await redeemCode(svc, 'acme', code, flow.verifier, CLIENT_ID);
      if (token.status === 200) {
        const stored = await svc.running.services.sessions.get('acme', flow.session);
        expect(stored.public.authorized).toEqual(['one-step']);
      } else {
        expect(token.body.error).toBe('invalid_grant');
      }
    } else {
      expect(raced.status).toBe(400);
    }
    // Whatever the order, the flow of one-step is over and nothing of kyc's was authorized.
    const logs = (await svc.call('GET', `/api/session/${flow.session}/logs`, { token: admin })).body as { message: string }[];
    expect(logs.filter((l) => l.message === 'authorization code issued').length).toBeLessThanOrEqual(1);
    const stored = await svc.running.services.sessions.get('acme', flow.session);
    expect(stored.public.authorized ?? []).not.toContain('kyc');
  });
});
