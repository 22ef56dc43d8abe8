// Key attestations (OpenID4VCI 1.0 appendix D): a jwt proof with a key_attestation header and the
// attestation proof type, against the real server. Key attestations are made by a test wallet
// provider (jose, x5c chain to its CA); the wallet side of the flow is @openid4vc/openid4vci, and
// the issued credentials are checked with @sd-jwt and jose.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startService, type TestService } from '../support/service.js';
import { type HolderKey, holderKey, walletClient } from '../support/wallet.js';
import { type WalletProvider, walletProvider } from '../support/wallet-provider.js';

let svc: TestService;
let acme: string;
let rootCertificate: string;
let trusted: WalletProvider;
let rogue: WalletProvider;
let issuer: string;

const GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const ACCEPTED_LEVELS = { key_storage: ['iso_18045_high', 'iso_18045_moderate'], user_authentication: ['iso_18045_high'] };
const configuration = (id: string, keyAttestationsRequired: unknown) => ({
  id,
  config: { format: 'dc+sd-jwt', keyAttestationsRequired },
  vct: `urn:example:${id}`,
  keyBinding: true,
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['family_name'], type: 'string', mandatory: true },
  ],
});

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  for (const body of [configuration('pid', ACCEPTED_LEVELS), configuration('anykey', {}), configuration('plain', null)]) {
    const created = await svc.raw('POST', '/api/issuer/credentials', { token: acme, body });
    expect(created.status, created.text).toBe(201);
  }
  [trusted, rogue] = await Promise.all([walletProvider('Trusted Wallets'), walletProvider('Rogue Wallets')]);
  const settings = await svc.raw('PUT', '/api/issuer/config', {
    token: acme,
    body: { batchSize: 3, walletProviders: [{ name: trusted.name, certificates: [trusted.caPem] }] },
  });
  expect(settings.status, settings.text).toBe(200);
  rootCertificate = (await svc.raw('GET', '/api/key-chain/default-attestation', { token: acme })).body.rootCertificate;
  issuer = `${svc.url}/issuers/acme`;
});
afterAll(() => svc.stop());

/** A pre-authorized offer of `configurationId`, redeemed: its access token. */
async function accessToken(configurationId: string) {
  const offer = await svc.raw('POST', '/api/issuer/offer', {
    token: acme,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: [configurationId],
      credentialClaims: { [configurationId]: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann' } } },
    },
  });
  expect(offer.status, offer.text).toBe(201);
  const code = offer.body.credentialOffer.grants[GRANT]['pre-authorized_code'];
  const token = await svc.raw('POST', '/issuers/acme/token', { form: { grant_type: GRANT, 'pre-authorized_code': code } });
  expect(token.status, token.text).toBe(200);
  return { token: token.body.access_token as string, offerUri: offer.body.uri as string };
}

const nonce = async () => (await svc.raw('POST', '/issuers/acme/nonce')).body.c_nonce as string;

/** A jwt proof by hand (jose), signed by `key`, with the given header members and claims. */
async function jwtProof(key: HolderKey, header: Record<string, unknown>, claims: Record<string, unknown>) {
  return new SignJWT({ aud: issuer, iat: Math.floor(Date.now() / 1000), ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: key.publicJwk, ...header })
    .sign(await importJWK(key.privateJwk, 'ES256'));
}

const requestCredential = (token: string, body: Record<string, unknown>) => svc.raw('POST', '/issuers/acme/credential', { token, body });

function expectError(reply: { status: number; body: any; text: string }, error: string, description: RegExp) {
  expect(reply.status, reply.text).toBe(400);
  expect(reply.body.error, reply.text).toBe(error);
  expect(reply.body.error_description, reply.text).toMatch(description);
}

/** The holder keys (x, y) the issued credentials are bound to, each verified independently. */
async function boundKeys(credentials: { credential: string }[]) {
  const keys: string[] = [];
  for (const { credential } of credentials) {
    const { payload } = await verifySdJwtIndependently(credential, rootCertificate);
    keys.push(`${payload.cnf.jwk.x}.${payload.cnf.jwk.y}`);
  }
  return keys.sort();
}
const keyIds = (keys: HolderKey[]) => keys.map((k) => `${k.publicJwk.x}.${k.publicJwk.y}`).sort();

describe('key attestations', () => {
  it('publishes the jwt and attestation proof types with key_attestations_required where a configuration requires them', async () => {
    const metadata = (await svc.raw('GET', '/.well-known/openid-credential-issuer/issuers/acme')).body;
    const algorithms = ['ES256', 'ES384', 'ES512'];
    const required = { proof_signing_alg_values_supported: algorithms, key_attestations_required: ACCEPTED_LEVELS };
    expect(metadata.credential_configurations_supported.pid.proof_types_supported).toEqual({ jwt: required, attestation: required });
    expect(metadata.credential_configurations_supported.anykey.proof_types_supported.attestation).toEqual({
      proof_signing_alg_values_supported: algorithms,
      key_attestations_required: {},
    });
    expect(metadata.credential_configurations_supported.plain.proof_types_supported).toEqual({
      jwt: { proof_signing_alg_values_supported: algorithms },
    });
  });

  it('issues for a jwt proof with a key attestation, made by the wallet library, bound to the attested key', async () => {
    const { token, offerUri } = await accessToken('pid');
    const key = await holderKey();
    const client = walletClient([key]);
    const credentialOffer = await client.resolveCredentialOffer(offerUri);
    const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
    const { c_nonce } = await client.requestNonce({ issuerMetadata });
    // The library refuses to make a proof without the attestation the metadata requires.
    await expect(
      client.createCredentialRequestJwtProof({ issuerMetadata, signer: key.signer, nonce: c_nonce, credentialConfigurationId: 'pid' }),
    ).rejects.toThrow(/key attestations/);
    const keyAttestationJwt = await trusted.keyAttestation([key.publicJwk as Record<string, unknown>], { nonce: c_nonce });
    const { jwt } = await client.createCredentialRequestJwtProof({
      issuerMetadata,
      signer: key.signer,
      nonce: c_nonce,
      credentialConfigurationId: 'pid',
      keyAttestationJwt,
    });
    const response = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: token,
      credentialConfigurationId: 'pid',
      proofs: { jwt: [jwt] },
    });
    const credentials = response.credentialResponse.credentials as { credential: string }[];
    expect(await boundKeys(credentials)).toEqual(keyIds([key]));
  });

  it('binds a credential to each key the attestation of a jwt proof attests, once per key', async () => {
    const { token } = await accessToken('pid');
    const keys = [await holderKey(), await holderKey()];
    const c_nonce = await nonce();
    const attestation = await trusted.keyAttestation(
      keys.map((k) => k.publicJwk as Record<string, unknown>),
      { nonce: c_nonce },
    );
    // Two proofs sharing one attestation of the same two keys: two credentials, not four.
    const proofs = await Promise.all(keys.map((k) => jwtProof(k, { key_attestation: attestation }, { nonce: c_nonce })));
    const reply = await requestCredential(token, { credential_configuration_id: 'pid', proofs: { jwt: proofs } });
    expect(reply.status, reply.text).toBe(200);
    expect(await boundKeys(reply.body.credentials)).toEqual(keyIds(keys));
  });

  it('binds each key to one credential only: two jwt proofs of the same key give one', async () => {
    const { token } = await accessToken('plain');
    const key = await holderKey();
    const c_nonce = await nonce();
    const proofs = [await jwtProof(key, {}, { nonce: c_nonce }), await jwtProof(key, {}, { nonce: c_nonce, jti: randomUUID() })];
    const reply = await requestCredential(token, { credential_configuration_id: 'plain', proofs: { jwt: proofs } });
    expect(reply.status, reply.text).toBe(200);
    expect(await boundKeys(reply.body.credentials)).toEqual(keyIds([key]));
  });

  it('issues one credential per attested key for the attestation proof type, sent by the wallet library', async () => {
    const { token, offerUri } = await accessToken('pid');
    const keys = [await holderKey(), await holderKey(), await holderKey()];
    const client = walletClient(keys);
    const credentialOffer = await client.resolveCredentialOffer(offerUri);
    const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
    const { c_nonce } = await client.requestNonce({ issuerMetadata });
    const attestation = await trusted.keyAttestation(
      keys.map((k) => k.publicJwk as Record<string, unknown>),
      { nonce: c_nonce, exp: undefined, key_storage: ['iso_18045_moderate'] },
    );
    const response = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: token,
      credentialConfigurationId: 'pid',
      proofs: { attestation: [attestation] },
    });
    const credentials = response.credentialResponse.credentials as { credential: string }[];
    expect(credentials).toHaveLength(3);
    expect(await boundKeys(credentials)).toEqual(keyIds(keys));
  });

  it('verifies a key attestation that is sent where none is required', async () => {
    const key = await holderKey();
    const untrusted = await accessToken('plain');
    let c_nonce = await nonce();
    const forged = await rogue.keyAttestation([key.publicJwk as Record<string, unknown>], { nonce: c_nonce });
    const refused = await requestCredential(untrusted.token, {
      credential_configuration_id: 'plain',
      proofs: { jwt: [await jwtProof(key, { key_attestation: forged }, { nonce: c_nonce })] },
    });
    expectError(refused, 'invalid_proof', /not trusted/);

    const { token } = await accessToken('plain');
    c_nonce = await nonce();
    const attestation = await trusted.keyAttestation([key.publicJwk as Record<string, unknown>], { nonce: c_nonce });
    const accepted = await requestCredential(token, {
      credential_configuration_id: 'plain',
      proofs: { jwt: [await jwtProof(key, { key_attestation: attestation }, { nonce: c_nonce })] },
    });
    expect(accepted.status, accepted.text).toBe(200);
    // A plain jwt proof still works there.
    const plain = await accessToken('plain');
    const plainNonce = await nonce();
    const ok = await requestCredential(plain.token, {
      credential_configuration_id: 'plain',
      proofs: { jwt: [await jwtProof(key, {}, { nonce: plainNonce })] },
    });
    expect(ok.status, ok.text).toBe(200);
  });

  it('accepts any trusted attestation where key_attestations_required names no levels', async () => {
    const { token } = await accessToken('anykey');
    const key = await holderKey();
    const c_nonce = await nonce();
    const attestation = await trusted.keyAttestation([key.publicJwk as Record<string, unknown>], {
      nonce: c_nonce,
      key_storage: undefined,
      user_authentication: undefined,
    });
    const reply = await requestCredential(token, {
      credential_configuration_id: 'anykey',
      proofs: { jwt: [await jwtProof(key, { key_attestation: attestation }, { nonce: c_nonce })] },
    });
    expect(reply.status, reply.text).toBe(200);
  });
});

describe('refused key proofs (invalid_proof, or invalid_nonce for a c_nonce the issuer does not know)', () => {
  /** A jwt proof of a fresh key with a key attestation, each part adjustable; sent for `configurationId`. */
  async function sendJwtProof(
    options: {
      provider?: WalletProvider;
      claims?: Record<string, unknown>;
      header?: Record<string, unknown>;
      attestedKeys?: (key: HolderKey) => Promise<Record<string, unknown>[]>;
      attestationNonce?: (c_nonce: string) => string;
      withoutAttestation?: boolean;
      configurationId?: string;
    } = {},
  ) {
    const configurationId = options.configurationId ?? 'pid';
    const { token } = await accessToken(configurationId);
    const key = await holderKey();
    const c_nonce = await nonce();
    const attestedKeys = options.attestedKeys ? await options.attestedKeys(key) : [key.publicJwk as Record<string, unknown>];
    const attestation = await (options.provider ?? trusted).keyAttestation(
      attestedKeys,
      { nonce: options.attestationNonce ? options.attestationNonce(c_nonce) : c_nonce, ...options.claims },
      options.header,
    );
    const header = options.withoutAttestation ? {} : { key_attestation: attestation };
    return requestCredential(token, {
      credential_configuration_id: configurationId,
      proofs: { jwt: [await jwtProof(key, header, { nonce: c_nonce })] },
    });
  }

  async function sendAttestationProof(attestation: (c_nonce: string, keys: HolderKey[]) => Promise<string>, configurationId = 'pid') {
    const { token } = await accessToken(configurationId);
    const keys = [await holderKey()];
    const c_nonce = await nonce();
    return requestCredential(token, {
      credential_configuration_id: configurationId,
      proofs: { attestation: [await attestation(c_nonce, keys)] },
    });
  }
  const jwks = (keys: HolderKey[]) => keys.map((k) => k.publicJwk as Record<string, unknown>);

  it('a jwt proof without the required key attestation', async () => {
    expectError(await sendJwtProof({ withoutAttestation: true }), 'invalid_proof', /requires a key attestation/);
  });

  it('a key attestation of an untrusted wallet provider', async () => {
    expectError(await sendJwtProof({ provider: rogue }), 'invalid_proof', /not trusted/);
    expectError(
      await sendAttestationProof((c_nonce, keys) => rogue.keyAttestation(jwks(keys), { nonce: c_nonce })),
      'invalid_proof',
      /not trusted/,
    );
  });

  it('an expired key attestation, or one without exp in a jwt proof', async () => {
    const past = Math.floor(Date.now() / 1000) - 600;
    expectError(await sendJwtProof({ claims: { iat: past - 3600, exp: past } }), 'invalid_proof', /expired/);
    expectError(await sendJwtProof({ claims: { exp: undefined } }), 'invalid_proof', /must carry exp/);
  });

  it('a key attestation that does not attest the proof key', async () => {
    const other = async () => [(await holderKey()).publicJwk as Record<string, unknown>];
    expectError(await sendJwtProof({ attestedKeys: other }), 'invalid_proof', /attested_keys does not hold the proof jwk/);
  });

  it('a key attestation whose key_storage or user_authentication the configuration does not accept', async () => {
    expectError(await sendJwtProof({ claims: { key_storage: ['iso_18045_basic'] } }), 'invalid_proof', /key_storage \(iso_18045_basic\)/);
    expectError(await sendJwtProof({ claims: { key_storage: undefined } }), 'invalid_proof', /key_storage \(none\)/);
    // A wallet-chosen value is echoed only as printable ASCII without quotes (error_description's character set).
    expectError(await sendJwtProof({ claims: { key_storage: ['high"\u00e9'] } }), 'invalid_proof', /key_storage \(high\?\?\)/);
    expectError(
      await sendJwtProof({ claims: { user_authentication: ['iso_18045_moderate'] } }),
      'invalid_proof',
      /user_authentication \(iso_18045_moderate\)/,
    );
  });

  it('a key attestation of a jwt proof over another nonce than the proof', async () => {
    expectError(await sendJwtProof({ attestationNonce: () => 'another' }), 'invalid_proof', /nonce must be the c_nonce of the proof/);
  });

  it('takes the typ spelling of the drafts before 1.0 (keyattestation+jwt), which wallet libraries still write', async () => {
    const reply = await sendJwtProof({ header: { typ: 'keyattestation+jwt' } });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.credentials).toHaveLength(1);
  });

  it('a key attestation of the wrong type or signed by a key its x5c does not hold', async () => {
    expectError(await sendJwtProof({ header: { typ: 'JWT' } }), 'invalid_proof', /typ must be key-attestation\+jwt/);
    const [, caOnly] = JSON.parse(Buffer.from((await trusted.keyAttestation([])).split('.')[0] as string, 'base64url').toString()).x5c;
    expectError(await sendJwtProof({ header: { x5c: [caOnly] } }), 'invalid_proof', /signature does not verify/);
    expectError(await sendJwtProof({ header: { x5c: undefined, kid: 'wallet-provider-key' } }), 'invalid_proof', /x5c/);
  });

  it('an attestation proof with a nonce the issuer did not give, or none', async () => {
    expectError(
      await sendAttestationProof((_, keys) => trusted.keyAttestation(jwks(keys), { nonce: randomUUID() })),
      'invalid_nonce',
      /unknown, expired or already used/,
    );
    expectError(await sendAttestationProof((_, keys) => trusted.keyAttestation(jwks(keys))), 'invalid_proof', /must carry the c_nonce/);
  });

  it('an attestation proof whose key attestation is used twice', async () => {
    const { token } = await accessToken('pid');
    const c_nonce = await nonce();
    const attestation = await trusted.keyAttestation(jwks([await holderKey()]), { nonce: c_nonce });
    const first = await requestCredential(token, { credential_configuration_id: 'pid', proofs: { attestation: [attestation] } });
    expect(first.status, first.text).toBe(200);
    const again = await accessToken('pid');
    expectError(
      await requestCredential(again.token, { credential_configuration_id: 'pid', proofs: { attestation: [attestation] } }),
      'invalid_nonce',
      /already used/,
    );
  });

  it('more attested keys than the batch size, or an attestation proof where no key attestation is required', async () => {
    const four = async () => Promise.all([1, 2, 3, 4].map(async () => (await holderKey()).publicJwk as Record<string, unknown>));
    expectError(
      await sendAttestationProof(async (c_nonce) => trusted.keyAttestation(await four(), { nonce: c_nonce })),
      'invalid_proof',
      /at most 3 credentials/,
    );
    expectError(
      await sendAttestationProof((c_nonce, keys) => trusted.keyAttestation(jwks(keys), { nonce: c_nonce }), 'plain'),
      'invalid_proof',
      /only taken where the credential requires key attestations/,
    );
  });

  it('malformed attestation proofs', async () => {
    const { token } = await accessToken('pid');
    const attestation = await trusted.keyAttestation(jwks([await holderKey()]), { nonce: await nonce() });
    for (const proofs of [{ attestation: [attestation, attestation] }, { attestation }, { attestation: [attestation], jwt: [] }]) {
      expectError(await requestCredential(token, { credential_configuration_id: 'pid', proofs }), 'invalid_proof', /attestation/);
    }
    expectError(
      await requestCredential(token, { credential_configuration_id: 'pid', proofs: { attestation: ['not.a.jwt'] } }),
      'invalid_proof',
      /not a JWT/,
    );
  });
});
