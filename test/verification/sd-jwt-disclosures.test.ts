// RFC 9901 section 7.1: every Disclosure of an SD-JWT presentation is referenced by exactly one
// digest, of the Issuer-signed JWT or of another presented Disclosure (recursive disclosures), and
// no digest appears twice. The test wallet presents a credential the service issued, then bends
// the Disclosures it sends (with a KB-JWT whose sd_hash covers them, as a wallet would sign it);
// the refusal names the Disclosure in the session log, never its value. The redirect flow, the DC
// API and interactive authorization all reach the same check.
import { createHash, randomBytes } from 'node:crypto';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdJwtVc } from '../../wallet/credentials.js';
import { PID, PID_ADULT_QUERY, PID_VCT } from '../support/fixtures.js';
import { encryptIaeResponse, verifyIaeRequest } from '../support/iae.js';
import { dcApiResponse, presentSdJwt, type ResolvedRequest, resolveDcApiRequest, resolveRequest, submit } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { type HolderKey, holderKey, issueCredential, pkce, WALLET_REDIRECT_URI } from '../support/wallet.js';

const RESIDENCE_VCT = 'urn:example:residence';
/** Nested: address is a Disclosure whose value holds the digests of its own members; nationalities a disclosed array. */
const RESIDENCE = {
  id: 'residence',
  config: { format: 'dc+sd-jwt', scope: 'residence_scope' },
  vct: RESIDENCE_VCT,
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    {
      path: ['address'],
      type: 'object',
      children: [
        { path: ['street_address'], type: 'string' },
        { path: ['locality'], type: 'string' },
        { path: ['country'], type: 'string' },
      ],
    },
    { path: ['nationalities'], type: 'array', children: [{ path: [null], type: 'string' }] },
  ],
};
const RESIDENCE_CLAIMS = {
  given_name: 'Erika',
  address: { street_address: 'Heidestraße 17', locality: 'Köln', country: 'DE' },
  nationalities: ['DE', 'FR'],
};
const RESIDENCE_QUERY = {
  credentials: [
    {
      id: 'card',
      format: 'dc+sd-jwt',
      meta: { vct_values: [RESIDENCE_VCT] },
      claims: [{ path: ['address', 'locality'] }, { path: ['nationalities'] }],
    },
  ],
};
const ORIGIN = 'https://shop.example.com';
const CLIENT_ID = 'iae-wallet';

let svc: TestService;
let admin: string;
let pid: { credential: string; holder: import('jose').JWK };
let residence: { credential: string; holder: import('jose').JWK };

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  for (const body of [PID, RESIDENCE]) {
    const created = await svc.raw('POST', '/api/issuer/credentials', { token: admin, body });
    expect(created.status, created.text).toBe(201);
  }
  const trust = await svc.call('POST', '/api/trust-list', {
    token: admin,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(trust.status, trust.text).toBe(201);
  for (const [id, dcql_query] of [
    ['adult', PID_ADULT_QUERY],
    ['residence-check', RESIDENCE_QUERY],
  ] as const) {
    const config = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id, dcql_query } });
    expect(config.status, config.text).toBe(201);
  }
  // Interactive authorization: a credential issued after one presentation step of the PID.
  const iaeConfig = await svc.call('POST', '/api/issuer/credentials', {
    token: admin,
    body: {
      id: 'member',
      config: { format: 'dc+sd-jwt', scope: 'member_scope' },
      vct: 'urn:example:member',
      fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
      iaeActions: [{ type: 'openid4vp-presentation', presentationConfigId: 'adult', label: 'PID' }],
    },
  });
  expect(iaeConfig.status, iaeConfig.text).toBe(201);
  pid = await issueCredential(svc, admin, 'pid', { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true });
  residence = await issueCredential(svc, admin, 'residence', RESIDENCE_CLAIMS);
});
afterAll(() => svc.stop());

const encode = (disclosure: unknown[]) => Buffer.from(JSON.stringify(disclosure)).toString('base64url');
const digestOf = (disclosure: string) => createHash('sha256').update(disclosure).digest('base64url');
const salt = () => randomBytes(16).toString('base64url');
const disclosuresOf = (presentation: string) => presentation.split('~').slice(1, -1);
const decoded = (disclosure: string) => JSON.parse(Buffer.from(disclosure, 'base64url').toString()) as unknown[];
const positionOf = (disclosures: string[], name: string) => disclosures.findIndex((d) => decoded(d)[1] === name);

/**
 * The presentation the test wallet makes of `issued` for `request` (`disclose`: claim names, a
 * presentation frame, or all), with its Disclosures passed through `edit`, and a KB-JWT over the result.
 */
async function present(
  issued: { credential: string; holder: import('jose').JWK },
  request: ResolvedRequest,
  disclose: string[] | Record<string, unknown> | undefined,
  edit: (disclosures: string[]) => string[] = (disclosures) => disclosures,
  kb: { aud?: string } = {},
) {
  const selected =
    Array.isArray(disclose) || disclose === undefined ? issued.credential : await sdJwtVc().present(issued.credential, disclose as never);
  const honest = await presentSdJwt(selected, issued.holder, request, Array.isArray(disclose) ? disclose : undefined, kb);
  const [issuerJwt] = honest.split('~');
  const bent = `${issuerJwt}~${edit(disclosuresOf(honest))
    .map((d) => `${d}~`)
    .join('')}`;
  // With no selection, presentSdJwt takes the SD-JWT as given and signs the KB-JWT over it.
  return presentSdJwt(bent, issued.holder, request, undefined, kb);
}

const offer = async (requestId = 'adult') => {
  const reply = await svc.raw('POST', '/api/verifier/offer', { token: admin, body: { response_type: 'uri', requestId } });
  expect(reply.status, reply.text).toBe(201);
  return { ...(reply.body as { uri: string; session: string }), resolved: await resolveRequest(reply.body.uri) };
};
const session = (id: string) => svc.running.services.sessions.get('acme', id);
const logsOf = async (id: string) =>
  (await svc.raw('GET', `/api/session/${id}/logs`, { token: admin })).body as { message: string; details?: Record<string, unknown> }[];

/** The response to the redirect flow's request, refused: the session failed with `reason`, which its log names too. */
async function expectRefused(made: { session: string }, reply: { status: number; body: Record<string, any> }, reason: RegExp) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(400);
  expect(reply.body.error).toBe('invalid_request');
  const state = await session(made.session);
  expect(state.status).toBe('failed');
  expect(state.errorReason).toMatch(reason);
  expect(state.private?.credentials).toBeUndefined();
  const rejected = (await logsOf(made.session)).find((entry) => entry.message === 'presentation rejected');
  expect(rejected?.details?.reason).toMatch(reason);
  return JSON.stringify(await logsOf(made.session));
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('a Disclosure no digest references', () => {
  it('is refused: one the DCQL query does not ask for, appended to an honest presentation, named by claim and digest', async () => {
    const made = await offer();
    const extra = encode([salt(), 'age_over_21', true]);
    const presentation = await present(pid, made.resolved, ['given_name', 'age_over_18'], (disclosures) => [...disclosures, extra]);
    expect(disclosuresOf(presentation)).toHaveLength(3);
    const log = await expectRefused(
      made,
      await submit(made.resolved, { pid: [presentation] }),
      new RegExp(`^credential: disclosure 3 \\(claim 'age_over_21', digest ${escaped(digestOf(extra))}\\) is referenced by no digest`),
    );
    expect(log).not.toContain(extra);
  });

  it('is refused for an array element too, and the refusal never shows the value', async () => {
    const made = await offer();
    const extra = encode([salt(), 'Schnuffelchen']);
    const presentation = await present(pid, made.resolved, ['given_name', 'age_over_18'], (disclosures) => [extra, ...disclosures]);
    const log = await expectRefused(
      made,
      await submit(made.resolved, { pid: [presentation] }),
      new RegExp(`^credential: disclosure 1 \\(an array element, digest ${escaped(digestOf(extra))}\\) is referenced by no digest`),
    );
    expect(log).not.toContain('Schnuffelchen');
  });

  it('is refused when its value was changed (its digest is no longer the one the issuer signed), without showing either value', async () => {
    const made = await offer();
    let forged = '';
    const presentation = await present(pid, made.resolved, ['given_name', 'age_over_18'], (disclosures) =>
      disclosures.map((d) => {
        const [s, name] = decoded(d);
        if (name !== 'given_name') return d;
        forged = encode([s, name, 'Mallory']);
        return forged;
      }),
    );
    const log = await expectRefused(
      made,
      await submit(made.resolved, { pid: [presentation] }),
      new RegExp(`claim 'given_name', digest ${escaped(digestOf(forged))}\\) is referenced by no digest`),
    );
    expect(log).not.toMatch(/Mallory|Erika/);
  });

  it('is refused when it comes from another credential of the same issuer (another salt, so another digest)', async () => {
    // The holder of a credential saying age_over_18 false adds the age_over_18 Disclosure of someone else's that says true.
    const minor = await issueCredential(svc, admin, 'pid', { given_name: 'Max', family_name: 'Mustermann', age_over_18: false });
    const made = await offer();
    const borrowed = disclosuresOf(await presentSdJwt(pid.credential, pid.holder, made.resolved, ['age_over_18']));
    expect(borrowed).toHaveLength(1);
    const presentation = await present(minor, made.resolved, ['given_name'], (disclosures) => [...disclosures, ...borrowed]);
    await expectRefused(
      made,
      await submit(made.resolved, { pid: [presentation] }),
      new RegExp(`disclosure 2 \\(claim 'age_over_18', digest ${escaped(digestOf(borrowed[0] as string))}\\) is referenced by no digest`),
    );
  });

  it('is refused when it is nested and the Disclosure holding its digest is left out', async () => {
    const made = await offer('residence-check');
    const all = disclosuresOf(await presentSdJwt(residence.credential, residence.holder, made.resolved));
    const presentation = await present(residence, made.resolved, { nationalities: true }, (disclosures) => [
      ...disclosures,
      all[positionOf(all, 'locality')] as string,
    ]);
    await expectRefused(
      made,
      await submit(made.resolved, { card: [presentation] }),
      /claim 'locality', digest [\w-]+\) is referenced by no digest/,
    );
  });
});

describe('a Disclosure presented twice', () => {
  it('is refused, one the query asks for', async () => {
    const made = await offer();
    const presentation = await present(pid, made.resolved, ['given_name', 'age_over_18'], (disclosures) => [
      ...disclosures,
      disclosures[positionOf(disclosures, 'given_name')] as string,
    ]);
    await expectRefused(
      made,
      await submit(made.resolved, { pid: [presentation] }),
      /^credential: disclosure 3 \(claim 'given_name', digest [\w-]+\) is presented twice \(also as disclosure [12]\)$/,
    );
  });

  it('is refused, an unreferenced one', async () => {
    const made = await offer();
    const extra = encode([salt(), 'age_over_21', true]);
    const presentation = await present(pid, made.resolved, ['given_name', 'age_over_18'], (disclosures) => [...disclosures, extra, extra]);
    await expectRefused(
      made,
      await submit(made.resolved, { pid: [presentation] }),
      /disclosure 4 \(claim 'age_over_21', digest [\w-]+\) is presented twice/,
    );
  });
});

describe('presentations whose Disclosures match their digests one to one', () => {
  it('verify: the honest presentation, in any order of its Disclosures', async () => {
    for (const edit of [(d: string[]) => d, (d: string[]) => [...d].reverse()]) {
      const made = await offer();
      const reply = await submit(made.resolved, { pid: [await present(pid, made.resolved, ['given_name', 'age_over_18'], edit)] });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect((await session(made.session)).private?.credentials).toEqual([
        expect.objectContaining({ claims: { given_name: 'Erika', age_over_18: true } }),
      ]);
    }
  });

  it('verify: nested Disclosures (an object whose members are disclosed one by one) and a disclosed array, in part or all', async () => {
    const cases: [Record<string, unknown> | undefined, Record<string, unknown>][] = [
      [
        { address: { locality: true }, nationalities: true },
        { address: { locality: 'Köln' }, nationalities: ['DE', 'FR'] },
      ],
      [undefined, RESIDENCE_CLAIMS],
    ];
    for (const [frame, claims] of cases) {
      const made = await offer('residence-check');
      const presentation = await present(residence, made.resolved, frame);
      // The address Disclosure comes with its member's: the one references the other.
      expect(disclosuresOf(presentation).length).toBe(frame ? 3 : 6);
      const reply = await submit(made.resolved, { card: [presentation] });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect((await session(made.session)).private?.credentials).toEqual([expect.objectContaining({ vct: RESIDENCE_VCT, claims })]);
    }
  });

  it('verify: array elements disclosed one by one, inside a disclosed array (an issuer other than svc may make them)', async () => {
    const holder = await holderKey();
    const issued = { credential: await issueWithArrayElements(holder), holder: holder.privateJwk };
    const made = await offer('residence-check');
    const all = await present(issued, made.resolved, undefined);
    // locality, address, nationalities, and its two elements
    expect(disclosuresOf(all)).toHaveLength(5);
    const reply = await submit(made.resolved, { card: [all] });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await session(made.session)).private?.credentials).toEqual([
      expect.objectContaining({ claims: { address: { locality: 'Köln' }, nationalities: ['DE', 'FR'] } }),
    ]);

    // One element left out verifies; one element presented twice, or without the array that references it, does not.
    const oneElement = await offer('residence-check');
    const fr = disclosuresOf(all).find((d) => decoded(d).length === 2 && decoded(d)[1] === 'FR') as string;
    const withoutFr = await present(issued, oneElement.resolved, undefined, (d) => d.filter((x) => x !== fr));
    const partial = await submit(oneElement.resolved, { card: [withoutFr] });
    expect(partial.status, JSON.stringify(partial.body)).toBe(200);
    expect((await session(oneElement.session)).private?.credentials).toEqual([
      expect.objectContaining({ claims: { address: { locality: 'Köln' }, nationalities: ['DE'] } }),
    ]);

    const twice = await offer('residence-check');
    await expectRefused(
      twice,
      await submit(twice.resolved, { card: [await present(issued, twice.resolved, undefined, (d) => [...d, fr])] }),
      /disclosure 6 \(an array element, digest [\w-]+\) is presented twice/,
    );
    const orphan = await offer('residence-check');
    const withoutArray = await present(issued, orphan.resolved, undefined, (d) => d.filter((x) => decoded(x)[1] !== 'nationalities'));
    await expectRefused(
      orphan,
      await submit(orphan.resolved, { card: [withoutArray] }),
      /\(an array element, digest [\w-]+\) is referenced by no digest/,
    );
  });
});

/**
 * An SD-JWT VC with array element Disclosures, which svc's issuer does not make: signed in-process
 * with the tenant's attestation key (which its trust list names), nationalities' elements each
 * disclosable inside the disclosable array, and address disclosable with a disclosable locality.
 */
async function issueWithArrayElements(holder: HolderKey) {
  const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'default-attestation', usageType: 'attestation' });
  const sdjwt = new SDJwtVcInstance({
    signer: async (data: string) => Buffer.from(await signer.sign(Buffer.from(data))).toString('base64url'),
    signAlg: signer.algorithm,
    hasher: (data: string | ArrayBuffer) =>
      createHash('sha256')
        .update(typeof data === 'string' ? data : Buffer.from(data))
        .digest(),
    hashAlg: 'sha-256',
    saltGenerator: salt,
  });
  const payload = {
    iss: svc.url,
    iat: Math.floor(Date.now() / 1000),
    vct: RESIDENCE_VCT,
    cnf: { jwk: holder.publicJwk },
    address: { locality: 'Köln' },
    nationalities: ['DE', 'FR'],
  };
  const frame = { _sd: ['address', 'nationalities'], address: { _sd: ['locality'] }, nationalities: { _sd: [0, 1] } };
  return sdjwt.issue(payload as never, frame as never, { header: { typ: 'dc+sd-jwt', x5c: signer.x5c } });
}

/**
 * An SD-JWT VC whose Issuer-signed JWT is `payload` as given (plus iss, iat, vct and the holder's
 * cnf), signed in-process with the tenant's trusted attestation key, with `disclosures`: for digests
 * and Disclosures no honest issuer library would make.
 */
async function issueAsSigned(holder: HolderKey, payload: Record<string, unknown>, disclosures: string[]) {
  const jwt = await svc.running.services.signing.signJwt(
    'acme',
    { keyChainId: 'default-attestation', usageType: 'attestation' },
    { typ: 'dc+sd-jwt' },
    { iss: svc.url, iat: Math.floor(Date.now() / 1000), vct: PID_VCT, cnf: { jwk: holder.publicJwk }, ...payload },
  );
  return `${jwt}~${disclosures.map((d) => `${d}~`).join('')}`;
}

describe('digests that do not match their Disclosures one to one, as the issuer signed them', () => {
  it('are refused, each naming the rule it breaks', async () => {
    const givenName = encode([salt(), 'given_name', 'Erika']);
    const ageOver18 = encode([salt(), 'age_over_18', true]);
    const element = encode([salt(), 'DE']);
    const cases: [string, Record<string, unknown>, string[], RegExp][] = [
      [
        'one digest twice in _sd',
        { _sd: [digestOf(givenName), digestOf(givenName), digestOf(ageOver18)] },
        [givenName, ageOver18],
        new RegExp(`^credential: digest '${escaped(digestOf(givenName))}' appears more than once in the credential`),
      ],
      [
        'one digest in _sd and as an array element',
        { _sd: [digestOf(givenName), digestOf(ageOver18)], nationalities: [{ '...': digestOf(givenName) }] },
        [givenName, ageOver18],
        /appears more than once in the credential/,
      ],
      [
        'a claim the object already has in the clear',
        { given_name: 'Max', _sd: [digestOf(givenName), digestOf(ageOver18)] },
        [givenName, ageOver18],
        /^credential: disclosure 1 \(claim 'given_name', digest [\w-]+\) discloses a claim its object already has$/,
      ],
      [
        'an object property referenced as an array element',
        { _sd: [digestOf(ageOver18)], given_name: 'Erika', nationalities: [{ '...': digestOf(givenName) }] },
        [givenName, ageOver18],
        /disclosure 1 \(claim 'given_name', digest [\w-]+\) is an object property, referenced as an array element/,
      ],
      [
        'an array element referenced from _sd',
        { _sd: [digestOf(givenName), digestOf(ageOver18), digestOf(element)] },
        [givenName, ageOver18, element],
        /disclosure 3 \(an array element, digest [\w-]+\) is an array element, referenced from an object's _sd/,
      ],
      [
        'an _sd_alg other than sha-256',
        { _sd_alg: 'sha-512', _sd: [digestOf(givenName), digestOf(ageOver18)] },
        [givenName, ageOver18],
        /^credential: _sd_alg 'sha-512' is not supported \(sha-256 only\)$/,
      ],
    ];
    for (const [what, payload, disclosures, reason] of cases) {
      const holder = await holderKey();
      const issued = { credential: await issueAsSigned(holder, payload, disclosures), holder: holder.privateJwk };
      const made = await offer();
      await expectRefused(made, await submit(made.resolved, { pid: [await present(issued, made.resolved, undefined)] }), reason).catch(
        (err: Error) => {
          throw new Error(`${what}: ${err.message}`);
        },
      );
    }
  });

  it('a hand-made credential whose digests match verifies (the cases above fail for the rule they name alone)', async () => {
    const holder = await holderKey();
    const givenName = encode([salt(), 'given_name', 'Erika']);
    const ageOver18 = encode([salt(), 'age_over_18', true]);
    const payload = { _sd_alg: 'sha-256', family_name: 'Mustermann', _sd: [digestOf(givenName), digestOf(ageOver18), digestOf(salt())] };
    const issued = { credential: await issueAsSigned(holder, payload, [givenName, ageOver18]), holder: holder.privateJwk };
    const made = await offer();
    const reply = await submit(made.resolved, { pid: [await present(issued, made.resolved, undefined)] });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await session(made.session)).private?.credentials).toEqual([
      expect.objectContaining({ claims: { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true } }),
    ]);
  });
});

describe('the DC API and interactive authorization reach the same check', () => {
  it('DC API: an appended Disclosure is refused, the honest presentation verifies', async () => {
    for (const tampered of [true, false]) {
      const reply = await svc.raw('POST', '/api/verifier/offer', {
        token: admin,
        body: { response_type: 'dc-api', requestId: 'adult', expected_origin: ORIGIN },
      });
      expect(reply.status, reply.text).toBe(201);
      const resolved = await resolveDcApiRequest(reply.body.dcApiRequest, ORIGIN);
      const extra = encode([salt(), 'age_over_21', true]);
      const presentation = await present(pid, resolved, ['given_name', 'age_over_18'], (d) => (tampered ? [...d, extra] : d));
      const { response } = await dcApiResponse(resolved, { pid: [presentation] });
      const posted = await svc.raw('POST', new URL(reply.body.responseUri).pathname, { body: { response, origin: ORIGIN } });
      if (!tampered) {
        expect(posted.status, posted.text).toBe(200);
        continue;
      }
      await expectRefused(
        reply.body,
        posted,
        new RegExp(`disclosure 3 \\(claim 'age_over_21', digest ${escaped(digestOf(extra))}\\) is referenced by no digest`),
      );
    }
  });

  it('interactive authorization: an appended Disclosure ends the flow, named in its session log; the honest presentation verifies', async () => {
    const iaeUrl = `${svc.url}/issuers/acme/iae`;
    for (const tampered of [true, false]) {
      const created = await svc.raw('POST', '/api/issuer/offer', {
        token: admin,
        body: { response_type: 'uri', flow: 'authorization_code', credentialConfigurationIds: ['member'] },
      });
      expect(created.status, created.text).toBe(201);
      const started = await svc.raw('POST', '/issuers/acme/iae', {
        form: {
          client_id: CLIENT_ID,
          response_type: 'code',
          redirect_uri: WALLET_REDIRECT_URI,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
          issuer_state: created.body.credentialOffer.grants.authorization_code.issuer_state,
          scope: 'member_scope',
          interaction_types_supported: 'openid4vp_presentation',
        },
      });
      expect(started.status, started.text).toBe(200);
      const request = await verifyIaeRequest(started.body.openid4vp_request, iaeUrl);
      const extra = encode([salt(), 'age_over_21', true]);
      const presentation = await present(pid, request, ['given_name', 'age_over_18'], (d) => (tampered ? [...d, extra] : d), {
        aud: `iae:${iaeUrl}`,
      });
      const answer = await svc.raw('POST', '/issuers/acme/iae', {
        form: {
          auth_session: started.body.auth_session,
          openid4vp_response: JSON.stringify({ response: await encryptIaeResponse(request, { vp_token: { pid: [presentation] } }) }),
        },
      });
      if (!tampered) {
        expect(answer.status, answer.text).toBe(200);
        continue;
      }
      const reason = new RegExp(`disclosure 3 \\(claim 'age_over_21', digest ${escaped(digestOf(extra))}\\) is referenced by no digest`);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ error: 'access_denied', error_description: expect.stringMatching(reason) });
      const logs = await logsOf(created.body.session);
      const stopped = logs.find((entry) => entry.message === 'interactive authorization stopped');
      expect(String(stopped?.details?.reason)).toMatch(reason);
    }
  });
});
