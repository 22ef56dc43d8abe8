// A stand-in for an external registrar (which cannot run here), speaking the protocol that
// ../shared/spec/registrar-api.md documents: its identity provider's token endpoint in Keycloak's
// layout ({oidcUrl}/protocol/openid-connect/token, password grant, public client by client_id in the
// body or confidential by HTTP Basic), the public schema-metadata catalog, and the relying-party,
// access-certificate and registration-certificate endpoints (bearer token required where the
// registrar's OpenAPI declares it). Certificates are real: an X.509 certificate for the submitted key
// and a signed registration-certificate JWT, both from a CA of the fake's own. It records what it got.
import 'reflect-metadata';
import { randomUUID, webcrypto } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as x509 from '@peculiar/x509';
import { SignJWT } from 'jose';

export interface RegistrarFake {
  url: string;
  /** The identity provider's issuer URL (a Keycloak realm). */
  oidcUrl: string;
  account: { username: string; password: string; clientId: string; clientSecret?: string };
  /** Password grants received, in order. */
  grants: URLSearchParams[];
  /** What GET /schema-metadata answers; a number makes it fail with that status and a message. */
  catalog: unknown[] | number;
  /** Bearer tokens the identity provider issued. */
  tokens: Set<string>;
  /** Relying parties, access and registration certificates, and what those endpoints received. */
  certificates: CertificateRegistry;
  stop(): Promise<void>;
}

const REALM_PATH = '/realms/registrar';

export async function startRegistrarFake(account: RegistrarFake['account']): Promise<RegistrarFake> {
  const fake = {
    account,
    grants: [] as URLSearchParams[],
    catalog: [] as unknown[] | number,
    tokens: new Set<string>(),
    certificates: await createCertificateRegistry(),
  };
  const server: Server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => sendJson(res, status, body);
    if (req.method === 'POST' && req.url === `${REALM_PATH}/protocol/openid-connect/token`) {
      const form = new URLSearchParams(await text(req));
      fake.grants.push(form);
      const basic = req.headers.authorization?.startsWith('Basic ')
        ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString().split(':').map(decodeURIComponent)
        : undefined;
      const clientOk = account.clientSecret
        ? basic?.[0] === account.clientId && basic?.[1] === account.clientSecret
        : form.get('client_id') === account.clientId;
      if (!clientOk) return send(401, { error: 'invalid_client', error_description: 'Invalid client or Invalid client credentials' });
      if (form.get('grant_type') !== 'password') return send(400, { error: 'unsupported_grant_type' });
      if (form.get('username') !== account.username || form.get('password') !== account.password) {
        return send(401, { error: 'invalid_grant', error_description: 'Invalid user credentials' });
      }
      const token = `registrar-token-${fake.grants.length}`;
      fake.tokens.add(token);
      return send(200, { access_token: token, expires_in: 300, token_type: 'Bearer' });
    }
    if (req.method === 'GET' && req.url === '/schema-metadata') {
      if (typeof fake.catalog === 'number') return send(fake.catalog, { statusCode: fake.catalog, message: 'catalog unavailable' });
      return send(200, fake.catalog);
    }
    if (await handleCertificates(req, res, fake.certificates, fake.tokens)) return;
    send(404, { statusCode: 404, message: `Cannot ${req.method} ${req.url}` });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(fake, {
    url,
    oidcUrl: `${url}${REALM_PATH}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function text(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

// ---- Relying parties, access certificates, registration certificates ----

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

export interface ReceivedCall {
  method: string;
  path: string;
  authorization?: string;
  body?: unknown;
}

export interface CertificateRegistry {
  /** The fake registrar's CA: it signs access certificates and registration-certificate JWTs. */
  ca: { certificate: x509.X509Certificate; keys: CryptoKeyPair };
  relyingParties: { id: string; name: string; NTR: string; createdAt: string }[];
  accessCertificates: { id: string; relyingPartyId: string; certificate: string; revoked: string | null; createdAt: string }[];
  registrationCertificates: { id: string; jwt: string; relyingPartyId: string; revoked: string | null; createdAt: string }[];
  /** Every call of these endpoints, in order. */
  received: ReceivedCall[];
  /** 'METHOD /path' -> a status to fail with (and `failureMessage` as the NestJS-style message). */
  failures: Map<string, number>;
  failureMessage: string;
  /** Set: access certificates are issued for this key instead of the submitted one (a misbehaving registrar). */
  certifyOtherKey?: CryptoKey;
  /** Seconds a registration certificate is valid. */
  registrationValiditySeconds: number;
}

export async function createCertificateRegistry(): Promise<CertificateRegistry> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=Fake Registrar CA, O=Registrar, C=DE',
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 365 * DAY),
    keys,
    signingAlgorithm: SIGNING,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
  return {
    ca: { certificate, keys },
    relyingParties: [],
    accessCertificates: [],
    registrationCertificates: [],
    received: [],
    failures: new Map(),
    failureMessage: 'registrar failure',
    registrationValiditySeconds: 3600,
  };
}

type Handler = (body: Record<string, unknown>, url: URL, registry: CertificateRegistry) => Promise<[number, unknown]>;

/** method, path, whether the registrar's OpenAPI declares bearer security, handler. */
const ROUTES: [string, string, boolean, Handler][] = [
  ['GET', '/relying-parties', true, async (_b, _u, r) => [200, r.relyingParties]],
  ['POST', '/relying-parties', true, createRelyingParty],
  ['POST', '/access-certificates', true, createAccessCertificate],
  ['GET', '/registration-certificates', false, listRegistrationCertificates],
  ['POST', '/registration-certificates', true, createRegistrationCertificate],
];

/** Answers the certificate endpoints; false for any other path. */
async function handleCertificates(req: IncomingMessage, res: ServerResponse, registry: CertificateRegistry, tokens: Set<string>) {
  const url = new URL(req.url ?? '/', 'http://registrar');
  const route = ROUTES.find(([method, path]) => method === req.method && path === url.pathname);
  if (!route) return false;
  const [method, path, bearer, handler] = route;
  const raw = await text(req);
  const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
  registry.received.push({ method, path: `${url.pathname}${url.search}`, authorization: req.headers.authorization, ...(raw && { body }) });
  const token = req.headers.authorization?.startsWith('Bearer ') ? req.headers.authorization.slice(7) : undefined;
  if (bearer && (!token || !tokens.has(token))) {
    sendJson(res, 401, { statusCode: 401, message: 'Unauthorized' });
    return true;
  }
  const failure = registry.failures.get(`${method} ${path}`);
  if (failure) {
    sendJson(res, failure, { statusCode: failure, message: registry.failureMessage, error: 'Failure' });
    return true;
  }
  const [status, answer] = await handler(body, url, registry);
  sendJson(res, status, answer);
  return true;
}

const badRequest = (...message: string[]): [number, unknown] => [400, { statusCode: 400, message, error: 'Bad Request' }];

async function createRelyingParty(_body: Record<string, unknown>, _url: URL, registry: CertificateRegistry): Promise<[number, unknown]> {
  const party = { id: randomUUID(), name: 'Fake Relying Party', NTR: 'HRB 1234', createdAt: new Date().toISOString() };
  registry.relyingParties.push(party);
  return [201, party];
}

async function createAccessCertificate(
  body: Record<string, unknown>,
  _url: URL,
  registry: CertificateRegistry,
): Promise<[number, unknown]> {
  const { publicKey, dns, rpId } = body;
  if (typeof publicKey !== 'string' || !publicKey.startsWith('-----BEGIN PUBLIC KEY-----'))
    return badRequest('publicKey must be a PEM public key');
  if (typeof rpId !== 'string' || !registry.relyingParties.some((p) => p.id === rpId)) return badRequest('rpId must name a relying party');
  if (dns !== undefined && !(Array.isArray(dns) && dns.every((d) => typeof d === 'string'))) return badRequest('dns must be strings');
  const der = Buffer.from(publicKey.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const subjectKey = registry.certifyOtherKey ?? (await webcrypto.subtle.importKey('spki', der, EC, true, ['verify']));
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: `01${randomUUID().replaceAll('-', '')}`,
    subject: 'CN=Fake Relying Party, O=Fake Relying Party, C=DE',
    issuer: registry.ca.certificate.subject,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 365 * DAY),
    publicKey: subjectKey,
    signingKey: registry.ca.keys.privateKey,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.SubjectAlternativeNameExtension(((dns as string[] | undefined) ?? []).map((value) => ({ type: 'dns' as const, value }))),
      await x509.AuthorityKeyIdentifierExtension.create(registry.ca.keys.publicKey),
    ],
  });
  const entry = {
    id: randomUUID(),
    relyingPartyId: rpId,
    certificate: certificate.toString('pem'),
    revoked: null,
    createdAt: new Date().toISOString(),
  };
  registry.accessCertificates.push(entry);
  return [201, { id: entry.id, crt: entry.certificate }];
}

async function listRegistrationCertificates(
  _body: Record<string, unknown>,
  url: URL,
  registry: CertificateRegistry,
): Promise<[number, unknown]> {
  const rp = url.searchParams.get('rp');
  if (!rp) return badRequest('rp is required');
  return [200, registry.registrationCertificates.filter((c) => c.relyingPartyId === rp)];
}

async function createRegistrationCertificate(
  body: Record<string, unknown>,
  _url: URL,
  registry: CertificateRegistry,
): Promise<[number, unknown]> {
  const { privacy_policy, support_uri, rpId, purpose, credentials } = body;
  const missing = [
    ...(typeof privacy_policy === 'string' ? [] : ['privacy_policy must be a URL string']),
    ...(typeof support_uri === 'string' ? [] : ['support_uri must be a string']),
    ...(typeof rpId === 'string' && registry.relyingParties.some((p) => p.id === rpId) ? [] : ['rpId must name a relying party']),
  ];
  if (missing.length) return badRequest(...missing);
  const now = Math.floor(Date.now() / 1000);
  const jwt = await new SignJWT({ sub: rpId as string, privacy_policy, support_uri, purpose, credentials })
    .setProtectedHeader({ alg: 'ES256', typ: 'rc-rp+jwt', x5c: [Buffer.from(registry.ca.certificate.rawData).toString('base64')] })
    .setIssuedAt(now)
    .setExpirationTime(now + registry.registrationValiditySeconds)
    .sign(registry.ca.keys.privateKey);
  const entry = { id: randomUUID(), jwt, relyingPartyId: rpId as string, revoked: null, createdAt: new Date().toISOString() };
  registry.registrationCertificates.push(entry);
  const { revoked: _revoked, ...created } = entry;
  return [201, { ...created, cwt: '', intendedUse: { purpose }, credentialToRegistrationCertificates: [] }];
}
