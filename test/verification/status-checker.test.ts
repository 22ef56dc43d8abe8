// The status list checker on its own, in front of a reader that answers with status list tokens made
// here (signed by test certificates, with the claims, list and compression each case needs): every
// refusal of draft-ietf-oauth-status-list the checker makes, the reading of each entry size, and when
// a verified token is kept and fetched again. The whole presentation flow is in status.test.ts.
import { deflateSync } from 'node:zlib';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { OutboundRequest, OutboundResponse } from '../../src/platform/outbound/client.js';
import type { UrlReader } from '../../src/platform/outbound/own-urls.js';
import { type FetchedStatusList, StampedCache } from '../../src/status-lists/cache.js';
import { PresentationRejected } from '../../src/verification/errors.js';
import { type StatusCheckContext, StatusListChecker } from '../../src/verification/status/checker.js';
import { type JwsAlgorithm, type TestCertificate, testCertificate } from '../support/test-pki.js';

const URI = 'https://issuer.example/status-lists/1';
const NOW = new Date('2026-06-01T12:00:00Z');
const NOW_S = NOW.getTime() / 1000;

let root: TestCertificate;
let signer: TestCertificate;
let context: StatusCheckContext;

beforeAll(async () => {
  root = await testCertificate('Status Root CA', { ca: true, notBefore: new Date('2026-01-01'), notAfter: new Date('2027-01-01') });
  signer = await testCertificate('Status List Signer', {
    issuer: root,
    notBefore: new Date('2026-01-01'),
    notAfter: new Date('2027-01-01'),
  });
  context = { trustedCertificates: [root.pem], now: NOW };
});

interface TokenOptions {
  bits?: unknown;
  /** The list's bytes, before compression. */
  bytes?: number[] | Uint8Array;
  claims?: Record<string, unknown>;
  header?: Record<string, unknown>;
  by?: TestCertificate;
}

/** A status list token for URI, signed by `by` (default: the signer, x5c leaf then root), valid for an hour from NOW. */
function statusListToken({ bits = 1, bytes = [0], claims = {}, header = {}, by }: TokenOptions = {}): Promise<string> {
  const key = by ?? signer;
  const payload = {
    sub: URI,
    iat: NOW_S,
    exp: NOW_S + 3600,
    status_list: { bits, lst: deflateSync(Uint8Array.from(bytes)).toString('base64url') },
    ...claims,
  };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, typ: 'statuslist+jwt', x5c: by ? [by.der] : [signer.der, root.der], ...header })
    .sign(key.keys.privateKey);
}

/** A reader that answers every URL with `answer` and records the requests. */
function readerOf(answer: (url: URL) => Promise<Partial<OutboundResponse> & { text?: string }>, owns?: (url: URL) => boolean) {
  const requests: { url: string; init: OutboundRequest }[] = [];
  const reader: UrlReader = {
    async request(target, init = {}) {
      requests.push({ url: String(target), init });
      const { text = '', status = 200, ...rest } = await answer(new URL(target));
      return { status, ok: status >= 200 && status < 300, headers: {}, body: Buffer.from(text), ...rest };
    },
    ...(owns ? { owns } : {}),
  };
  return { reader, requests };
}

const serving = (token: string | Promise<string>) => readerOf(async () => ({ text: await token }));

/** The rejection's message, or what happened instead. */
async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'accepted';
  } catch (err) {
    return err instanceof PresentationRejected ? err.message : `not a rejection: ${String(err)}`;
  }
}

/** A status_list claim as a credential may carry it: typed as the verified one, whatever it holds. */
const claimed = (reference: Record<string, unknown>) => ({ status_list: reference as { idx: number; uri: string } });

async function check(token: string | Promise<string>, idx: unknown = 0, at: StatusCheckContext = context) {
  const checker = new StatusListChecker({ reader: serving(token).reader });
  return outcome(checker.check('acme', claimed({ idx, uri: URI }), at));
}

describe('the status_list reference of the credential', () => {
  it('accepts a credential without one, and refuses a malformed idx or uri', async () => {
    const checker = new StatusListChecker({ reader: serving(statusListToken()).reader });
    expect(await outcome(checker.check('acme', undefined, context))).toBe('accepted');
    expect(await outcome(checker.check('acme', {}, context))).toBe('accepted');
    for (const reference of [
      { idx: -1, uri: URI },
      { idx: 0.5, uri: URI },
      { idx: '0', uri: URI },
      { idx: 2 ** 53, uri: URI },
      { idx: 0, uri: 42 },
      { uri: URI },
    ]) {
      expect(await outcome(checker.check('acme', claimed(reference), context)), JSON.stringify(reference)).toBe(
        'status: the credential has a malformed status_list claim (idx, uri)',
      );
    }
    expect(await outcome(checker.check('acme', { status_list: { idx: 0, uri: URI } }, context))).toBe('accepted');
  });

  it('refuses a uri that is not an http(s) URL, before any request', async () => {
    const { reader, requests } = serving(statusListToken());
    const checker = new StatusListChecker({ reader });
    expect(await outcome(checker.check('acme', { status_list: { idx: 0, uri: 'not a url' } }, context))).toBe(
      'status: the status list uri is not a URL',
    );
    for (const uri of ['ftp://issuer.example/list', 'file:///etc/passwd']) {
      expect(await outcome(checker.check('acme', { status_list: { idx: 0, uri } }, context))).toBe(
        'status: the status list uri is not an http(s) URL',
      );
    }
    expect(requests).toEqual([]);
    // Plain http is allowed (the outbound policy decides where it may go).
    const http = URI.replace('https:', 'http:');
    const token = statusListToken({ claims: { sub: http } });
    expect(
      await outcome(
        new StatusListChecker({ reader: serving(token).reader }).check('acme', { status_list: { idx: 0, uri: http } }, context),
      ),
    ).toBe('accepted');
  });
});

describe('reading the entry', () => {
  it('reads entries of 1, 2, 4 and 8 bits, least significant first: 0 valid, 1 revoked, 2 suspended, others invalid', async () => {
    // 1 bit: byte 0b1000_0010 holds idx 1 and 7 revoked.
    expect(await check(statusListToken({ bits: 1, bytes: [0b1000_0010] }), 0)).toBe('accepted');
    expect(await check(statusListToken({ bits: 1, bytes: [0b1000_0010] }), 1)).toBe('status: revoked');
    expect(await check(statusListToken({ bits: 1, bytes: [0b1000_0010] }), 6)).toBe('accepted');
    expect(await check(statusListToken({ bits: 1, bytes: [0b1000_0010] }), 7)).toBe('status: revoked');
    // 2 bits: idx 0..3 = 0, 1, 2, 3 in 0b11_10_01_00.
    const twoBits = [0b1110_0100];
    expect(await check(statusListToken({ bits: 2, bytes: twoBits }), 0)).toBe('accepted');
    expect(await check(statusListToken({ bits: 2, bytes: twoBits }), 1)).toBe('status: revoked');
    expect(await check(statusListToken({ bits: 2, bytes: twoBits }), 2)).toBe('status: suspended');
    expect(await check(statusListToken({ bits: 2, bytes: twoBits }), 3)).toBe('status: invalid (value 3)');
    // 4 bits: idx 2 is the low nibble of the second byte.
    const fourBits = [0x00, 0xf2];
    expect(await check(statusListToken({ bits: 4, bytes: fourBits }), 1)).toBe('accepted');
    expect(await check(statusListToken({ bits: 4, bytes: fourBits }), 2)).toBe('status: suspended');
    expect(await check(statusListToken({ bits: 4, bytes: fourBits }), 3)).toBe('status: invalid (value 15)');
    // 8 bits: one byte per entry.
    const eightBits = [0, 1, 0x80];
    expect(await check(statusListToken({ bits: 8, bytes: eightBits }), 0)).toBe('accepted');
    expect(await check(statusListToken({ bits: 8, bytes: eightBits }), 1)).toBe('status: revoked');
    expect(await check(statusListToken({ bits: 8, bytes: eightBits }), 2)).toBe('status: invalid (value 128)');
  });

  it('refuses an index past the end of the list, and only then', async () => {
    expect(await check(statusListToken({ bits: 1, bytes: [0] }), 7)).toBe('accepted');
    expect(await check(statusListToken({ bits: 1, bytes: [0] }), 8)).toBe('status: index 8 is outside the status list');
    expect(await check(statusListToken({ bits: 8, bytes: [0, 0] }), 1)).toBe('accepted');
    expect(await check(statusListToken({ bits: 8, bytes: [0, 0] }), 2)).toBe('status: index 2 is outside the status list');
  });
});

describe('verifying the status list token', () => {
  it('refuses what is not a JWT, another typ, and a header without a usable x5c', async () => {
    expect(await check('not a token')).toBe('status: the status list token is not a JWT');
    expect(await check(statusListToken({ header: { typ: 'JWT' } }))).toBe('status: the status list token does not have typ statuslist+jwt');
    // A chain with one entry that is not a string, even after a good leaf.
    for (const x5c of [undefined, [], 'MIIB', [42], [signer.der, 42]]) {
      expect(await check(statusListToken({ header: { x5c } })), JSON.stringify(x5c)).toBe(
        'status: the status list token carries no x5c chain',
      );
    }
  });

  it('refuses a token its x5c certificate did not sign', async () => {
    const other = await testCertificate('Another signer', { issuer: root });
    // Signed by another key of the same CA, while naming the trusted signer's certificate.
    const forged = statusListToken({ by: other, header: { x5c: [signer.der, root.der] } });
    expect(await check(forged)).toBe('status: the status list token signature does not verify with its x5c certificate');
    // An alg the checker does not accept.
    const unsecured = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'statuslist+jwt', x5c: [signer.der] })).toString('base64url')}.${Buffer.from(
      JSON.stringify({ sub: URI, status_list: { bits: 1, lst: deflateSync(Uint8Array.from([0])).toString('base64url') } }),
    ).toString('base64url')}.`;
    expect(await check(unsecured)).toBe('status: the status list token signature does not verify with its x5c certificate');
  });

  it('accepts tokens signed with each algorithm of JWS it allows', async () => {
    for (const alg of ['ES256', 'ES384', 'ES512', 'EdDSA', 'PS256', 'PS384', 'PS512', 'RS256'] as JwsAlgorithm[]) {
      const by = await testCertificate(`${alg} signer`, { alg });
      const at = { trustedCertificates: [by.pem], now: new Date() };
      const token = statusListToken({ by, claims: { exp: Math.floor(Date.now() / 1000) + 600 } });
      expect(await check(token, 0, at), alg).toBe('accepted');
    }
  });

  it('refuses an algorithm of JWS it does not allow, though the certificate holds a fitting key', async () => {
    const by = await testCertificate('RS384 signer', { alg: 'RS384' });
    const at = { trustedCertificates: [by.pem], now: new Date() };
    const token = statusListToken({ by, claims: { exp: Math.floor(Date.now() / 1000) + 600 } });
    expect(await check(token, 0, at)).toBe('status: the status list token signature does not verify with its x5c certificate');
  });

  it("refuses a token whose sub is not the credential's uri", async () => {
    expect(await check(statusListToken({ claims: { sub: `${URI}/other` } }))).toBe(
      "status: the status list token's sub is not the credential's status list uri",
    );
    expect(await check(statusListToken({ claims: { sub: undefined } }))).toBe(
      "status: the status list token's sub is not the credential's status list uri",
    );
  });

  it('refuses an expired or malformed exp and a token not valid yet, with 60 s of clock skew for nbf', async () => {
    expect(await check(statusListToken({ claims: { exp: String(NOW_S + 3600) } }))).toBe(
      'status: the status list token has a malformed exp',
    );
    expect(await check(statusListToken({ claims: { exp: NOW_S } }))).toBe('status: the status list token has expired');
    expect(await check(statusListToken({ claims: { exp: NOW_S + 1 } }))).toBe('accepted');
    // Without exp the token does not expire.
    expect(await check(statusListToken({ claims: { exp: undefined } }))).toBe('accepted');
    expect(await check(statusListToken({ claims: { nbf: NOW_S + 61 } }))).toBe('status: the status list token is not valid yet');
    expect(await check(statusListToken({ claims: { nbf: NOW_S + 60 } }))).toBe('accepted');
    // An nbf that is not a number is not a time: it is ignored (as the draft defines none for it).
    expect(await check(statusListToken({ claims: { nbf: String(NOW_S + 3600) } }))).toBe('accepted');
  });

  it('refuses a status_list without a valid bits or a lst string, and a lst that does not inflate', async () => {
    const invalid = 'status: the status list token has no valid status_list (bits, lst)';
    expect(await check(statusListToken({ claims: { status_list: undefined } }))).toBe(invalid);
    for (const bits of [0, 3, 16, '1']) {
      expect(await check(statusListToken({ bits })), String(bits)).toBe(invalid);
    }
    const lst = deflateSync(Uint8Array.from([0])).toString('base64url');
    expect(await check(statusListToken({ claims: { status_list: { lst } } }))).toBe(invalid);
    expect(await check(statusListToken({ claims: { status_list: { bits: 1, lst: 42 } } }))).toBe(invalid);
    expect(await check(statusListToken({ claims: { status_list: { bits: 1, lst: 'bm90IGRlZmxhdGU' } } }))).toBe(
      'status: the status list could not be decompressed',
    );
  });

  it('refuses a list that inflates past 100 MB (the largest this service issues), and reads one of exactly that size', async () => {
    const largest = new Uint8Array(100_000_000);
    largest[99_999_999] = 1;
    expect(await check(statusListToken({ bits: 8, bytes: largest }), 99_999_999)).toBe('status: revoked');
    expect(await check(statusListToken({ bits: 8, bytes: new Uint8Array(100_000_001) }), 0)).toBe(
      'status: the status list could not be decompressed',
    );
  }, 60_000);
});

describe('trusting the signer', () => {
  it("accepts a signer that chains to the tenant's certificates, checked on every use", async () => {
    const token = statusListToken();
    expect(await check(token, 0, { trustedCertificates: [], now: NOW })).toBe(
      'status: untrusted status list signer: the x5c chain leads to no trusted certificate',
    );
    // Checked on every use, not only when fetched: the same checker, after the trust list changed.
    const checker = new StatusListChecker({ reader: serving(token).reader });
    const status = { status_list: { idx: 0, uri: URI } };
    expect(await outcome(checker.check('acme', status, context))).toBe('accepted');
    expect(await outcome(checker.check('acme', status, { trustedCertificates: [], now: NOW }))).toMatch(/untrusted status list signer/);
  });
});

describe('fetching', () => {
  it('asks for a status list token, bounded in time and size, and reads it with surrounding whitespace', async () => {
    const token = await statusListToken();
    const { reader, requests } = readerOf(async () => ({ text: `\n ${token} \n` }));
    const checker = new StatusListChecker({ reader, timeoutMs: 1234 });
    expect(await outcome(checker.check('acme', { status_list: { idx: 0, uri: URI } }, context))).toBe('accepted');
    expect(requests).toEqual([
      { url: URI, init: { headers: { accept: 'application/statuslist+jwt' }, timeoutMs: 1234, maxBytes: 32 * 1024 * 1024 } },
    ]);
    // Five seconds unless told otherwise.
    const byDefault = readerOf(async () => ({ text: token }));
    await new StatusListChecker({ reader: byDefault.reader }).check('acme', { status_list: { idx: 0, uri: URI } }, context);
    expect(byDefault.requests[0]?.init.timeoutMs).toBe(5_000);
  });

  it('fails closed on an HTTP error and on a failed request, naming the uri and the cause', async () => {
    const notFound = new StatusListChecker({ reader: readerOf(async () => ({ status: 404, text: 'gone' })).reader });
    expect(await outcome(notFound.check('acme', { status_list: { idx: 0, uri: URI } }, context))).toBe(
      `status: the status list at ${URI} answered HTTP 404`,
    );
    const failing = new StatusListChecker({
      reader: readerOf(async () => {
        throw new Error('fetch failed', { cause: new Error('connect ECONNREFUSED') });
      }).reader,
    });
    expect(await outcome(failing.check('acme', { status_list: { idx: 0, uri: URI } }, context))).toBe(
      `status: the status list at ${URI} could not be fetched (fetch failed: connect ECONNREFUSED)`,
    );
    const plain = new StatusListChecker({
      reader: readerOf(async () => {
        throw new Error('refused');
      }).reader,
    });
    expect(await outcome(plain.check('acme', { status_list: { idx: 0, uri: URI } }, context))).toBe(
      `status: the status list at ${URI} could not be fetched (refused)`,
    );
    const odd = new StatusListChecker({
      reader: readerOf(async () => {
        throw 'a string';
      }).reader,
    });
    expect(await outcome(odd.check('acme', { status_list: { idx: 0, uri: URI } }, context))).toBe(
      `status: the status list at ${URI} could not be fetched (a string)`,
    );
  });
});

describe('keeping verified tokens', () => {
  const status = { status_list: { idx: 0, uri: URI } };
  const at = (seconds: number) => ({ ...context, now: new Date(NOW.getTime() + seconds * 1000) });

  /** A checker over a reader serving the token `claims` describe; counts its requests. */
  function checkerServing(claims: Record<string, unknown>, owns?: (url: URL) => boolean) {
    const served = readerOf(async () => ({ text: await statusListToken({ claims }) }), owns);
    const cache = new StampedCache<FetchedStatusList>();
    return { checker: new StatusListChecker({ reader: served.reader, cache }), requests: served.requests, cache };
  }

  it('keeps a token until the earlier of its exp and ttl, per tenant', async () => {
    const ttlFirst = checkerServing({ exp: NOW_S + 3600, ttl: 60 });
    await ttlFirst.checker.check('acme', status, at(0));
    await ttlFirst.checker.check('acme', status, at(59));
    expect(ttlFirst.requests).toHaveLength(1);
    await ttlFirst.checker.check('acme', status, at(60));
    expect(ttlFirst.requests).toHaveLength(2);
    // Another tenant has its own entry.
    await ttlFirst.checker.check('other', status, at(60));
    expect(ttlFirst.requests).toHaveLength(3);

    const expFirst = checkerServing({ exp: NOW_S + 30, ttl: 60 });
    await expFirst.checker.check('acme', status, at(0));
    await expFirst.checker.check('acme', status, at(29));
    expect(expFirst.requests).toHaveLength(1);
    // At exp the kept token is not used: fetched again, and refused as expired.
    expect(await outcome(expFirst.checker.check('acme', status, at(30)))).toBe('status: the status list token has expired');
    expect(expFirst.requests).toHaveLength(2);
  });

  it('keeps a token with only a positive numeric ttl until then, and one with neither exp nor ttl not at all', async () => {
    const ttlOnly = checkerServing({ exp: undefined, ttl: 60 });
    await ttlOnly.checker.check('acme', status, at(0));
    await ttlOnly.checker.check('acme', status, at(59));
    expect(ttlOnly.requests).toHaveLength(1);
    await ttlOnly.checker.check('acme', status, at(60));
    expect(ttlOnly.requests).toHaveLength(2);

    for (const ttl of [undefined, 0, -60, '60']) {
      const unkept = checkerServing({ exp: undefined, ttl });
      await unkept.checker.check('acme', status, at(0));
      await unkept.checker.check('acme', status, at(0));
      expect(unkept.requests, String(ttl)).toHaveLength(2);
      expect(unkept.cache.stats().entries, String(ttl)).toBe(0);
    }
    // A zero or negative ttl does not shorten exp either.
    for (const ttl of [0, -60]) {
      const expKept = checkerServing({ exp: NOW_S + 30, ttl });
      await expKept.checker.check('acme', status, at(0));
      await expKept.checker.check('acme', status, at(29));
      expect(expKept.requests, String(ttl)).toHaveLength(1);
    }
  });

  it('fetches a list once for concurrent checks, and again once that fetch has ended', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const token = await statusListToken({ claims: { exp: undefined } });
    const { reader, requests } = readerOf(async () => {
      await gate;
      return { text: token };
    });
    const checker = new StatusListChecker({ reader });
    const both = Promise.all([checker.check('acme', status, context), checker.check('acme', status, context)]);
    release();
    await both;
    expect(requests).toHaveLength(1);
    await checker.check('acme', status, context);
    expect(requests).toHaveLength(2);
    // A failed fetch is not kept either.
    const failing = readerOf(async () => ({ status: 500 }));
    const failingChecker = new StatusListChecker({ reader: failing.reader });
    await outcome(failingChecker.check('acme', status, context));
    await outcome(failingChecker.check('acme', status, context));
    expect(failing.requests).toHaveLength(2);
  });

  it("reads this service's own lists at every check, and verifies a token only when it changed", async () => {
    // One signed token per change of claims (an ECDSA signature differs at every signing).
    let token = statusListToken({ claims: { ttl: 60 } });
    const change = (claims: Record<string, unknown>) => {
      token = statusListToken({ claims });
    };
    const owned: string[] = [];
    const { reader, requests } = readerOf(
      async () => ({ text: await token }),
      (url) => {
        owned.push(url.href);
        return true;
      },
    );
    const cache = new StampedCache<FetchedStatusList>();
    const checker = new StatusListChecker({ reader, cache });
    await checker.check('acme', status, at(0));
    await checker.check('acme', status, at(10));
    expect(owned).toEqual([URI, URI]);
    expect(requests).toHaveLength(2);
    // The same token the second time: its verification was kept.
    expect(cache.stats()).toMatchObject({ entries: 1, hits: 1, misses: 1 });
    // A changed token is verified, and kept until its exp...
    change({ exp: NOW_S + 30 });
    expect(await outcome(checker.check('acme', status, at(20)))).toBe('accepted');
    expect(await outcome(checker.check('acme', status, at(29)))).toBe('accepted');
    expect(cache.stats()).toMatchObject({ hits: 2, misses: 2 });
    // ...and at its exp verified again, and refused.
    expect(await outcome(checker.check('acme', status, at(30)))).toBe('status: the status list token has expired');
    // A revocation is seen at once.
    change({ status_list: { bits: 1, lst: deflateSync(Uint8Array.from([1])).toString('base64url') } });
    expect(await outcome(checker.check('acme', status, at(31)))).toBe('status: revoked');
    // A token with neither exp nor ttl is not kept.
    change({ exp: undefined });
    expect(await outcome(checker.check('acme', status, at(32)))).toBe('accepted');
    expect(cache.stats().entries).toBe(0);
  });
});
