// verifySdJwtPresentation on its own: SD-JWT VCs issued here by the service's own issuance code
// (issueSdJwtVc, with a signer over a test certificate), presented by the test wallet with a KB-JWT
// bent one rule at a time, and verified against a context made here. What it proves: each refusal of
// the key binding, the transaction data, member names and the issuer signature, and that an accepted
// presentation gives exactly the disclosed claims (no technical ones) and the signed status reference.
import { createHash } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FieldDefinition } from '../../src/credential-configs/service.js';
import type { PresentationContext } from '../../src/formats/presentation-context.js';
import { issueSdJwtVc } from '../../src/formats/sd-jwt-vc/issue.js';
import { verifySdJwtPresentation } from '../../src/formats/sd-jwt-vc/verify.js';
import { PresentationRejected } from '../../src/verification/errors.js';
import { verifyPresentation } from '../../src/verification/verify-presentation.js';
import { type KeyBindingOptions, presentSdJwt, type ResolvedRequest } from '../support/presenter.js';
import { type TestCertificate, testCertificate, testSigner } from '../support/test-pki.js';

const ISS = 'https://issuer.example';
const VCT = 'urn:eudi:pid:1';
const STATUS = { status_list: { idx: 3, uri: 'https://status.invalid/lists/1' } };
const FIELDS: FieldDefinition[] = [
  { path: ['given_name'], type: 'string' },
  { path: ['family_name'], type: 'string' },
  { path: ['nationality'], type: 'string', disclosable: false },
  { path: ['sub'], type: 'string', disclosable: false },
  { path: ['nbf'], type: 'number', disclosable: false },
  { path: ['vct#integrity'], type: 'string', disclosable: false },
] as FieldDefinition[];
const REQUEST: ResolvedRequest = {
  clientId: 'x509_hash:verifier',
  nonce: 'nonce-of-the-request',
  responseUri: 'https://verifier.example/response',
  responseMode: 'direct_post',
  dcqlQuery: { credentials: [] },
  transactionData: [],
  payload: {},
};

let root: TestCertificate;
let issuer: TestCertificate;
let holder: { publicJwk: JWK; privateJwk: JWK };
let credential: string;

async function issue(options: { claims?: Record<string, unknown>; status?: Record<string, unknown>; lifetimeSeconds?: number } = {}) {
  return issueSdJwtVc(
    {
      issuedAt: new Date(),
      issuer: ISS,
      vct: VCT,
      claims: options.claims ?? {
        given_name: 'Erika',
        family_name: 'Mustermann',
        nationality: 'DE',
        sub: 'subject-1',
        nbf: Math.floor(Date.now() / 1000) - 60,
        'vct#integrity': 'sha256-abc',
      },
      fields: FIELDS,
      holderJwk: holder.publicJwk,
      lifetimeSeconds: options.lifetimeSeconds ?? 3600,
      trustFormat: 'x5c',
      ...(options.status && { status: options.status }),
    },
    testSigner(issuer),
  );
}

beforeAll(async () => {
  root = await testCertificate('SD-JWT Issuer Root CA', { ca: true });
  issuer = await testCertificate('SD-JWT Issuer', { issuer: root });
  const pair = await generateKeyPair('ES256', { extractable: true });
  holder = { publicJwk: await exportJWK(pair.publicKey), privateJwk: await exportJWK(pair.privateKey) };
  credential = await issue({ status: STATUS });
});

function context(overrides: Partial<PresentationContext> = {}): PresentationContext {
  return {
    clientId: REQUEST.clientId,
    nonce: REQUEST.nonce,
    trustedCertificates: [root.pem],
    transactionData: [],
    now: new Date(),
    responseUri: REQUEST.responseUri,
    ...overrides,
  };
}

const present = (kb: KeyBindingOptions = {}, request: ResolvedRequest = REQUEST, from = credential) =>
  presentSdJwt(from, holder.privateJwk, request, ['given_name'], kb);

async function outcome(presentation: string | Promise<string>, at: PresentationContext = context()): Promise<string> {
  try {
    await verifySdJwtPresentation(await presentation, at);
    return 'accepted';
  } catch (err) {
    return err instanceof PresentationRejected ? err.message : `not a rejection: ${String(err)}`;
  }
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');
const now = () => Math.floor(Date.now() / 1000);
const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The presentation with a KB-JWT of exactly `claims` over it (signed by the holder), for claims presentSdJwt always sets. */
/** `withoutKb` (issuer JWT and Disclosures, ending in ~) with a KB-JWT over it of the request's claims and `claims`, signed by the holder. */
async function keyBound(withoutKb: string, claims: Record<string, unknown> = {}) {
  const kb = await new SignJWT({ iat: now(), aud: REQUEST.clientId, nonce: REQUEST.nonce, sd_hash: sha256(withoutKb), ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'kb+jwt' })
    .sign(await importJWK(holder.privateJwk, 'ES256'));
  return `${withoutKb}${kb}`;
}

/** The presentation without its KB-JWT. */
const withoutKeyBinding = (presentation: string) => presentation.slice(0, presentation.lastIndexOf('~') + 1);

/** The presentation with a KB-JWT of exactly `claims` over it, for claims presentSdJwt always sets. */
async function withKeyBinding(claims: Record<string, unknown>, request: ResolvedRequest = REQUEST) {
  return keyBound(withoutKeyBinding(await present({}, request)), claims);
}

describe('an accepted SD-JWT VC presentation', () => {
  it('gives the disclosed and clear claims without the technical ones, the issuer, its x5c, the vct and the signed status', async () => {
    const verified = await verifySdJwtPresentation(await present(), context());
    expect(verified).toEqual({
      format: 'dc+sd-jwt',
      vct: VCT,
      issuer: ISS,
      // The x5c as signed, for DCQL trusted_authorities; the kept result drops it.
      issuerChain: [issuer.der],
      claims: { given_name: 'Erika', nationality: 'DE' },
      status: STATUS,
    });
  });

  it('has no status without one signed, and is found for format dc+sd-jwt', async () => {
    const withoutStatus = await issue();
    const presentation = await present({}, REQUEST, withoutStatus);
    const verified = await verifyPresentation('dc+sd-jwt', presentation, context());
    expect(verified).toHaveLength(1);
    expect(verified[0]).not.toHaveProperty('status');
    expect(verified[0]).not.toHaveProperty('authority');
  });

  it('sends mso_mdoc presentations to the mdoc verifier', async () => {
    await expect(verifyPresentation('mso_mdoc', 'not base64url!', context())).rejects.toThrow(
      new PresentationRejected('mdoc: the presentation is not a base64url-encoded DeviceResponse'),
    );
  });

  it('refuses a format no verifier knows, also one named like an object member', async () => {
    const presentation = await present();
    for (const format of ['ldp_vc', 'constructor', '__proto__', 'toString']) {
      expect(() => verifyPresentation(format, presentation, context()), format).toThrow(
        new PresentationRejected(`vp_token: format ${format} cannot be verified yet`),
      );
    }
  });
});

describe('the key binding', () => {
  it('refuses a presentation without KB-JWT', async () => {
    const presentation = await present();
    expect(await outcome(presentation.slice(0, presentation.lastIndexOf('~') + 1))).toMatch(/KB-JWT|key binding|Key Binding/i);
  });

  it('takes the client_id as audience, or one of the audiences the context names instead', async () => {
    expect(await outcome(present({ aud: 'https://other.example' }))).toBe('key binding: aud is not this verifier');
    expect(await outcome(present({ aud: 42 as unknown as string }))).toBe('key binding: aud is not this verifier');
    expect(await outcome(present({ aud: 'origin:https://page.example' }), context({ audiences: ['origin:https://page.example'] }))).toBe(
      'accepted',
    );
    // With audiences, the client_id is not one.
    expect(await outcome(present(), context({ audiences: ['origin:https://page.example'] }))).toBe('key binding: aud is not this verifier');
  });

  it("refuses another request's nonce", async () => {
    // @sd-jwt refuses it before the verifier's own check does.
    expect(await outcome(present({ nonce: 'another nonce' }))).toMatch(/nonce/i);
  });

  it('takes an iat up to 60 s ahead and 300 s old, and refuses one missing, later or older', async () => {
    const at = new Date(Math.floor(Date.now() / 1000) * 1000);
    const t = at.getTime() / 1000;
    expect(await outcome(present({ iat: t + 60 }), context({ now: at }))).toBe('accepted');
    expect(await outcome(present({ iat: t + 61 }), context({ now: at }))).toBe('key binding: iat is missing or in the future');
    expect(await outcome(present({ iat: t - 300 }), context({ now: at }))).toBe('accepted');
    expect(await outcome(present({ iat: t - 301 }), context({ now: at }))).toBe('key binding: iat is too old');
    expect(await outcome(present({ iat: String(t) as unknown as number }), context({ now: at }))).toMatch(/iat/);
  });

  it('refuses an sd_hash over other Disclosures', async () => {
    expect(await outcome(present({ sdHash: sha256('something else') }))).toMatch(/sd_hash/);
  });

  it('refuses a KB-JWT not signed by the key in cnf', async () => {
    const other = await generateKeyPair('ES256', { extractable: true });
    expect(await outcome(present({ signWith: await exportJWK(other.privateKey) }))).toMatch(/^credential: /);
  });
});

describe('transaction data', () => {
  // In the order opposite to that of their hashes: the check must not depend on the order of either.
  const entries = [1, 2]
    .map((amount) => Buffer.from(JSON.stringify({ type: 'payment', amount })).toString('base64url'))
    .sort((a, b) => (sha256(a) < sha256(b) ? 1 : -1));
  const withData = { ...REQUEST, transactionData: entries };
  const expecting = () => context({ transactionData: entries });

  it('accepts the sha-256 hashes of every entry, in any order', async () => {
    expect(await outcome(present({}, withData), expecting())).toBe('accepted');
    expect(await outcome(present({ transactionDataHashes: entries.map(sha256).reverse() }, withData), expecting())).toBe('accepted');
  });

  it('refuses missing, partial, extra and non-array hashes, and another hash algorithm', async () => {
    const mismatch = 'transaction data: transaction_data_hashes do not match the request';
    expect(await outcome(present(), expecting())).toBe(mismatch);
    expect(await outcome(present({ transactionDataHashes: [sha256(entries[0] as string)] }, withData), expecting())).toBe(mismatch);
    expect(await outcome(present({ transactionDataHashes: [...entries.map(sha256), sha256('x')] }, withData), expecting())).toBe(mismatch);
    // Not an array: a string of the same JSON.
    expect(
      await outcome(withKeyBinding({ transaction_data_hashes: JSON.stringify(entries.map(sha256).sort()) }, withData), expecting()),
    ).toBe(mismatch);
    // Without transaction_data_hashes_alg, sha-256 is meant; another one is refused.
    expect(await outcome(withKeyBinding({ transaction_data_hashes: entries.map(sha256) }, withData), expecting())).toBe('accepted');
    expect(
      await outcome(
        withKeyBinding({ transaction_data_hashes: entries.map(sha256), transaction_data_hashes_alg: 'sha-384' }, withData),
        expecting(),
      ),
    ).toBe('transaction data: only sha-256 hashes are accepted');
    expect(
      await outcome(
        present({ transactionDataHashes: JSON.stringify(entries.map(sha256).sort()) as unknown as string[] }, withData),
        expecting(),
      ),
    ).toBe(mismatch);
  });
});

describe('the credential', () => {
  it('refuses an issuer signature that does not verify, and an issuer the tenant does not trust', async () => {
    const presentation = await present();
    const [jwt = '', ...rest] = presentation.split('~');
    const [header, payload, signature] = jwt.split('.');
    const claims = JSON.parse(Buffer.from(payload as string, 'base64url').toString());
    // A KB-JWT over the forged issuer JWT, so that only the issuer signature is wrong.
    const forged = await keyBound(
      withoutKeyBinding([`${header}.${part({ ...claims, nationality: 'FR' })}.${signature}`, ...rest].join('~')),
    );
    expect(await outcome(forged)).toMatch(/^credential: .*signature/i);
    expect(await outcome(keyBound(withoutKeyBinding(await present())))).toBe('accepted');
    expect(await outcome(present(), context({ trustedCertificates: [] }))).toBe(
      'untrusted issuer: the x5c chain leads to no trusted certificate',
    );
  });

  it('refuses a Disclosure no digest of the credential references (RFC 9901 section 7.1), which @sd-jwt lets pass', async () => {
    const stray = part(['salt', 'given_name', 'Eve']);
    const presentation = await keyBound(`${withoutKeyBinding(await present())}${stray}~`);
    expect(await outcome(presentation)).toMatch(/^credential: disclosure 2 \(claim 'given_name', digest .+\) is referenced by no digest/);
  });

  it('refuses what is not an SD-JWT at all', async () => {
    expect(await outcome('not-an-sd-jwt')).toBe('the presentation is not an SD-JWT');
  });

  it('refuses a credential past its exp, by the time of the context', async () => {
    const issued = await issue({ lifetimeSeconds: 600 });
    const exp = JSON.parse(Buffer.from((issued.split('.')[1] as string).split('~')[0] as string, 'base64url').toString()).exp as number;
    const at = (seconds: number) => context({ now: new Date(seconds * 1000) });
    expect(await outcome(present({ iat: exp }, REQUEST, issued), at(exp))).toBe('accepted');
    expect(await outcome(present({ iat: exp + 1 }, REQUEST, issued), at(exp + 1))).toBe('credential: expired');
  });

  it('gives the authority a federation trusted the issuer through', async () => {
    const federated = await issueSdJwtVc(
      {
        issuedAt: new Date(),
        issuer: ISS,
        vct: VCT,
        claims: { given_name: 'Erika' },
        fields: FIELDS,
        holderJwk: holder.publicJwk,
        trustFormat: 'federation',
      },
      testSigner(issuer),
    );
    const issuerJwk = { ...(await exportJWK(issuer.keys.publicKey)), kid: 'test-signer' };
    const federation = {
      mode: 'federation-only' as const,
      trustAnchors: [{ entityId: 'https://anchor.example' }],
      resolve: async () => {
        throw new Error('not used');
      },
      issuerKey: async () => ({ jwk: issuerJwk, trust: { anchor: 'https://anchor.example', metadata: {}, expiresAt: 0, chain: [] } }),
    };
    const verified = await verifySdJwtPresentation(await present({}, REQUEST, federated), context({ federation }));
    expect(verified.authority).toEqual({ type: 'openid_federation', values: ['https://anchor.example'] });
  });
});

describe('member names', () => {
  /** The presentation with one part replaced: the issuer JWT's header or payload, the KB-JWT's, or the Disclosure at a position (1-based). */
  async function bent(where: 'header' | 'payload' | 'kb-header' | 'kb-payload' | number, value: unknown) {
    // Two Disclosures: the KB-JWT is the last part, not the second.
    const parts = (await presentSdJwt(credential, holder.privateJwk, REQUEST, ['given_name', 'family_name'])).split('~');
    const replaceJwtPart = (jwt: string, index: number) => {
      const segments = jwt.split('.');
      segments[index] = part(value);
      return segments.join('.');
    };
    if (where === 'header' || where === 'payload') parts[0] = replaceJwtPart(parts[0] as string, where === 'header' ? 0 : 1);
    else if (where === 'kb-header' || where === 'kb-payload')
      parts[parts.length - 1] = replaceJwtPart(parts.at(-1) as string, where === 'kb-header' ? 0 : 1);
    else parts[where] = part(value);
    return parts.join('~');
  }

  it('refuses __proto__, constructor and prototype anywhere in the issuer JWT, a Disclosure and the KB-JWT, naming the part', async () => {
    const rule = 'is a member name that is refused (__proto__, constructor, prototype)';
    expect(await outcome(bent('header', { alg: 'ES256', __proto__x: 1, constructor: 1 }))).toBe(
      `credential: credential header.constructor ${rule}`,
    );
    expect(await outcome(bent('payload', { iss: ISS, address: { prototype: 1 } }))).toBe(
      `credential: credential payload.address.prototype ${rule}`,
    );
    expect(await outcome(bent('payload', JSON.parse('{"__proto__": {"admin": true}}')))).toBe(
      `credential: credential payload.__proto__ ${rule}`,
    );
    expect(await outcome(bent(1, ['salt', 'address', { constructor: 1 }]))).toBe(`credential: disclosure 1.2.constructor ${rule}`);
    expect(await outcome(bent(1, ['salt', '__proto__', { admin: true }]))).toBe(
      `credential: disclosure 1 discloses __proto__, which ${rule}`,
    );
    expect(await outcome(bent('kb-header', { alg: 'ES256', prototype: 'x' }))).toBe(`credential: key binding JWT header.prototype ${rule}`);
    expect(await outcome(bent('kb-payload', { nonce: 'n', constructor: {} }))).toBe(
      `credential: key binding JWT payload.constructor ${rule}`,
    );
  });

  it('reads the last part as a KB-JWT only when it is a JWT, and leaves parts that are not JSON to their checks', async () => {
    const presentation = await present();
    const withoutKb = presentation.slice(0, presentation.lastIndexOf('~') + 1);
    // A Disclosure in the last place (no KB-JWT): still checked as a Disclosure.
    expect(await outcome(`${withoutKb}${part(['salt', 'constructor', 1])}`)).toBe(
      'credential: disclosure 2 discloses constructor, which is a member name that is refused (__proto__, constructor, prototype)',
    );
    // An array element [salt, value] whose value is such a name is a value, not a member: refused only
    // later, as a Disclosure no digest references.
    const [issuerJwt] = presentation.split('~');
    const elementNamedPrototype = await keyBound(`${issuerJwt}~${part(['salt', 'prototype'])}~`);
    expect(await outcome(elementNamedPrototype)).toMatch(
      /^credential: disclosure 1 \(an array element, digest .+\) is referenced by no digest/,
    );
    // A part that is not JSON goes on to the signature and Disclosure checks.
    expect(await outcome(bent('payload', 'not-json-but-a-string'))).toBe('the presentation is not an SD-JWT');
    expect(await outcome(`${withoutKb.replace(/~$/, '~bm90IGpzb24~')}${presentation.slice(presentation.lastIndexOf('~') + 1)}`)).toMatch(
      /^credential: /,
    );
  });
});
