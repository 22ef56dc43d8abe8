// The TrustService's choice of frameworks by the tenant's federation mode, with a federation that
// answers as told and a LoTE list of one root: which framework decides, in which order, and how the
// refusals of each are reported.

import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/platform/clock.js';
import type { OutboundClient } from '../../src/platform/outbound/client.js';
import { FederationRefused } from '../../src/trust/federation/entity-statement.js';
import type { ResolvedTrust } from '../../src/trust/federation/resolver.js';
import type { FederationMode, FederationSettings } from '../../src/trust/federation/settings.js';
import type { FederationTrust } from '../../src/trust/federation/trust.js';
import {
  frameworksInMode,
  issuerChainAnchors,
  issuerKey,
  MODE_ORDER,
  TRUST_FRAMEWORKS,
  TrustRefused,
  TrustService,
} from '../../src/trust/index.js';
import { type TestCertificate, testCertificate } from '../support/test-pki.js';

const ANCHOR = 'https://anchor.example';
const NOW = new Date();
let root: TestCertificate;
let leaf: TestCertificate;
let federationJwk: JWK;

beforeAll(async () => {
  root = await testCertificate('Root', { ca: true });
  leaf = await testCertificate('Issuer', { issuer: root });
  federationJwk = { ...(await exportJWK((await generateKeyPair('ES256', { extractable: true })).publicKey)), kid: 'fed-key' };
});

/** A federation of `mode` whose issuerKey answers with the key, or refuses. */
function federation(mode: FederationMode, refuse = false): FederationTrust & { asked: number } {
  const trust = {
    mode,
    trustAnchors: [{ entityId: ANCHOR }],
    asked: 0,
    resolve: async () => {
      throw new FederationRefused('entity configuration', 'not found');
    },
    issuerKey: async (_issuer: string, _kid: string, anchorIds: string[]) => {
      trust.asked++;
      if (refuse) throw new FederationRefused('entity configuration', 'not found');
      return { jwk: federationJwk, trust: { anchor: anchorIds[0] } as unknown as ResolvedTrust };
    },
  };
  return trust;
}

const both = () => ({ header: { alg: 'ES256', kid: 'fed-key', x5c: [leaf.der, root.der] }, iss: 'https://issuer.example', now: NOW });

describe('the registry and the modes', () => {
  it('registers lote, federation and x509, and every framework a mode names', () => {
    expect([...TRUST_FRAMEWORKS.keys()]).toEqual(['lote', 'federation', 'x509']);
    for (const ids of MODE_ORDER.values()) for (const id of ids) expect(TRUST_FRAMEWORKS.has(id)).toBe(true);
  });

  it('asks federation then LoTE in hybrid, one of them otherwise, and LoTE alone without settings', () => {
    const ids = (mode?: FederationMode) => frameworksInMode(mode ? { federation: federation(mode) } : {}).map((f) => f.id);
    expect(ids('hybrid')).toEqual(['federation', 'lote']);
    expect(ids('federation-only')).toEqual(['federation']);
    expect(ids('lote-only')).toEqual(['lote']);
    expect(ids()).toEqual(['lote']);
  });
});

describe('issuerKey by mode', () => {
  it('hybrid: the federation decides when the issuer resolves, naming its anchor', async () => {
    const fed = federation('hybrid');
    const decision = await issuerKey({ trustedCertificates: [root.pem], federation: fed }, both());
    expect(decision).toMatchObject({ framework: 'federation', anchor: ANCHOR });
    expect(fed.asked).toBe(1);
  });

  it('hybrid: LoTE decides when the federation refuses; both refusals are reported when neither trusts', async () => {
    const fed = federation('hybrid', true);
    expect(await issuerKey({ trustedCertificates: [root.pem], federation: fed }, both())).toMatchObject({ framework: 'lote' });
    const refused = issuerKey({ trustedCertificates: [], federation: fed }, both());
    await expect(refused).rejects.toThrow(TrustRefused);
    await expect(refused).rejects.toThrow(
      'untrusted issuer: OpenID Federation: entity configuration: not found; LoTE: untrusted issuer: the x5c chain leads to no trusted certificate',
    );
  });

  it('federation-only never falls back to LoTE; lote-only never asks the federation', async () => {
    const fedOnly = federation('federation-only', true);
    await expect(issuerKey({ trustedCertificates: [root.pem], federation: fedOnly }, both())).rejects.toThrow(
      'untrusted issuer: OpenID Federation: entity configuration: not found',
    );
    const loteOnly = federation('lote-only');
    expect(await issuerKey({ trustedCertificates: [root.pem], federation: loteOnly }, both())).toMatchObject({ framework: 'lote' });
    expect(loteOnly.asked).toBe(0);
  });

  it('a query naming federation anchors needs federation settings and a mode that asks the federation', async () => {
    await expect(issuerKey({ trustedCertificates: [root.pem] }, { ...both(), queryAnchors: [ANCHOR] })).rejects.toThrow(
      'the tenant has no federation settings',
    );
    await expect(
      issuerKey({ trustedCertificates: [root.pem], federation: federation('lote-only') }, { ...both(), queryAnchors: [ANCHOR] }),
    ).rejects.toThrow('the tenant federation mode is lote-only');
  });
});

describe('issuerChainAnchors (an mdoc issuer chain)', () => {
  it('answers the LoTE certificates in every mode: the federation has nothing to say for an X.509 chain', async () => {
    const lote = { trustedCertificates: [root.pem] };
    expect(await issuerChainAnchors(lote)).toEqual([root.pem]);
    for (const mode of MODE_ORDER.keys()) expect(await issuerChainAnchors({ ...lote, federation: federation(mode) })).toEqual([root.pem]);
  });
});

describe('TrustService', () => {
  const outbound = {
    request: async () => {
      throw new Error('no network here');
    },
  } as unknown as OutboundClient;
  const settings = (mode: FederationMode): FederationSettings => ({
    role: 'leaf',
    mode,
    authorityHints: [],
    trustAnchors: [{ entityId: ANCHOR }],
    cacheTtlSeconds: 0,
  });
  const service = new TrustService({
    outbound,
    listedCertificates: async (_tenantId, purpose) => (purpose === 'walletAttestations' ? ['wallet-root'] : [root.pem]),
    federationSettingsOf: async () => null,
    resolutionDeadlineMs: 1_000,
    clock: systemClock,
  });

  it('gathers the tenant trust: LoTE certificates, no federation without settings', async () => {
    expect(await service.tenantTrust('acme')).toEqual({ trustedCertificates: [root.pem] });
  });

  it("wallet providers: the settings' certificates, then the LoTE wallet entities, each once", async () => {
    expect(await service.walletProviders('acme', { walletProviders: [] })).toEqual(['wallet-root']);
    const settings = { walletProviders: [{ certificates: ['configured-root', 'wallet-root'] }, { certificates: ['configured-root'] }] };
    expect(await service.walletProviders('acme', settings)).toEqual(['configured-root', 'wallet-root']);
  });

  it("authorization servers: the server's own metadata decides without settings, in lote-only, and in hybrid when it does not resolve", async () => {
    expect(await service.authorizationServerKeys('acme', null, 'https://as.example')).toBeUndefined();
    expect(await service.authorizationServerKeys('acme', settings('lote-only'), 'https://as.example')).toBeUndefined();
    expect(await service.authorizationServerKeys('acme', settings('hybrid'), 'https://as.example')).toBeUndefined();
    await expect(service.authorizationServerKeys('acme', settings('federation-only'), 'https://as.example')).rejects.toThrow(
      FederationRefused,
    );
  });
});
