// FederationTrustSource: the federation trust a tenant's verifier uses, in front of a resolver that
// records what it is asked and answers with metadata made here. What it must get right: which anchors a
// resolution may end at (the settings', or those a query names, read where the settings say), whose
// settings are used, and which key of the resolved issuer metadata verifies a credential.
import type { JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { FederationRefused } from '../../src/trust/federation/entity-statement.js';
import type { ResolvedTrust, TrustAnchorRef, TrustChainResolver } from '../../src/trust/federation/resolver.js';
import type { FederationSettings } from '../../src/trust/federation/settings.js';
import { FederationTrustSource } from '../../src/trust/federation/trust.js';

const ANCHOR = { entityId: 'https://anchor.example', entityConfigurationUri: 'https://mirror.example/anchor-configuration' };
const SECOND = { entityId: 'https://second-anchor.example' };
const SETTINGS = { role: 'leaf', mode: 'hybrid', trustAnchors: [ANCHOR, SECOND], cacheTtlSeconds: 321 } as unknown as FederationSettings;
const ISSUER = 'https://issuer.example';
const KEY = { kty: 'EC', crv: 'P-256', kid: 'signing', x: 'x', y: 'y' };

/** A resolver that answers every resolution with `metadata`, ending at the first anchor asked for. */
function fakeResolver(metadata: Record<string, unknown> = { openid_credential_issuer: { jwks: { keys: [KEY] } } }) {
  const resolutions: { tenantId: string; entityId: string; anchors: TrustAnchorRef[]; ttl: number | undefined }[] = [];
  const forgotten: string[] = [];
  const resolver = {
    async resolve(tenantId: string, entityId: string, anchors: TrustAnchorRef[], ttl?: number): Promise<ResolvedTrust> {
      resolutions.push({ tenantId, entityId, anchors, ttl });
      return { anchor: anchors[0]?.entityId as string, metadata, expiresAt: 0, chain: [] } as ResolvedTrust;
    },
    forget(tenantId: string) {
      forgotten.push(tenantId);
    },
  };
  return { resolver: resolver as unknown as TrustChainResolver, resolutions, forgotten };
}

describe('FederationTrustSource', () => {
  it('has no trust for a tenant without federation settings, and reads settings at most once a second until forgotten', async () => {
    const { resolver, forgotten } = fakeResolver();
    const asked: string[] = [];
    const source = new FederationTrustSource(resolver, async (tenantId) => {
      asked.push(tenantId);
      return tenantId === 'member' ? SETTINGS : null;
    });
    expect(await source.trustFor('outsider')).toBeUndefined();
    const trust = await source.trustFor('member');
    expect(trust?.mode).toBe('hybrid');
    expect(trust?.trustAnchors).toEqual([ANCHOR, SECOND]);
    await source.trustFor('member');
    expect(asked).toEqual(['outsider', 'member']);
    source.forget('member');
    expect(forgotten).toEqual(['member']);
    await source.trustFor('member');
    expect(asked).toEqual(['outsider', 'member', 'member']);
  });

  it("resolves to the settings' anchors by default, for the tenant, with its cache lifetime", async () => {
    const { resolver, resolutions } = fakeResolver();
    const trust = new FederationTrustSource(resolver, async () => SETTINGS).trustWith('member', SETTINGS);
    const resolved = await trust.resolve(ISSUER);
    expect(resolved.anchor).toBe(ANCHOR.entityId);
    expect(resolutions).toEqual([{ tenantId: 'member', entityId: ISSUER, anchors: [ANCHOR, SECOND], ttl: 321 }]);
  });

  it('resolves to the anchors a query names, read where the settings say when they list them', async () => {
    const { resolver, resolutions } = fakeResolver();
    const trust = new FederationTrustSource(resolver, async () => SETTINGS).trustWith('member', SETTINGS);
    await trust.resolve(ISSUER, ['https://elsewhere.example', ANCHOR.entityId]);
    expect(resolutions[0]?.anchors).toEqual([{ entityId: 'https://elsewhere.example' }, ANCHOR]);
  });

  it("gives the key kid names among the resolved issuer metadata's jwks, with the trust it came through", async () => {
    const { resolver, resolutions } = fakeResolver();
    const trust = new FederationTrustSource(resolver, async () => SETTINGS).trustWith('member', SETTINGS);
    const { jwk, trust: through } = await trust.issuerKey(ISSUER, 'signing', [SECOND.entityId]);
    expect(jwk).toEqual(KEY);
    expect(through.anchor).toBe(SECOND.entityId);
    expect(resolutions[0]).toMatchObject({ entityId: ISSUER, anchors: [SECOND] });
  });

  it('refuses a kid that is not among them, and metadata without a usable jwks', async () => {
    const cases: Record<string, unknown>[] = [
      { openid_credential_issuer: { jwks: { keys: [KEY] } } },
      { openid_credential_issuer: { jwks: { keys: [{ ...KEY, kid: 'other' }] } } },
      { openid_credential_issuer: { jwks: { keys: { signing: KEY } } } },
      { openid_credential_issuer: { jwks: [KEY] } },
      { openid_credential_issuer: { jwks: 'https://issuer.example/jwks' } },
      { openid_credential_issuer: [{ jwks: { keys: [KEY] } }] },
      { openid_relying_party: { jwks: { keys: [KEY] } } },
    ];
    for (const [i, metadata] of cases.entries()) {
      const trust = new FederationTrustSource(fakeResolver(metadata).resolver, async () => SETTINGS).trustWith('member', SETTINGS);
      const kid = i === 0 ? 'unknown' : 'signing';
      const refusal = await trust.issuerKey(ISSUER, kid, [ANCHOR.entityId]).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refusal, JSON.stringify(metadata)).toBeInstanceOf(FederationRefused);
      expect((refusal as FederationRefused).message).toBe(
        `credential key: kid ${kid} is not a key of the issuer's resolved openid_credential_issuer metadata`,
      );
    }
  });

  it('finds the key by kid among several', async () => {
    const keys: JWK[] = [{ ...KEY, kid: 'first' }, KEY, { ...KEY, kid: 'last' }];
    const trust = new FederationTrustSource(
      fakeResolver({ openid_credential_issuer: { jwks: { keys } } }).resolver,
      async () => SETTINGS,
    ).trustWith('member', SETTINGS);
    expect((await trust.issuerKey(ISSUER, 'last', [ANCHOR.entityId])).jwk.kid).toBe('last');
  });
});
