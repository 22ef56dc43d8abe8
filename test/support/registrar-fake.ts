// A stand-in for an external registrar (which cannot run here), speaking the protocol that
// ../shared/spec/registrar-api.md documents: its identity provider's token endpoint in Keycloak's
// layout ({oidcUrl}/protocol/openid-connect/token, password grant, public client by client_id in the
// body or confidential by HTTP Basic), the public schema-metadata catalog, and the relying-party,
// access-certificate and registration-certificate endpoints (bearer token required where the
// registrar's OpenAPI declares it). Certificates are real: an X.509 certificate for the submitted key
// and a signed registration-certificate JWT, both from a CA of the fake's own. It records what it got.
import 'reflect-metadata';
import { randomUUID, webcrypto, X509Certificate } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as x509 from '@peculiar/x509';
import { decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';

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
  /** The schema metadata catalog: reservations, records, and the JWTs submitted. */
  schemaMetadata: SchemaCatalog;
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
    schemaMetadata: createSchemaCatalog(),
  };
  let baseUrl = '';
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
    const accountOf = (authorization?: string) =>
      authorization?.startsWith('Bearer ') && fake.tokens.has(authorization.slice(7)) ? account.username : undefined;
    if (await handleSchemaMetadata(req, res, { catalog: fake.schemaMetadata, accountOf, listed: fake.catalog, baseUrl })) return;
    if (await handleCertificates(req, res, fake.certificates, fake.tokens)) return;
    send(404, { statusCode: 404, message: `Cannot ${req.method} ${req.url}` });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  baseUrl = url;
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

x509.cryptoProvider.set(crypto); // the global Web Crypto (node:crypto webcrypto)

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

// ---- Schema metadata catalog (TS11) ----

const SCHEMA_JWT_TYPE = 'attestation-schema+jwt';
const RESERVATION_MS = 24 * 3600_000;

export interface CatalogRecord extends Record<string, unknown> {
  id: string;
  version: string;
  deprecated: boolean;
}

export interface SchemaCatalog {
  /** Reserved short ids: the account that reserved each, and until when. */
  reservations: Map<string, { account: string; expiresAt: number }>;
  /** Who owns an id once its first version is in: the reserving account, and the key that signed it (SPKI, base64). */
  owners: Map<string, { account: string; key: string }>;
  records: CatalogRecord[];
  /** Every JWT POST /schema-metadata received, accepted or not. */
  submitted: string[];
  /** Every nameHint a reservation received. */
  nameHints: (string | undefined)[];
  vocabularies: { version: string; categories: unknown[]; tags: unknown[] };
}

const vocabulary = (codes: readonly string[]) =>
  codes.map((code) => ({ code, label: code[0]?.toUpperCase() + code.slice(1), status: 'active' }));

export function createSchemaCatalog(): SchemaCatalog {
  return {
    reservations: new Map(),
    owners: new Map(),
    records: [],
    submitted: [],
    nameHints: [],
    vocabularies: {
      version: '2026-05-07',
      categories: vocabulary(['identity', 'health', 'finance', 'education', 'mobility', 'employment', 'other']),
      tags: vocabulary(['pid', 'eudi', 'kyc', 'aml', 'age-verification', 'residency', 'membership', 'education', 'employment', 'mobility']),
    },
  };
}

interface CatalogContext {
  catalog: SchemaCatalog;
  /** The account a bearer token stands for; undefined when the token is unknown. */
  accountOf: (authorization: string | undefined) => string | undefined;
  /** GET /schema-metadata also lists these entries (RegistrarFake.catalog), or fails with that status. */
  listed: unknown[] | number;
  baseUrl: string;
}

type CatalogAnswer = [number, unknown] | [number, string, 'text'];
const problem = (status: number, message: string): CatalogAnswer => [status, { statusCode: status, message, error: String(status) }];

/** Answers the schema-metadata endpoints; false for any other path. */
async function handleSchemaMetadata(req: IncomingMessage, res: ServerResponse, context: CatalogContext): Promise<boolean> {
  const url = new URL(req.url ?? '/', 'http://registrar');
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== 'schema-metadata') return false;
  const raw = await text(req);
  let body: Record<string, unknown> = {};
  try {
    body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
  } catch {
    sendJson(res, 400, { statusCode: 400, message: 'body is not JSON' });
    return true;
  }
  const answer = await routeSchemaMetadata(req.method ?? 'GET', parts.slice(1), url, body, req.headers.authorization, context);
  if (answer[2] === 'text') {
    res.writeHead(answer[0], { 'content-type': 'application/jwt' });
    res.end(answer[1]);
  } else sendJson(res, answer[0], answer[1]);
  return true;
}

async function routeSchemaMetadata(
  method: string,
  rest: string[],
  url: URL,
  body: Record<string, unknown>,
  authorization: string | undefined,
  context: CatalogContext,
): Promise<CatalogAnswer> {
  const { catalog } = context;
  const [id, versions, version, leaf, format] = rest;
  if (method === 'GET' && rest.length === 0) return listCatalog(url, context);
  if (method === 'GET' && id === 'vocabularies' && rest.length === 1) return [200, catalog.vocabularies];
  if (method === 'POST' && id === 'reserve' && rest.length === 1) return reserveId(body, authorization, context);
  if (method === 'POST' && rest.length === 0) return submitSchemaMetadata(body, context);
  if (!id) return problem(404, 'not found');
  const all = versionsOf(catalog, id);
  if (method === 'GET' && rest.length === 1) return all[0] ? [200, all[0]] : problem(404, `no schema metadata ${id}`);
  if (versions !== 'versions') return problem(404, 'not found');
  if (method === 'GET' && rest.length === 2) return all.length ? [200, all] : problem(404, `no schema metadata ${id}`);
  const record = all.find((r) => r.version === version);
  if (!record) return problem(404, `no version ${version} of ${id}`);
  if (method === 'GET' && leaf === 'jwt' && rest.length === 4) return [200, record.signedJwt as string, 'text'];
  if (method === 'GET' && leaf === 'schemas' && format && rest.length === 5) {
    const entry = (record.schemaURIs as { formatIdentifier: string; schemaContent?: unknown }[]).find((s) => s.formatIdentifier === format);
    return entry?.schemaContent ? [200, entry.schemaContent] : problem(404, `no ${format} schema`);
  }
  if (method !== 'PATCH' || !(rest.length === 3 || (leaf === 'deprecation' && rest.length === 4))) return problem(404, 'not found');
  const account = context.accountOf(authorization);
  if (!account) return problem(401, 'Unauthorized');
  if (catalog.owners.get(id)?.account !== account) return problem(403, 'only the uploader may change this schema metadata');
  return leaf === 'deprecation' ? deprecate(record, body) : classify(record, body);
}

function listCatalog(url: URL, { catalog, listed }: CatalogContext): CatalogAnswer {
  if (typeof listed === 'number') return problem(listed, 'catalog unavailable');
  const id = url.searchParams.get('id');
  const version = url.searchParams.get('version');
  const records = catalog.records.filter((r) => (!id || r.id === id) && (!version || r.version === version));
  return [200, [...(id || version ? [] : listed), ...records]];
}

function reserveId(body: Record<string, unknown>, authorization: string | undefined, { catalog, accountOf, baseUrl }: CatalogContext) {
  const account = accountOf(authorization);
  if (!account) return problem(401, 'Unauthorized');
  const { nameHint } = body;
  if (nameHint !== undefined && (typeof nameHint !== 'string' || nameHint.length > 100))
    return problem(400, 'nameHint must be a string of at most 100');
  catalog.nameHints.push(nameHint as string | undefined);
  const id = randomUUID();
  const expiresAt = Date.now() + RESERVATION_MS;
  catalog.reservations.set(id, { account, expiresAt });
  return [201, { reservedId: `${baseUrl}/schema-metadata/${id}`, expiresAt: new Date(expiresAt).toISOString() }] as CatalogAnswer;
}

/** Authenticated by the JWT's signature: typ, x5c leaf signature, a live reservation, the owner's key, a new version. */
async function submitSchemaMetadata(body: Record<string, unknown>, { catalog }: CatalogContext): Promise<CatalogAnswer> {
  const { jwt } = body;
  if (typeof jwt !== 'string') return problem(400, 'jwt is required');
  catalog.submitted.push(jwt);
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(jwt);
  } catch {
    return problem(400, 'jwt is not a JWS');
  }
  if (header.typ !== SCHEMA_JWT_TYPE) return problem(400, `typ must be ${SCHEMA_JWT_TYPE}`);
  const [leafDer] = header.x5c ?? [];
  if (!leafDer) return problem(400, 'x5c is required');
  const leaf = new X509Certificate(Buffer.from(leafDer, 'base64'));
  let payload: Record<string, unknown>;
  try {
    payload = (await jwtVerify(jwt, leaf.publicKey, { typ: SCHEMA_JWT_TYPE })).payload;
  } catch {
    return problem(401, 'signature does not verify with the access certificate');
  }
  const { id: reservedUrl, version, attestationLoS, bindingType, schemaURIs, trustedAuthorities } = payload;
  if (typeof reservedUrl !== 'string' || typeof version !== 'string' || !Array.isArray(schemaURIs) || !attestationLoS || !bindingType) {
    return problem(400, 'id, version, attestationLoS, bindingType and schemaURIs are required');
  }
  const id = reservedUrl.split('/').at(-1) as string;
  const reservation = catalog.reservations.get(id);
  if (!reservation || reservation.expiresAt < Date.now()) return problem(400, `${reservedUrl} is not a reserved id`);
  const key = leaf.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  const owner = catalog.owners.get(id);
  if (owner && owner.key !== key) return problem(403, 'schema id owned by another relying party');
  if (catalog.records.some((r) => r.id === id && r.version === version)) return problem(409, `${id} ${version} already exists`);
  catalog.owners.set(id, owner ?? { account: reservation.account, key });
  const now = new Date().toISOString();
  const record: CatalogRecord = {
    ...payload,
    id,
    version,
    supportedFormats: [...new Set(schemaURIs.map((s: { formatIdentifier: string }) => s.formatIdentifier))],
    schemaURIs: schemaURIs.map((s: Record<string, unknown>) => ({ id: randomUUID(), ...s })),
    trustedAuthorities: ((trustedAuthorities as Record<string, unknown>[] | undefined) ?? []).map((t) => ({ id: randomUUID(), ...t })),
    signedJwt: jwt,
    issuer: leaf.subject.split('\n').join(', '),
    signerCertificateSerial: leaf.serialNumber,
    signerCertificate: { id: randomUUID(), relyingPartyId: 'rp', certificate: leaf.toString(), revoked: null, createdAt: now },
    issuedAt: new Date(Number(payload.iat) * 1000).toISOString(),
    createdAt: now,
    updatedAt: now,
    deprecated: false,
  };
  delete record.iat;
  catalog.records.push(record);
  return [201, record];
}

function deprecate(record: CatalogRecord, body: Record<string, unknown>): CatalogAnswer {
  if (typeof body.deprecated !== 'boolean') return problem(400, 'deprecated must be a boolean');
  Object.assign(record, {
    deprecated: body.deprecated,
    deprecationMessage: body.deprecated ? body.message : undefined,
    supersededByVersion: body.deprecated ? body.supersededByVersion : undefined,
    deprecatedAt: body.deprecated ? new Date().toISOString() : undefined,
    updatedAt: new Date().toISOString(),
  });
  return [200, record];
}

function classify(record: CatalogRecord, body: Record<string, unknown>): CatalogAnswer {
  const unknown = Object.keys(body).filter((k) => k !== 'category' && k !== 'tags');
  if (unknown.length) return problem(400, `property ${unknown[0]} should not exist`);
  Object.assign(record, {
    ...(body.category !== undefined && { category: body.category }),
    ...(body.tags !== undefined && { tags: body.tags }),
    updatedAt: new Date().toISOString(),
  });
  return [200, record];
}

/** Latest first, by semantic version. */
function versionsOf(catalog: SchemaCatalog, id: string): CatalogRecord[] {
  const key = (v: string) => v.split(/[-+]/)[0]?.split('.').map(Number) ?? [];
  const newer = (a: CatalogRecord, b: CatalogRecord) => {
    const [x, y] = [key(a.version), key(b.version)];
    for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (y[i] ?? 0) - (x[i] ?? 0);
    return 0;
  };
  return catalog.records.filter((r) => r.id === id).sort(newer);
}
