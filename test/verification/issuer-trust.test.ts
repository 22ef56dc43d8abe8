// Which key verifies an SD-JWT VC's issuer signature, and why it is trusted: the x5c chain to the
// tenant's trust lists (LoTE), an OpenID Federation trust chain from iss (the key kid names in the
// resolved issuer metadata), or in hybrid mode the federation first and LoTE when it refuses. The
// federation here answers as told, so that each mode's choices and refusals show on their own.
import { type KeyObject, X509Certificate } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PresentationContext } from '../../src/formats/presentation-context.js';
import { trustedIssuerKey } from '../../src/formats/sd-jwt-vc/issuer-trust.js';
import { FederationRefused } from '../../src/trust/federation/entity-statement.js';
import type { ResolvedTrust } from '../../src/trust/federation/resolver.js';
import type { FederationMode } from '../../src/trust/federation/settings.js';
import type { FederationTrust } from '../../src/trust/federation/trust.js';
import { statusListSigner } from '../../src/trust/index.js';
import { PresentationRejected } from '../../src/verification/errors.js';
import { type TestCertificate, testCertificate } from '../support/test-pki.js';

const ISS = 'https://issuer.example';
const ANCHOR = 'https://anchor.example';
const NOW = new Date();

let root: TestCertificate;
let issuerCertificate: TestCertificate;
let federationJwk: JWK;
let federationPrivate: CryptoKey;

beforeAll(async () => {
  root = await testCertificate('Issuer Root CA', { ca: true });
  issuerCertificate = await testCertificate('Issuer', { issuer: root });
  const pair = await generateKeyPair('ES256', { extractable: true });
  federationJwk = { ...(await exportJWK(pair.publicKey)), kid: 'fed-key' };
  federationPrivate = pair.privateKey as CryptoKey;
});

/** An issued SD-JWT (issuer JWT, one disclosure) with the given header and iss (null: none). */
async function presentation(header: Record<string, unknown>, iss: string | null = ISS): Promise<string> {
  const jwt = await new SignJWT(iss === null ? {} : { iss })
    .setProtectedHeader({ alg: 'ES256', typ: 'dc+sd-jwt', ...header })
    .sign(header.kid === 'fed-key' ? federationPrivate : issuerCertificate.keys.privateKey);
  return `${jwt}~WyJzYWx0IiwiZ2l2ZW5fbmFtZSIsIkVyaWthIl0~`;
}
const withX5c = () => presentation({ x5c: [issuerCertificate.der, root.der] });
const withKid = (header: Record<string, unknown> = {}) => presentation({ kid: 'fed-key', ...header });
/** Both: a kid for the federation, an x5c chain for LoTE. */
const withBoth = () => presentation({ kid: 'fed-key', x5c: [issuerCertificate.der, root.der] });

interface FakeFederation extends FederationTrust {
  asked: { issuer: string; kid: string; anchorIds: string[] }[];
}

/** A federation of `mode` whose issuerKey answers with `answer` (a JWK, or an error to throw). */
function federation(mode: FederationMode, answer: () => JWK | Error = () => federationJwk): FakeFederation {
  const asked: FakeFederation['asked'] = [];
  return {
    mode,
    trustAnchors: [{ entityId: ANCHOR }, { entityId: 'https://second.example' }],
    asked,
    resolve: async () => {
      throw new Error('not used');
    },
    issuerKey: async (issuer, kid, anchorIds) => {
      asked.push({ issuer, kid, anchorIds });
      const jwk = answer();
      if (jwk instanceof Error) throw jwk;
      return { jwk, trust: { anchor: anchorIds.at(-1), metadata: {}, expiresAt: 0, chain: [] } as unknown as ResolvedTrust };
    },
  };
}

function context(overrides: Partial<PresentationContext> = {}): PresentationContext {
  return {
    clientId: 'x',
    nonce: 'n',
    trustedCertificates: [root.pem],
    transactionData: [],
    now: NOW,
    responseUri: 'https://v.example',
    ...overrides,
  };
}

const jwkOf = (key: KeyObject) => key.export({ format: 'jwk' });
const issuerJwk = () => new X509Certificate(Buffer.from(issuerCertificate.der, 'base64')).publicKey.export({ format: 'jwk' });

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'accepted';
  } catch (err) {
    return err instanceof PresentationRejected ? err.message : `not a rejection: ${String(err)}`;
  }
}

describe('trustedIssuerKey', () => {
  it('refuses what is not an SD-JWT', async () => {
    expect(await refusal(trustedIssuerKey('not-a-jwt~', context()))).toBe('the presentation is not an SD-JWT');
  });

  it("without federation (LoTE): the x5c leaf's key when the chain leads to a trusted certificate", async () => {
    const { key, authority } = await trustedIssuerKey(await withX5c(), context());
    expect(jwkOf(key)).toEqual(issuerJwk());
    expect(authority).toBeUndefined();
    expect(await refusal(trustedIssuerKey(await withX5c(), context({ trustedCertificates: [] })))).toBe(
      'untrusted issuer: the x5c chain leads to no trusted certificate',
    );
    for (const x5c of [undefined, [], 'MIIB']) {
      expect(await refusal(trustedIssuerKey(await presentation({ x5c }), context())), JSON.stringify(x5c)).toBe(
        'issuer signature: the credential carries no x5c chain',
      );
    }
  });

  it('refuses a query that trusts federation anchors when the tenant has no federation or uses LoTE only', async () => {
    expect(await refusal(trustedIssuerKey(await withX5c(), context({ federationAnchors: [ANCHOR] })))).toBe(
      'untrusted issuer: the query trusts OpenID Federation anchors, and the tenant has no federation settings (federation in PUT /api/trust-config)',
    );
    const loteOnly = federation('lote-only');
    expect(await refusal(trustedIssuerKey(await withX5c(), context({ federation: loteOnly, federationAnchors: [ANCHOR] })))).toBe(
      'untrusted issuer: the query trusts OpenID Federation anchors, and the tenant federation mode is lote-only',
    );
    // Without anchors in the query, lote-only is LoTE.
    expect(jwkOf((await trustedIssuerKey(await withX5c(), context({ federation: loteOnly }))).key)).toEqual(issuerJwk());
    expect(loteOnly.asked).toEqual([]);
  });

  it("federation-only: the key kid names in the issuer's resolved metadata, through the query's or the settings' anchors", async () => {
    const only = federation('federation-only');
    const trusted = await trustedIssuerKey(await withKid(), context({ federation: only }));
    expect(jwkOf(trusted.key)).toMatchObject({ kty: 'EC', crv: 'P-256', x: federationJwk.x, y: federationJwk.y });
    expect(trusted.authority).toEqual({ type: 'openid_federation', values: ['https://second.example'] });
    expect(only.asked).toEqual([{ issuer: ISS, kid: 'fed-key', anchorIds: [ANCHOR, 'https://second.example'] }]);
    const byQuery = await trustedIssuerKey(await withKid(), context({ federation: only, federationAnchors: [ANCHOR] }));
    expect(byQuery.authority).toEqual({ type: 'openid_federation', values: [ANCHOR] });
    expect(only.asked[1]?.anchorIds).toEqual([ANCHOR]);
    // An x5c chain to the trust lists does not count.
    const refusing = federation('federation-only', () => new FederationRefused('trust chain', 'no path to an anchor'));
    expect(
      await refusal(
        trustedIssuerKey(await presentation({ kid: 'fed-key', x5c: [issuerCertificate.der] }), context({ federation: refusing })),
      ),
    ).toBe('untrusted issuer: OpenID Federation: trust chain: no path to an anchor');
  });

  it('federation-only: refuses a credential without iss or kid, and a key that does not fit its alg', async () => {
    const only = federation('federation-only');
    expect(await refusal(trustedIssuerKey(await presentation({ kid: 'fed-key' }, null), context({ federation: only })))).toBe(
      'untrusted issuer: OpenID Federation: credential: iss is missing',
    );
    expect(await refusal(trustedIssuerKey(await presentation({ x5c: [issuerCertificate.der] }), context({ federation: only })))).toBe(
      'untrusted issuer: OpenID Federation: credential: the header names no kid',
    );
    expect(only.asked).toEqual([]);
    const p384 = await generateKeyPair('ES384', { extractable: true });
    const wrongCurve = federation('federation-only', () => ({ kid: 'fed-key' }) as JWK);
    expect(await refusal(trustedIssuerKey(await withKid(), context({ federation: wrongCurve })))).toBe(
      'untrusted issuer: OpenID Federation: credential key: key fed-key does not fit alg ES256',
    );
    const es384 = federation('federation-only', () => ({ ...federationJwk }));
    const signed384 = await new SignJWT({ iss: ISS }).setProtectedHeader({ alg: 'ES384', kid: 'fed-key' }).sign(p384.privateKey);
    expect(await refusal(trustedIssuerKey(`${signed384}~`, context({ federation: es384 })))).toBe(
      'untrusted issuer: OpenID Federation: credential key: key fed-key does not fit alg ES384',
    );
    // A header without alg.
    const noAlg = `${Buffer.from(JSON.stringify({ kid: 'fed-key' })).toString('base64url')}.${Buffer.from(JSON.stringify({ iss: ISS })).toString('base64url')}.c2ln~`;
    expect(await refusal(trustedIssuerKey(noAlg, context({ federation: es384 })))).toBe(
      'untrusted issuer: OpenID Federation: credential key: key fed-key does not fit alg undefined',
    );
  });

  it('passes on a failure of the federation that is not a refusal', async () => {
    const broken = federation('federation-only', () => new TypeError('resolver bug'));
    expect(await refusal(trustedIssuerKey(await withKid(), context({ federation: broken })))).toBe(
      'not a rejection: TypeError: resolver bug',
    );
    const brokenHybrid = federation('hybrid', () => new TypeError('resolver bug'));
    expect(await refusal(trustedIssuerKey(await withBoth(), context({ federation: brokenHybrid })))).toBe(
      'not a rejection: TypeError: resolver bug',
    );
  });

  it('hybrid: the federation first; LoTE when it refuses, or when no anchor applies', async () => {
    const hybrid = federation('hybrid');
    const viaFederation = await trustedIssuerKey(await withBoth(), context({ federation: hybrid }));
    expect(viaFederation.authority?.type).toBe('openid_federation');

    const refusing = federation('hybrid', () => new FederationRefused('trust chain', 'no path to an anchor'));
    const viaLote = await trustedIssuerKey(await withBoth(), context({ federation: refusing }));
    expect(jwkOf(viaLote.key)).toEqual(issuerJwk());
    expect(viaLote.authority).toBeUndefined();
    expect(refusing.asked).toHaveLength(1);

    const bothRefuse = await refusal(trustedIssuerKey(await withBoth(), context({ federation: refusing, trustedCertificates: [] })));
    expect(bothRefuse).toBe(
      'untrusted issuer: OpenID Federation: trust chain: no path to an anchor; LoTE: untrusted issuer: the x5c chain leads to no trusted certificate',
    );

    const noAnchors = { ...federation('hybrid'), trustAnchors: [] };
    expect(jwkOf((await trustedIssuerKey(await withBoth(), context({ federation: noAnchors }))).key)).toEqual(issuerJwk());
    expect(noAnchors.asked).toEqual([]);
    // The query's anchors count as anchors.
    const queried = { ...federation('hybrid'), trustAnchors: [] };
    expect((await trustedIssuerKey(await withKid(), context({ federation: queried, federationAnchors: [ANCHOR] }))).authority).toEqual({
      type: 'openid_federation',
      values: [ANCHOR],
    });
  });
});

describe("a status list signer judged by the federation the credential was accepted through (the trust service's statusListSigner)", () => {
  /** Whether the federation framework vouches for a signer's certificate; undefined when the credential or tenant has no federation. */
  function federationStatusSigner(
    credential: { issuer: string; authority?: typeof authority },
    context: Pick<PresentationContext, 'federation'>,
  ): ((certificate: string) => Promise<boolean>) | undefined {
    if (!credential.authority || !context.federation) return undefined;
    const trust = { trustedCertificates: [], federation: context.federation };
    return async (certificate) => (await statusListSigner(trust, { x5c: [certificate], credential, now: NOW }))?.framework === 'federation';
  }
  const authority = { type: 'openid_federation' as const, values: [ANCHOR] as [string] };

  /** A federation whose resolution of the issuer gives `metadata` (or throws it, when an Error). */
  function resolving(metadata: Record<string, unknown> | Error) {
    const asked: { entityId: string; anchorIds?: string[] }[] = [];
    const trust = {
      ...federation('hybrid'),
      resolve: async (entityId: string, anchorIds?: string[]) => {
        asked.push({ entityId, anchorIds });
        if (metadata instanceof Error) throw metadata;
        return { anchor: ANCHOR, metadata, expiresAt: 0, chain: [] } as unknown as ResolvedTrust;
      },
    };
    return { trust, asked };
  }

  async function signerJwk(certificate: TestCertificate) {
    return (await crypto.subtle.exportKey('jwk', certificate.keys.publicKey)) as Record<string, unknown>;
  }

  it('is absent for a credential not trusted through a federation, or a tenant without one', () => {
    expect(federationStatusSigner({ issuer: ISS }, { federation: resolving({}).trust })).toBeUndefined();
    expect(federationStatusSigner({ issuer: ISS, authority }, {})).toBeUndefined();
  });

  it("vouches for a signer whose key is among the issuer's resolved jwks, resolved through the credential's anchor", async () => {
    const signer = await testCertificate('Status signer', { issuer: root });
    const keys = [null, 'text', { kty: 'OKP', crv: 'Ed25519', x: 'x' }, await signerJwk(signer)];
    const { trust, asked } = resolving({ openid_credential_issuer: { jwks: { keys } } });
    const vouch = federationStatusSigner({ issuer: ISS, authority }, { federation: trust });
    expect(await vouch?.(signer.der)).toBe(true);
    expect(asked).toEqual([{ entityId: ISS, anchorIds: [ANCHOR] }]);
    expect(await vouch?.(issuerCertificate.der)).toBe(false);
  });

  it("refuses a signer when the issuer's metadata has no usable jwks or the federation refuses; passes on other failures", async () => {
    const signer = await testCertificate('Status signer', { issuer: root });
    const jwk = await signerJwk(signer);
    for (const metadata of [
      { openid_credential_issuer: { jwks: { keys: { 0: jwk } } } },
      { openid_credential_issuer: { jwks: [jwk] } },
      { openid_credential_issuer: [{ jwks: { keys: [jwk] } }] },
      { openid_relying_party: { jwks: { keys: [jwk] } } },
      { openid_credential_issuer: { jwks: { keys: [{ ...jwk, kty: 'OKP' }] } } },
    ]) {
      const vouch = federationStatusSigner({ issuer: ISS, authority }, { federation: resolving(metadata).trust });
      expect(await vouch?.(signer.der), JSON.stringify(metadata)).toBe(false);
    }
    const refused = federationStatusSigner(
      { issuer: ISS, authority },
      { federation: resolving(new FederationRefused('trust chain', 'expired')).trust },
    );
    expect(await refused?.(signer.der)).toBe(false);
    const broken = federationStatusSigner({ issuer: ISS, authority }, { federation: resolving(new TypeError('resolver bug')).trust });
    await expect(broken?.(signer.der)).rejects.toThrow('resolver bug');
  });
});
