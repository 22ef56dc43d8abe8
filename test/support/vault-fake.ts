// A stand-in for HashiCorp Vault's Transit secrets engine (Vault cannot run here), speaking its
// documented HTTP API: X-Vault-Token on every request; GET /v1/auth/token/lookup-self; under the
// mount, POST /v1/{mount}/keys/{name} (create: type ecdsa-p256/-p384/-p521), GET /v1/{mount}/keys/{name}
// (keys by version with their PEM public_key, latest_version; 404 with {"errors": []} when missing),
// POST /v1/{mount}/keys/{name}/rotate, and POST /v1/{mount}/sign/{name} (input base64,
// hash_algorithm, marshaling_algorithm asn1|jws, key_version) answering "vault:v<version>:<signature>".
// Symmetric keys (type aes256-gcm96, Vault's default) encrypt and decrypt: POST /v1/{mount}/encrypt/{name}
// (plaintext base64; the key is made when missing, as Vault does for a token allowed to) answering
// ciphertext "vault:v<version>:<base64>", and POST /v1/{mount}/decrypt/{name} (ciphertext) answering
// plaintext base64, or 400 "cipher: message authentication failed" for a value another key made.
// Keys are real, never leave the fake, and sign with node:crypto. It records each request's path.
import { createCipheriv, createDecipheriv, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const CURVES: Record<string, string> = { 'ecdsa-p256': 'P-256', 'ecdsa-p384': 'P-384', 'ecdsa-p521': 'P-521' };
const HASHES: Record<string, string> = { 'sha2-256': 'sha256', 'sha2-384': 'sha384', 'sha2-512': 'sha512' };

interface TransitKey {
  type: string;
  /** Signing keys hold a key pair per version, aes256-gcm96 keys a secret. */
  versions: { privateKey?: KeyObject; publicPem?: string; secret?: Buffer }[];
}

export interface VaultFake {
  url: string;
  token: string;
  keys: Map<string, TransitKey>;
  /** "METHOD path" of every request, in order. */
  requests: string[];
  /** When set, every request is answered with this status (a sealed or failing Vault). */
  failWith?: number;
  /** When set, every request waits for it before it is answered (a slow Vault: something else happens meanwhile). */
  hold?: Promise<void>;
  stop(): Promise<void>;
}

export async function startVaultFake(mount = 'transit', token = 'hvs.test-token'): Promise<VaultFake> {
  const fake: Omit<VaultFake, 'url' | 'stop'> = { token, keys: new Map(), requests: [] };
  const server: Server = createServer(async (req, res) => {
    const send = (status: number, body?: unknown) => sendJson(res, status, body);
    const path = new URL(req.url ?? '/', 'http://vault').pathname;
    fake.requests.push(`${req.method} ${path}`);
    const body = await readJson(req);
    await fake.hold;
    if (fake.failWith) return send(fake.failWith, { errors: ['Vault is sealed'] });
    if (req.headers['x-vault-token'] !== fake.token) return send(403, { errors: ['permission denied'] });
    if (req.method === 'GET' && path === '/v1/auth/token/lookup-self') return send(200, { data: { id: fake.token, policies: ['svc'] } });
    const match = new RegExp(`^/v1/${mount}/(keys|sign|encrypt|decrypt)/([^/]+)(/rotate)?$`).exec(path);
    if (!match) return send(404, { errors: [] });
    const [, action, encodedName, rotate] = match as unknown as [string, string, string, string | undefined];
    const name = decodeURIComponent(encodedName);
    // Vault routes transit key names by its GenericNameRegex: word characters, - and . inside.
    if (!/^\w(([\w.-]+)?\w)?$/.test(name)) return send(404, { errors: ['unsupported path'] });
    const key = fake.keys.get(name);
    if (action === 'keys' && req.method === 'POST' && rotate) {
      if (!key) return send(404, { errors: [] });
      key.versions.push(newVersion(key.type));
      return send(204);
    }
    if (action === 'keys' && req.method === 'POST') {
      const type = (body.type as string | undefined) ?? 'aes256-gcm96';
      if (!CURVES[type] && type !== 'aes256-gcm96') return send(400, { errors: [`unsupported key type ${type} for this fake`] });
      if (!key) fake.keys.set(name, { type, versions: [newVersion(type)] });
      return send(204);
    }
    if (action === 'keys' && req.method === 'GET') {
      if (!key) return send(404, { errors: [] });
      const keys = Object.fromEntries(
        key.versions.map((version, index) => [String(index + 1), { public_key: version.publicPem, name: 'P-256', creation_time: '' }]),
      );
      return send(200, { data: { name, type: key.type, latest_version: key.versions.length, exportable: false, keys } });
    }
    if (action === 'encrypt' && req.method === 'POST') {
      const target = key ?? { type: 'aes256-gcm96', versions: [newVersion('aes256-gcm96')] };
      fake.keys.set(name, target);
      const secret = target.versions.at(-1)?.secret;
      if (!secret) return send(400, { errors: [`key type ${target.type} does not support encryption`] });
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', secret, iv);
      const sealed = Buffer.concat([cipher.update(Buffer.from(body.plaintext as string, 'base64')), cipher.final(), cipher.getAuthTag()]);
      const ciphertext = `vault:v${target.versions.length}:${Buffer.concat([iv, sealed]).toString('base64')}`;
      return send(200, { data: { ciphertext, key_version: target.versions.length } });
    }
    if (action === 'decrypt' && req.method === 'POST') {
      if (!key) return send(400, { errors: ['encryption key not found'] });
      const parsed = /^vault:v(\d+):(.+)$/.exec(String(body.ciphertext ?? ''));
      if (!parsed) return send(400, { errors: ['invalid ciphertext: no prefix'] });
      const secret = key.versions[Number(parsed[1]) - 1]?.secret;
      if (!secret) return send(400, { errors: ['invalid ciphertext: key version not found'] });
      const bytes = Buffer.from(parsed[2] as string, 'base64');
      try {
        const decipher = createDecipheriv('aes-256-gcm', secret, bytes.subarray(0, 12));
        decipher.setAuthTag(bytes.subarray(bytes.length - 16));
        const plaintext = Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]);
        return send(200, { data: { plaintext: plaintext.toString('base64') } });
      } catch {
        return send(400, { errors: ['cipher: message authentication failed'] });
      }
    }
    if (action === 'sign' && req.method === 'POST') {
      if (!key) return send(400, { errors: ['signing key not found'] });
      const version = (body.key_version as number | undefined) ?? key.versions.length;
      const chosen = key.versions[version - 1];
      if (!chosen?.privateKey) return send(400, { errors: ['requested version for signing does not exist'] });
      const hash = HASHES[(body.hash_algorithm as string | undefined) ?? 'sha2-256'];
      if (!hash) return send(400, { errors: ['unsupported hash algorithm'] });
      const encoding = body.marshaling_algorithm === 'jws' ? 'ieee-p1363' : 'der';
      const signature = sign(hash, Buffer.from(body.input as string, 'base64'), { key: chosen.privateKey, dsaEncoding: encoding });
      const text = encoding === 'ieee-p1363' ? signature.toString('base64url') : signature.toString('base64');
      return send(200, { data: { signature: `vault:v${version}:${text}`, key_version: version } });
    }
    return send(405, { errors: [] });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

function newVersion(type: string) {
  if (type === 'aes256-gcm96') return { secret: randomBytes(32) };
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: CURVES[type] as string });
  return { privateKey, publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString() };
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

function sendJson(res: ServerResponse, status: number, body?: unknown) {
  if (body === undefined) return res.writeHead(status).end();
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
