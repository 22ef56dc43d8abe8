// A stand-in for Azure Key Vault and the Microsoft Entra token endpoints (which cannot run here),
// speaking their documented REST protocols:
// - Entra: POST /{tenant}/oauth2/v2.0/token (form: grant_type client_credentials, client_id,
//   client_secret, scope https://vault.azure.net/.default), answering {token_type, expires_in,
//   access_token} or 401 {"error": "invalid_client"};
// - IMDS: GET /metadata/identity/oauth2/token?api-version=2018-02-01&resource=https://vault.azure.net
//   with "Metadata: true" (expires_in a string, as IMDS gives it), 400 without the header;
// - Key Vault (api-version 7.4/7.5, Authorization: Bearer of a token issued here, else 401):
//   GET /keys, POST /keys/{name}/create (kty EC/EC-HSM, crv P-256/-384/-521; on an existing name a new
//   version), GET /keys/{name}[/{version}] (a KeyBundle: JWK with kid, x and y; 404 KeyNotFound),
//   POST /keys/{name}/rotate, POST /keys/{name}/{version}/sign ({alg ES256/384/512, value: base64url
//   digest} → {kid, value: base64url r || s}); errors as {"error": {"code", "message"}}.
// Keys are real, never leave the fake, and sign the digest they are given.
import { generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signDigest } from './ecdsa-digest.js';

const KEY_NAME = /^[0-9a-zA-Z-]{1,127}$/;
const ALGORITHMS: Record<string, { crv: string; digestBytes: number }> = {
  ES256: { crv: 'P-256', digestBytes: 32 },
  ES384: { crv: 'P-384', digestBytes: 48 },
  ES512: { crv: 'P-521', digestBytes: 64 },
};

interface KeyVersion {
  version: string;
  kty: string;
  privateKey: KeyObject;
  jwk: { kty: string; crv: string; x: string; y: string };
}

export interface AzureKeyVaultFake {
  url: string;
  tenantId: string;
  client: { id: string; secret: string };
  /** Versions of each key by name, oldest first. */
  keys: Map<string, KeyVersion[]>;
  /** "METHOD path" of every request, in order. */
  requests: string[];
  /** How many tokens Entra and IMDS gave out. */
  tokensIssued: { clientCredentials: number; managedIdentity: number };
  /** expires_in of the tokens given out (seconds). */
  tokenLifetime: number;
  /** When set, every Key Vault request is answered with this status (the tokens still come). */
  failWith?: number;
  /** The vault no longer takes the tokens given out so far (401), as after a revocation. */
  revokeTokens(): void;
  /** A new version of the key, as Key Vault's rotate operation (or a rotation policy) makes it. */
  rotateKey(name: string): void;
  stop(): Promise<void>;
}

export async function startAzureKeyVaultFake(): Promise<AzureKeyVaultFake> {
  const tokens = new Set<string>();
  const fake: Omit<AzureKeyVaultFake, 'url' | 'stop' | 'revokeTokens' | 'rotateKey'> = {
    tenantId: 'contoso.onmicrosoft.com',
    client: { id: '00000000-1111-2222-3333-444444444444', secret: 'fake-entra-secret' },
    keys: new Map(),
    requests: [],
    tokensIssued: { clientCredentials: 0, managedIdentity: 0 },
    tokenLifetime: 3599,
  };
  const issueToken = () => {
    const token = randomBytes(24).toString('base64url');
    tokens.add(token);
    return token;
  };
  let base = '';
  const bundle = (name: string, key: KeyVersion) => ({
    key: { kid: `${base}/keys/${name}/${key.version}`, ...key.jwk, kty: key.kty, key_ops: ['sign', 'verify'] },
    attributes: { enabled: true, exportable: false, recoveryLevel: 'Recoverable+Purgeable' },
    tags: { createdBy: 'svc' },
  });
  const newVersion = (kty: string, crv: string): KeyVersion => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: crv });
    const { x, y } = publicKey.export({ format: 'jwk' }) as { x: string; y: string };
    return { version: randomBytes(16).toString('hex'), kty, privateKey, jwk: { kty: 'EC', crv, x, y } };
  };

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    fake.requests.push(`${req.method} ${path}`);
    const text = await readBody(req);
    const fail = (status: number, code: string, message: string) => sendJson(res, status, { error: { code, message } });

    // Microsoft Entra: client credentials.
    const entra = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(path);
    if (entra && req.method === 'POST') {
      const form = new URLSearchParams(text);
      if (decodeURIComponent(entra[1] as string) !== fake.tenantId)
        return sendJson(res, 400, { error: 'invalid_request', error_description: 'AADSTS90002: Tenant not found.' });
      if (form.get('grant_type') !== 'client_credentials' || form.get('scope') !== 'https://vault.azure.net/.default')
        return sendJson(res, 400, { error: 'invalid_request', error_description: 'grant_type or scope' });
      if (form.get('client_id') !== fake.client.id || form.get('client_secret') !== fake.client.secret)
        return sendJson(res, 401, { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' });
      fake.tokensIssued.clientCredentials++;
      return sendJson(res, 200, {
        token_type: 'Bearer',
        expires_in: fake.tokenLifetime,
        ext_expires_in: fake.tokenLifetime,
        access_token: issueToken(),
      });
    }
    // IMDS: the managed identity.
    if (path === '/metadata/identity/oauth2/token' && req.method === 'GET') {
      if (req.headers.metadata !== 'true')
        return sendJson(res, 400, { error: 'invalid_request', error_description: 'Required metadata header not specified' });
      if (url.searchParams.get('api-version') !== '2018-02-01' || url.searchParams.get('resource') !== 'https://vault.azure.net')
        return sendJson(res, 400, { error: 'invalid_request', error_description: 'api-version or resource' });
      fake.tokensIssued.managedIdentity++;
      const expiresOn = Math.floor(Date.now() / 1000) + fake.tokenLifetime;
      return sendJson(res, 200, {
        access_token: issueToken(),
        expires_in: String(fake.tokenLifetime),
        expires_on: String(expiresOn),
        resource: 'https://vault.azure.net',
        token_type: 'Bearer',
      });
    }

    // Key Vault.
    if (!['7.4', '7.5'].includes(url.searchParams.get('api-version') ?? '')) return fail(400, 'BadParameter', 'api-version');
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    if (!bearer || !tokens.has(bearer)) {
      res.setHeader(
        'www-authenticate',
        `Bearer authorization="https://login.microsoftonline.com/${fake.tenantId}", resource="https://vault.azure.net"`,
      );
      return fail(401, 'Unauthorized', 'AKV10000: Request is missing a Bearer or PoP token.');
    }
    if (fake.failWith) return fail(fake.failWith, 'ServiceUnavailable', 'failing as told');
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    if (req.method === 'GET' && path === '/keys') {
      const value = [...fake.keys.keys()].map((name) => ({ kid: `${base}/keys/${name}`, attributes: { enabled: true } }));
      return sendJson(res, 200, { value: value.slice(0, Number(url.searchParams.get('maxresults') ?? 25)), nextLink: null });
    }
    const match = /^\/keys\/([^/]+)(?:\/([^/]+))?(?:\/(sign))?$/.exec(path);
    if (!match) return fail(404, 'NotFound', 'no such operation');
    const [, encodedName, second, sign] = match as unknown as [string, string, string | undefined, string | undefined];
    const name = decodeURIComponent(encodedName);
    if (!KEY_NAME.test(name)) return fail(400, 'BadParameter', `The request URI contains an invalid name: ${name}`);
    const versions = fake.keys.get(name);
    const notFound = () => fail(404, 'KeyNotFound', `A key with (name/id) ${name} was not found in this key vault.`);

    if (req.method === 'POST' && second === 'create' && !sign) {
      const kty = String(body.kty);
      const crv = String(body.crv);
      if (!['EC', 'EC-HSM'].includes(kty) || !['P-256', 'P-384', 'P-521'].includes(crv))
        return fail(400, 'BadParameter', 'this fake makes EC keys on P-256, P-384, P-521');
      const key = newVersion(kty, crv);
      fake.keys.set(name, [...(versions ?? []), key]);
      return sendJson(res, 200, bundle(name, key));
    }
    if (req.method === 'POST' && second === 'rotate' && !sign) {
      const latest = versions?.at(-1);
      if (!latest) return notFound();
      const key = newVersion(latest.kty, latest.jwk.crv);
      versions?.push(key);
      return sendJson(res, 200, bundle(name, key));
    }
    if (req.method === 'GET' && !sign) {
      const key = second ? versions?.find((v) => v.version === second) : versions?.at(-1);
      return key ? sendJson(res, 200, bundle(name, key)) : notFound();
    }
    if (req.method === 'POST' && sign && second) {
      const key = versions?.find((v) => v.version === second);
      if (!key) return notFound();
      const algorithm = ALGORITHMS[String(body.alg)];
      if (!algorithm || algorithm.crv !== key.jwk.crv) return fail(400, 'BadParameter', `Invalid algorithm ${body.alg} for this key`);
      const digest = Buffer.from(String(body.value), 'base64url');
      if (digest.length !== algorithm.digestBytes) return fail(400, 'BadParameter', 'Invalid digest length');
      return sendJson(res, 200, {
        kid: `${base}/keys/${name}/${key.version}`,
        value: signDigest(key.privateKey, digest).toString('base64url'),
      });
    }
    return fail(405, 'MethodNotAllowed', 'not here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  return Object.assign(fake, {
    url: base,
    revokeTokens: () => tokens.clear(),
    rotateKey(name: string) {
      const latest = fake.keys.get(name)?.at(-1);
      if (!latest) throw new Error(`no key ${name}`);
      fake.keys.get(name)?.push(newVersion(latest.kty, latest.jwk.crv));
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}
