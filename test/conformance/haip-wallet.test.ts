// oid4vc-ts (@openid4vc/* 0.4.6), the wallet library of the suite, against an issuer in the haip-1.0
// profile through the pre-authorized code grant, authenticating with the library's own
// attest_jwt_client_auth (a wallet provider's attestation, the library's proof of possession), DPoP,
// and a key attestation in its jwt proof. The credential and its status list token are read back
// with independent libraries (@sd-jwt through sd-jwt-check, jose, @peculiar/x509): x5c chains that
// lead to the tenant's CA, neither leaf self-signed, the trust anchor never included.
import 'reflect-metadata';
import { clientAuthenticationClientAttestationJwt } from '@openid4vc/oauth2';
import { Openid4vciClient } from '@openid4vc/openid4vci';
import * as x509 from '@peculiar/x509';
import { decodeJwt, decodeProtectedHeader, importX509, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issuanceCallbacks } from '../../wallet/callbacks.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey } from '../support/wallet.js';
import { type WalletProvider, walletProvider } from '../support/wallet-provider.js';

let svc: TestService;
let acme: string;
let provider: WalletProvider;
const CLIENT_ID = 'haip-wallet';

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  provider = await walletProvider('HAIP Wallets');
  const chain = await svc.raw('POST', '/api/key-chain', {
    token: acme,
    body: { id: 'status-ca', usageType: 'statusList', type: 'internalChain', default: true },
  });
  expect(chain.status, chain.text).toBe(201);
  const settings = await svc.raw('PUT', '/api/issuer/config', {
    token: acme,
    body: {
      profile: 'haip-1.0',
      dpopRequired: true,
      walletAttestationRequired: true,
      walletProviders: [{ name: provider.name, certificates: [provider.caPem] }],
    },
  });
  expect(settings.status, settings.text).toBe(200);
  const created = await svc.raw('POST', '/api/issuer/credentials', {
    token: acme,
    body: {
      id: 'badge',
      config: { format: 'dc+sd-jwt', scope: 'badge', keyAttestationsRequired: { key_storage: ['iso_18045_high'] } },
      vct: 'urn:example:badge',
      fields: [{ path: ['name'], type: 'string', mandatory: true }],
      statusManagement: true,
      lifeTime: 3600,
    },
  });
  expect(created.status, created.text).toBe(201);
});
afterAll(() => svc.stop());

/** Every certificate of an x5c: none self-signed (so no trust anchor is included), each signed by the next, the last by `root`. */
async function expectCaIssued(x5c: string[], rootPem: string) {
  const chain = [...x5c.map((der) => new x509.X509Certificate(der)), new x509.X509Certificate(rootPem)];
  expect(x5c.length).toBeGreaterThan(0);
  for (const [i, cert] of chain.slice(0, -1).entries()) {
    expect(await cert.isSelfSigned()).toBe(false);
    expect(await cert.verify({ publicKey: chain[i + 1] as x509.X509Certificate, signatureOnly: true })).toBe(true);
  }
}

describe('oid4vc-ts and an issuer in the haip-1.0 profile', () => {
  it('receives an SD-JWT VC by the pre-authorized code with attest_jwt_client_auth, DPoP and a key attestation', async () => {
    const offer = await svc.call('POST', '/api/issuer/offer', {
      token: acme,
      body: {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['badge'],
        credentialClaims: { badge: { type: 'inline', claims: { name: 'Ada' } } },
      },
    });
    expect(offer.status, offer.text).toBe(201);

    // The wallet instance key is attested by the wallet provider; the library signs the PoP with it.
    const [instanceKey, proofKey, dpopKey] = [await holderKey(), await holderKey(), await holderKey()];
    const callbacks = issuanceCallbacks([instanceKey, proofKey, dpopKey], CLIENT_ID);
    const clientAttestationJwt = await provider.attestation(
      { publicJwk: instanceKey.publicJwk as Record<string, unknown> },
      { sub: CLIENT_ID },
    );
    const client = new Openid4vciClient({
      callbacks: { ...callbacks, clientAuthentication: clientAuthenticationClientAttestationJwt({ clientAttestationJwt, callbacks }) },
    });
    const credentialOffer = await client.resolveCredentialOffer(offer.body.uri);
    const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
    expect(issuerMetadata.authorizationServers[0]?.token_endpoint_auth_methods_supported).toEqual(['attest_jwt_client_auth']);
    const token = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
      credentialOffer,
      issuerMetadata,
      dpop: { signer: dpopKey.signer },
    });
    expect(token.accessTokenResponse.token_type).toBe('DPoP');

    const { c_nonce } = await client.requestNonce({ issuerMetadata });
    const keyAttestationJwt = await provider.keyAttestation([proofKey.publicJwk as Record<string, unknown>], { nonce: c_nonce });
    const { jwt } = await client.createCredentialRequestJwtProof({
      issuerMetadata,
      signer: proofKey.signer,
      nonce: c_nonce,
      credentialConfigurationId: 'badge',
      keyAttestationJwt,
    });
    const response = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: token.accessTokenResponse.access_token,
      credentialConfigurationId: 'badge',
      proofs: { jwt: [jwt] },
      ...(token.dpop && { dpop: token.dpop }),
    });
    const [issued] = (response.credentialResponse.credentials ?? []) as { credential: string }[];
    expect(issued).toBeDefined();
    const credential = issued?.credential as string;

    // The credential: x5c to the tenant's attestation CA, bound to the proof key, with exp and a status list entry.
    const attestationRoot = (await svc.raw('GET', '/api/key-chain/default-attestation', { token: acme })).body.rootCertificate as string;
    await expectCaIssued(decodeProtectedHeader(credential.split('~')[0] as string).x5c as string[], attestationRoot);
    const statusRoot = (await svc.raw('GET', '/api/key-chain/status-ca', { token: acme })).body.rootCertificate as string;
    const { payload, claims } = await verifySdJwtIndependently(credential, attestationRoot, { statusListRoot: statusRoot });
    expect(claims).toMatchObject({ name: 'Ada' });
    expect(payload.cnf.jwk).toMatchObject({ x: proofKey.publicJwk.x, y: proofKey.publicJwk.y });
    expect(payload.exp).toBeGreaterThan(payload.iat);
    const uri = payload.status.status_list.uri as string;

    // Its status list token: signed by the CA-issued status list chain, its x5c without the anchor.
    const statusListToken = await (await fetch(uri)).text();
    const header = decodeProtectedHeader(statusListToken);
    await expectCaIssued(header.x5c as string[], statusRoot);
    const leafPem = new x509.X509Certificate((header.x5c as string[])[0] as string).toString('pem');
    await jwtVerify(statusListToken, await importX509(leafPem, header.alg as string), { typ: 'statuslist+jwt' });
    expect(decodeJwt(statusListToken).sub).toBe(uri);
  });
});
