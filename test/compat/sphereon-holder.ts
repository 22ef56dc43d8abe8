// A second, independent holder implementation: Sphereon's @sphereon/oid4vci-client (issuance) and
// @sphereon/did-auth-siop (presentation), both 0.20.1, the versions wallets in the field still ship.
// The libraries do the protocol: discovery, token and credential requests, DPoP, request object
// fetching and verification, DCQL matching and the (JARM) response. They leave to the wallet what a
// wallet owns, so this file supplies it: keys and signatures (jose), the trust decision on the
// verifier's certificate, and the response encryption. The credential presentations themselves (KB-JWT,
// mdoc DeviceResponse) come from the suite's credential helpers, as Sphereon's wallets take them from
// their own credential layer.
import { createHash, X509Certificate } from 'node:crypto';
import { OP, SupportedVersion, type VerifiedAuthorizationRequest } from '@sphereon/did-auth-siop';
import { OpenID4VCIClientV1_0_15 } from '@sphereon/oid4vci-client';
import { CompactEncrypt, exportJWK, generateKeyPair, importJWK, importX509, type JWK, jwtVerify, SignJWT } from 'jose';
import type { ResolvedRequest } from '../support/presenter.js';

interface UnsignedJwt {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
}

export interface SphereonIssuance {
  credentials: string[];
  /** The holder's private key (the credential is bound to its public part). */
  holder: JWK;
  /** Bearer, or DPoP when the token is bound to a DPoP key. */
  tokenType?: string;
}

/**
 * The pre-authorized flow as Sphereon's client runs it: offer by reference, discovery (the client
 * looks under the issuer identifier: `{issuer}/.well-known/...`), token request with the transaction
 * code (sent as both tx_code and user_pin), optional DPoP, nonce endpoint, credential request with
 * one `proof`.
 */
export async function sphereonReceive(
  offerUri: string,
  options: { txCode?: string; dpop?: boolean; configurationId?: string } = {},
): Promise<SphereonIssuance> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(publicKey);
  const sign = ({ header, payload }: UnsignedJwt) => new SignJWT(payload).setProtectedHeader(header as { alg: string }).sign(privateKey);
  // The client writes the server's DPoP nonce into these options, so each request gets its own.
  const dpop = () =>
    options.dpop
      ? {
          createDPoPOpts: {
            createJwtCallback: (_issuer: unknown, jwt: UnsignedJwt) => sign(jwt),
            jwtIssuer: { alg: 'ES256', jwk },
            jwtPayloadProps: {},
            dPoPSigningAlgValuesSupported: ['ES256'],
          } as never,
        }
      : {};
  const client = await OpenID4VCIClientV1_0_15.fromURI({ uri: offerUri, retrieveServerMetadata: true });
  const token = await client.acquireAccessToken({ ...(options.txCode && { pin: options.txCode }), ...dpop() });
  const configurationId = options.configurationId ?? (client.credentialOffer?.credential_offer.credential_configuration_ids[0] as string);
  const response = await client.acquireCredentials({
    credentialConfigurationId: configurationId,
    format: client.endpointMetadata.credentialIssuerMetadata?.credential_configurations_supported[configurationId]?.format as never,
    jwk: jwk as never,
    alg: 'ES256',
    proofCallbacks: { signCallback: (jwt) => sign(jwt as unknown as UnsignedJwt) },
    ...dpop(),
  });
  const credentials = ((response as { credentials?: { credential: string }[] }).credentials ?? []).map((c) => c.credential);
  return { credentials, holder: await exportJWK(privateKey), tokenType: token.token_type };
}

/**
 * The wallet's trust decision that did-auth-siop delegates: the request object verifies with the
 * leaf of its x5c, and that certificate is the one the client id names (x509_hash: its SHA-256;
 * x509_san_dns: a DNS name in its subjectAltName).
 */
async function verifyRequestObject(issuer: { method: string; x5c?: string[] }, jwt: { header: { alg: string }; raw: string }) {
  const [leaf] = issuer.x5c ?? [];
  if (issuer.method !== 'x5c' || !leaf) throw new Error('the request object must be signed with an x5c certificate');
  const clientId = (JSON.parse(Buffer.from(jwt.raw.split('.')[1] as string, 'base64url').toString()) as { client_id: string }).client_id;
  const certificate = new X509Certificate(Buffer.from(leaf, 'base64'));
  const [prefix, value] = [clientId.slice(0, clientId.indexOf(':')), clientId.slice(clientId.indexOf(':') + 1)];
  const named =
    prefix === 'x509_hash'
      ? createHash('sha256').update(certificate.raw).digest('base64url') === value
      : prefix === 'x509_san_dns' && (certificate.subjectAltName ?? '').split(', ').includes(`DNS:${value}`);
  if (!named) throw new Error(`the certificate is not the one ${clientId} names`);
  await jwtVerify(jwt.raw, await importX509(certificate.toString(), jwt.header.alg));
  return true;
}

export function sphereonOp() {
  return OP.builder()
    .withIssuer('https://wallet.example')
    .withHasher((data, alg) =>
      createHash(alg.replace('-', '').toLowerCase())
        .update(data as never)
        .digest(),
    )
    .withCreateJwtCallback(async () => {
      throw new Error('SIOP id_tokens are not part of these flows');
    })
    .withVerifyJwtCallback((issuer, jwt) => verifyRequestObject(issuer as never, jwt as never))
    .withSupportedVersions([SupportedVersion.OID4VP_v1])
    .build();
}

export interface SphereonRequest {
  op: OP;
  verified: VerifiedAuthorizationRequest;
  /** The verified request object, in the shape the suite's credential helpers read. */
  request: ResolvedRequest;
}

/** Fetches (GET; did-auth-siop has no request_uri_method=post) and verifies the request object. */
export async function sphereonResolve(uri: string): Promise<SphereonRequest> {
  const op = sphereonOp();
  const verified = await op.verifyAuthorizationRequest(uri, {} as never);
  const payload = verified.payload as Record<string, any>;
  const request: ResolvedRequest = {
    clientId: payload.client_id,
    nonce: payload.nonce,
    responseUri: payload.response_uri,
    responseMode: payload.response_mode,
    dcqlQuery: payload.dcql_query,
    transactionData: payload.transaction_data ?? [],
    payload,
  };
  return { op, verified, request };
}

/** ECDH-ES to the verifier's key from client_metadata, as the JARM callback of did-auth-siop asks. */
export async function encryptResponse(payload: Record<string, unknown>, clientMetadata: Record<string, any>) {
  const key = clientMetadata.jwks.keys[0] as JWK;
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: 'ECDH-ES', enc: clientMetadata.encrypted_response_enc_values_supported?.[0] ?? 'A128GCM', kid: key.kid })
    .encrypt(await importJWK(key, 'ECDH-ES'));
}

/** The authorization response did-auth-siop builds (with its DCQL check), not yet sent. */
export async function sphereonResponse({ op, verified }: SphereonRequest, vpToken: Record<string, string[]>) {
  return op.createAuthorizationResponse(verified, { dcqlResponse: { dcqlPresentation: vpToken } } as never);
}

/**
 * Builds and sends the response as did-auth-siop does: direct_post as a form (the library throws on
 * an error status), direct_post.jwt as `response` with `state` beside it (answered as it comes).
 */
export async function sphereonPresent(resolved: SphereonRequest, vpToken: Record<string, string[]>) {
  const response = await sphereonResponse(resolved, vpToken);
  const sent = await resolved.op.submitAuthorizationResponse(response, async ({ authorizationResponsePayload, clientMetadata }) => ({
    response: await encryptResponse(authorizationResponsePayload as never, clientMetadata as never),
  }));
  const text = await sent.text();
  return { status: sent.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
}
