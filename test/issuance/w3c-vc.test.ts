// jwt_vc_json issuance (W3C VCDM 2.0 secured with JOSE): the issuer metadata entry (OpenID4VCI 1.0
// appendix A.1.1), the credential through the pre-authorized and authorization code flows, checked
// with jose against the tenant's certificate chain or its DID document, and the holder's did:jwk or
// did:key decoded by hand.
import 'reflect-metadata';
import { ECDH, X509Certificate } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, importJWK, importX509, type JWK, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BodyOf } from '../support/api-types.js';
import { problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';
import { authorizeFromOffer, type HolderKey, holderKey, receiveCredentials, walletClient } from '../support/wallet.js';

let svc: TestService;
let acme: string;

const TYPE = 'https://example.com/credentials/Diploma';
const diploma = (id: string, vcIssuer?: 'did:web') =>
  ({
    id,
    vct: TYPE,
    config: { format: 'jwt_vc_json', display: [{ name: 'Diploma', locale: 'en' }], ...(vcIssuer && { vcIssuer }) },
    fields: [
      { path: ['given_name'], type: 'string', mandatory: true },
      { path: ['degree'], type: 'object', children: [{ path: ['name'], type: 'string' }] },
    ],
    lifeTime: 3600,
  }) satisfies BodyOf<'/api/issuer/credentials', 'POST'>;
const CLAIMS = { given_name: 'Erika', degree: { name: 'Bachelor of Science' } };

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  for (const body of [diploma('diploma'), diploma('diploma-did', 'did:web')]) {
    const created = await svc.call('POST', '/api/issuer/credentials', { token: acme, body });
    expect(created.status, created.text).toBe(201);
  }
});
afterAll(() => svc.stop());

const rootCertificate = async (): Promise<string> =>
  (await svc.raw('GET', '/api/key-chain/default-attestation', { token: acme })).body.rootCertificate;
const issuerUrl = () => `${svc.url}/issuers/acme`;
const didWeb = () => `did:web:${encodeURIComponent(new URL(svc.url).host)}:issuers:acme`;

async function offer(id: string, flow: 'pre_authorized_code' | 'authorization_code' = 'pre_authorized_code') {
  const reply = await svc.call('POST', '/api/issuer/offer', {
    token: acme,
    body: { response_type: 'uri', flow, credentialConfigurationIds: [id], credentialClaims: { [id]: { type: 'inline', claims: CLAIMS } } },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body.uri as string;
}

/** The credential, verified with jose against the leaf certificate of its x5c, which must chain to the tenant's root. */
async function verifiedWithX5c(credential: string) {
  const header = decodeProtectedHeader(credential);
  expect(header).toMatchObject({ alg: 'ES256', typ: 'vc+jwt' });
  const [leaf] = header.x5c as string[];
  const root = await rootCertificate();
  const leafCertificate = new X509Certificate(Buffer.from(leaf as string, 'base64'));
  expect(leafCertificate.verify(new X509Certificate(root).publicKey)).toBe(true);
  const pem = `-----BEGIN CERTIFICATE-----\n${leaf}\n-----END CERTIFICATE-----`;
  return (await jwtVerify(credential, await importX509(pem, 'ES256'), { typ: 'vc+jwt' })).payload;
}

/** The key a did:jwk names, decoded by hand. */
const didJwkKey = (did: string) => JSON.parse(Buffer.from(did.slice('did:jwk:'.length), 'base64url').toString()) as JWK;

describe('jwt_vc_json issuer metadata', () => {
  it('lists the configuration with credential_definition.type, did binding methods and claim paths in credentialSubject', async () => {
    const metadata = (await svc.raw('GET', '/.well-known/openid-credential-issuer/issuers/acme')).body;
    expect(metadata.credential_configurations_supported.diploma).toMatchObject({
      format: 'jwt_vc_json',
      credential_definition: { type: ['VerifiableCredential', TYPE] },
      cryptographic_binding_methods_supported: ['did:jwk', 'did:key', 'jwk'],
      credential_signing_alg_values_supported: ['ES256'],
      credential_metadata: {
        claims: [
          { path: ['credentialSubject', 'given_name'], mandatory: true },
          { path: ['credentialSubject', 'degree'] },
          { path: ['credentialSubject', 'degree', 'name'] },
        ],
      },
    });
    expect(metadata.credential_configurations_supported.diploma.vct).toBeUndefined();
  });
});

describe('jwt_vc_json issuance', () => {
  it('pre-authorized: a VCDM 2.0 credential signed under x5c, the holder its did:jwk', async () => {
    const key = await holderKey();
    const { response } = await receiveCredentials(await offer('diploma'), { keys: [key] });
    const [issued] = response.credentialResponse.credentials as { credential: string }[];
    const payload = await verifiedWithX5c(issued?.credential as string);
    const subject = (payload.credentialSubject as { id: string }).id;
    expect(subject).toMatch(/^did:jwk:/);
    expect(didJwkKey(subject)).toEqual({ kty: 'EC', crv: 'P-256', x: key.publicJwk.x, y: key.publicJwk.y });
    expect(payload).toMatchObject({
      '@context': ['https://www.w3.org/ns/credentials/v2'],
      type: ['VerifiableCredential', TYPE],
      issuer: issuerUrl(),
      iss: issuerUrl(),
      sub: subject,
      credentialSubject: { id: subject, ...CLAIMS },
    });
    expect(Date.parse(payload.validUntil as string) - Date.parse(payload.validFrom as string)).toBe(3600_000);
    expect(payload.exp).toBe((payload.iat as number) + 3600);
  });

  it('authorization code: the same credential, through PAR and the token endpoint', async () => {
    const key = await holderKey();
    const { client, issuerMetadata, token } = await authorizeFromOffer(await offer('diploma', 'authorization_code'), {
      keys: [key],
      scope: 'diploma',
    });
    const { c_nonce } = await client.requestNonce({ issuerMetadata });
    const proof = await client.createCredentialRequestJwtProof({
      issuerMetadata,
      signer: key.signer,
      nonce: c_nonce,
      credentialConfigurationId: 'diploma',
    });
    const response = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: token.accessTokenResponse.access_token,
      credentialConfigurationId: 'diploma',
      proofs: { jwt: [proof.jwt] },
      ...(token.dpop && { dpop: token.dpop }),
    });
    const [issued] = response.credentialResponse.credentials as { credential: string }[];
    const payload = await verifiedWithX5c(issued?.credential as string);
    expect(didJwkKey((payload.credentialSubject as { id: string }).id)).toMatchObject({ x: key.publicJwk.x, y: key.publicJwk.y });
  });

  it('a batch: one credential per proof key, each bound to its own did:jwk', async () => {
    const keys = [await holderKey(), await holderKey()];
    const { response } = await receiveCredentials(await offer('diploma'), { keys });
    const subjects = (response.credentialResponse.credentials as { credential: string }[]).map(
      ({ credential }) => (decodeJwt(credential).credentialSubject as { id: string }).id,
    );
    expect(subjects.map((did) => didJwkKey(did).x)).toEqual(keys.map((key) => key.publicJwk.x));
  });

  it('a proof whose kid is a did:key: the credential names that did:key', async () => {
    const key = await holderKey();
    const did = didKeyOf(key.publicJwk);
    expect(decodeDidKeyByHand(did)).toEqual({ x: key.publicJwk.x, y: key.publicJwk.y });
    const credential = await issueWithKidProof(await offer('diploma'), key, `${did}#${did.slice('did:key:'.length)}`);
    expect((await verifiedWithX5c(credential)).sub).toBe(did);
  });

  it('did:web issuer: kid names a key of the DID document the tenant serves, whose x5c chains to its root', async () => {
    const { response } = await receiveCredentials(await offer('diploma-did'));
    const [issued] = response.credentialResponse.credentials as { credential: string }[];
    const credential = issued?.credential as string;
    const header = decodeProtectedHeader(credential);
    expect(header.x5c).toBeUndefined();
    expect(header.kid?.startsWith(`${didWeb()}#`)).toBe(true);
    const document = await svc.raw('GET', '/issuers/acme/did.json');
    expect(document.status).toBe(200);
    expect(document.headers.get('content-type')).toMatch(/^application\/did\+json/);
    const body = JSON.parse(document.text);
    expect(body.id).toBe(didWeb());
    expect(body.assertionMethod).toContain(header.kid);
    const method = body.verificationMethod.find((m: { id: string }) => m.id === header.kid);
    expect(method).toMatchObject({ type: 'JsonWebKey', controller: didWeb() });
    const { payload } = await jwtVerify(credential, await importJWK(method.publicKeyJwk, 'ES256'), { typ: 'vc+jwt' });
    expect(payload).toMatchObject({ issuer: didWeb(), iss: didWeb() });
    const root = await rootCertificate();
    const leaf = new X509Certificate(Buffer.from(method.publicKeyJwk.x5c[0], 'base64'));
    expect(leaf.verify(new X509Certificate(root).publicKey)).toBe(true);
    expect((await svc.raw('GET', '/issuers/nobody/did.json')).status).toBe(404);
  });
});

describe('jwt_vc_json configurations', () => {
  const create = (body: Record<string, unknown>) => svc.raw('POST', '/api/issuer/credentials', { token: acme, body });
  it('refuses a type metadata document, status management, docType, and credentialSubject.id as a field', async () => {
    const refused = await create({
      ...diploma('bad'),
      vct: { name: 'Diploma' },
      statusManagement: true,
      config: { format: 'jwt_vc_json', docType: 'x' },
      fields: [{ path: ['id'], type: 'string' }],
    });
    expect(refused.status).toBe(400);
    expect((problemOf(refused).errors ?? []).map((e) => e.field).sort()).toEqual(
      ['body.config.docType', 'body.fields.0.path', 'body.statusManagement', 'body.vct'].sort(),
    );
  });
  it('refuses vcIssuer on another format', async () => {
    const refused = await create({ id: 'sd', vct: 'urn:x', config: { format: 'dc+sd-jwt', vcIssuer: 'did:web' }, fields: [] });
    expect(refused.status).toBe(400);
    expect(problemOf(refused).errors).toEqual([expect.objectContaining({ field: 'body.config.vcIssuer' })]);
  });
});

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** did:key of a P-256 key, by hand: multicodec p256-pub (0x1200, varint 0x80 0x24), the compressed point, base58btc ('z'). */
function didKeyOf(jwk: JWK): string {
  const point = Buffer.concat([Buffer.of(0x04), Buffer.from(jwk.x as string, 'base64url'), Buffer.from(jwk.y as string, 'base64url')]);
  const bytes = Buffer.concat([Buffer.of(0x80, 0x24), ECDH.convertKey(point, 'prime256v1', undefined, undefined, 'compressed') as Buffer]);
  let value = BigInt(`0x${bytes.toString('hex')}`);
  let text = '';
  for (; value > 0n; value /= 58n) text = BASE58[Number(value % 58n)] + text;
  return `did:key:z${text}`;
}

/** The key of a did:key, by hand: base58btc, the multicodec prefix, the point decompressed by node:crypto. */
function decodeDidKeyByHand(did: string) {
  let value = 0n;
  for (const char of did.slice('did:key:z'.length)) value = value * 58n + BigInt(BASE58.indexOf(char));
  const bytes = Buffer.from(value.toString(16).padStart(70, '0'), 'hex');
  expect([...bytes.subarray(0, 2)]).toEqual([0x80, 0x24]);
  const point = ECDH.convertKey(bytes.subarray(2), 'prime256v1', undefined, undefined, 'uncompressed') as Buffer;
  return { x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') };
}

/** The pre-authorized flow with a jwt proof whose header names the key by kid alone (OpenID4VCI 1.0 F.1). */
async function issueWithKidProof(offerUri: string, key: HolderKey, kid: string): Promise<string> {
  const client = walletClient([key]);
  const credentialOffer = await client.resolveCredentialOffer(offerUri);
  const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
  const token = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({ credentialOffer, issuerMetadata });
  const { c_nonce } = await client.requestNonce({ issuerMetadata });
  const proof = await new SignJWT({ aud: issuerUrl(), iat: Math.floor(Date.now() / 1000), nonce: c_nonce })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', kid })
    .sign(await importJWK(key.privateJwk, 'ES256'));
  const reply = await svc.raw('POST', '/issuers/acme/credential', {
    headers: { authorization: `Bearer ${token.accessTokenResponse.access_token}` },
    body: { credential_configuration_id: 'diploma', proofs: { jwt: [proof] } },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.credentials[0].credential;
}
