// A stand-in for Google Cloud KMS and Google's token endpoints (which cannot run here), speaking
// their documented REST protocols:
// - OAuth 2.0 JWT bearer grant (RFC 7523): POST /token (form: grant_type
//   urn:ietf:params:oauth:grant-type:jwt-bearer, assertion: an RS256 JWT whose signature is checked
//   with the service account's public key, iss the account, aud the token_uri, scope cloudkms,
//   not expired) → {access_token, expires_in, token_type}; 400 {"error": "invalid_grant"} otherwise;
// - the metadata server: GET /computeMetadata/v1/instance/service-accounts/default/token with
//   "Metadata-Flavor: Google" (403 without it);
// - Cloud KMS v1 (Authorization: Bearer of a token issued here, else 401): GET /v1/{keyRing};
//   POST /v1/{keyRing}/cryptoKeys?cryptoKeyId= (ASYMMETRIC_SIGN, EC_SIGN_P256_SHA256/P384_SHA384; the
//   first version starts PENDING_GENERATION, as in Cloud KMS, and is ENABLED when next read);
//   GET /v1/{key}; GET|POST /v1/{key}/cryptoKeyVersions; GET /v1/{version}/publicKey (PEM);
//   POST /v1/{version}:asymmetricSign ({digest: {sha256|sha384: base64}} → {signature: base64 DER});
//   errors as {"error": {"code", "message", "status"}}.
// Keys are real, never leave the fake, and sign the digest they are given.
import { generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify } from 'jose';
import { derSignature, signDigest } from './ecdsa-digest.js';

const CRYPTO_KEY_ID = /^[a-zA-Z0-9_-]{1,63}$/;
const ALGORITHMS: Record<string, { curve: string; digest: 'sha256' | 'sha384'; bytes: number }> = {
  EC_SIGN_P256_SHA256: { curve: 'P-256', digest: 'sha256', bytes: 32 },
  EC_SIGN_P384_SHA384: { curve: 'P-384', digest: 'sha384', bytes: 48 },
};

interface FakeVersion {
  name: string;
  state: 'PENDING_GENERATION' | 'ENABLED';
  algorithm: string;
  privateKey: KeyObject;
  publicPem: string;
}

interface FakeCryptoKey {
  name: string;
  algorithm: string;
  protectionLevel: string;
  versions: FakeVersion[];
}

export interface GcpKmsFake {
  url: string;
  keyRing: string;
  /** A service account key file's JSON, its token_uri this fake's. */
  serviceAccountKey: string;
  /** Crypto keys by id (the last part of their name). */
  keys: Map<string, FakeCryptoKey>;
  /** "METHOD path" of every request, in order. */
  requests: string[];
  tokensIssued: { serviceAccount: number; metadata: number };
  /** When set, every Cloud KMS request is answered with this status (the tokens still come). */
  failWith?: number;
  /** When set, a create makes the key but answers 409, as when another client made it just before. */
  createdMeanwhile?: boolean;
  /** A new version of the crypto key, as cryptoKeyVersions.create (or a rotation schedule) makes it. */
  addVersion(id: string): void;
  stop(): Promise<void>;
}

export async function startGcpKmsFake(keyRing = 'projects/svc-test-project/locations/europe-west3/keyRings/svc'): Promise<GcpKmsFake> {
  const account = 'svc-signer@svc-test-project.iam.gserviceaccount.com';
  const { privateKey: accountKey, publicKey: accountPublicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const tokens = new Set<string>();
  const keys = new Map<string, FakeCryptoKey>();
  const fake = {
    keyRing,
    keys,
    requests: [] as string[],
    tokensIssued: { serviceAccount: 0, metadata: 0 },
    failWith: undefined as number | undefined,
    createdMeanwhile: undefined as boolean | undefined,
  };
  const issueToken = () => {
    const token = `ya29.${randomBytes(24).toString('base64url')}`;
    tokens.add(token);
    return token;
  };
  const newVersion = (key: Pick<FakeCryptoKey, 'name' | 'algorithm'>, number: number, state: FakeVersion['state']): FakeVersion => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: ALGORITHMS[key.algorithm]?.curve as string });
    return {
      name: `${key.name}/cryptoKeyVersions/${number}`,
      state,
      algorithm: key.algorithm,
      privateKey,
      publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    };
  };
  const versionJson = (version: FakeVersion, key: FakeCryptoKey) => ({
    name: version.name,
    state: version.state,
    protectionLevel: key.protectionLevel,
    algorithm: version.algorithm,
    createTime: new Date().toISOString(),
  });
  const keyJson = (key: FakeCryptoKey) => ({
    name: key.name,
    purpose: 'ASYMMETRIC_SIGN',
    createTime: new Date().toISOString(),
    versionTemplate: { protectionLevel: key.protectionLevel, algorithm: key.algorithm },
    labels: { 'created-by': 'svc' },
  });
  let base = '';

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = decodeURIComponent(url.pathname);
    fake.requests.push(`${req.method} ${path}`);
    const text = await readBody(req);
    const fail = (code: number, status: string, message: string) => sendJson(res, code, { error: { code, message, status } });

    if (path === '/token' && req.method === 'POST') {
      const form = new URLSearchParams(text);
      const refuse = (description: string) => sendJson(res, 400, { error: 'invalid_grant', error_description: description });
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return refuse('Invalid grant_type');
      try {
        const { payload, protectedHeader } = await jwtVerify(form.get('assertion') ?? '', accountPublicKey, {
          algorithms: ['RS256'],
          issuer: account,
          audience: `${base}/token`,
          maxTokenAge: '1h',
        });
        if (protectedHeader.kid !== 'fake-key-id') return refuse('Invalid JWT Signature.');
        if (
          !String(payload.scope ?? '')
            .split(' ')
            .includes('https://www.googleapis.com/auth/cloudkms')
        )
          return refuse('Invalid scope');
      } catch {
        return refuse('Invalid JWT Signature.');
      }
      fake.tokensIssued.serviceAccount++;
      return sendJson(res, 200, { access_token: issueToken(), expires_in: 3599, token_type: 'Bearer' });
    }
    if (path === '/computeMetadata/v1/instance/service-accounts/default/token' && req.method === 'GET') {
      if (req.headers['metadata-flavor'] !== 'Google') return res.writeHead(403).end('Missing Metadata-Flavor:Google header.');
      fake.tokensIssued.metadata++;
      return sendJson(res, 200, { access_token: issueToken(), expires_in: 3599, token_type: 'Bearer' });
    }

    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    if (!bearer || !tokens.has(bearer)) return fail(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
    if (fake.failWith) return fail(fake.failWith, 'UNAVAILABLE', 'failing as told');
    if (!path.startsWith('/v1/')) return fail(404, 'NOT_FOUND', 'no such method');
    const resource = path.slice('/v1/'.length);
    const body = text ? (JSON.parse(text) as Record<string, any>) : {};

    if (req.method === 'GET' && resource === keyRing) return sendJson(res, 200, { name: keyRing, createTime: new Date().toISOString() });
    if (req.method === 'POST' && resource === `${keyRing}/cryptoKeys`) {
      const id = url.searchParams.get('cryptoKeyId') ?? '';
      if (!CRYPTO_KEY_ID.test(id)) return fail(400, 'INVALID_ARGUMENT', `Invalid crypto key id ${id}`);
      if (keys.has(id)) return fail(409, 'ALREADY_EXISTS', `CryptoKey ${keyRing}/cryptoKeys/${id} already exists.`);
      const algorithm = body.versionTemplate?.algorithm as string;
      if (body.purpose !== 'ASYMMETRIC_SIGN' || !ALGORITHMS[algorithm]) {
        return fail(400, 'INVALID_ARGUMENT', 'this fake makes ASYMMETRIC_SIGN keys of EC_SIGN_P256_SHA256 or EC_SIGN_P384_SHA384');
      }
      const key: FakeCryptoKey = {
        name: `${keyRing}/cryptoKeys/${id}`,
        algorithm,
        protectionLevel: body.versionTemplate?.protectionLevel ?? 'SOFTWARE',
        versions: [],
      };
      key.versions.push(newVersion(key, 1, 'PENDING_GENERATION'));
      keys.set(id, key);
      if (fake.createdMeanwhile) return fail(409, 'ALREADY_EXISTS', `CryptoKey ${key.name} already exists.`);
      return sendJson(res, 200, keyJson(key));
    }
    const match = new RegExp(`^${keyRing}/cryptoKeys/([^/:]+)(?:/cryptoKeyVersions(?:/(\\d+)(/publicKey|:asymmetricSign)?)?)?$`).exec(
      resource,
    );
    if (!match) return fail(404, 'NOT_FOUND', `${resource} not found.`);
    const [, id, number, action] = match as unknown as [string, string, string | undefined, string | undefined];
    const key = keys.get(id);
    if (!key) return fail(404, 'NOT_FOUND', `${keyRing}/cryptoKeys/${id} not found.`);
    if (req.method === 'GET' && !resource.includes('/cryptoKeyVersions')) return sendJson(res, 200, keyJson(key));
    if (req.method === 'GET' && number === undefined) {
      const answer = { cryptoKeyVersions: key.versions.map((version) => versionJson(version, key)), totalSize: key.versions.length };
      // Generation finishes once someone has seen it pending.
      for (const version of key.versions) version.state = 'ENABLED';
      return sendJson(res, 200, answer);
    }
    if (req.method === 'POST' && number === undefined) {
      const version = newVersion(key, key.versions.length + 1, 'ENABLED');
      key.versions.push(version);
      return sendJson(res, 200, versionJson(version, key));
    }
    const version = key.versions[Number(number) - 1];
    if (!version) return fail(404, 'NOT_FOUND', `${resource} not found.`);
    if (version.state !== 'ENABLED')
      return fail(400, 'FAILED_PRECONDITION', `${version.name} is not enabled, current state is: ${version.state}.`);
    if (req.method === 'GET' && action === '/publicKey') {
      return sendJson(res, 200, {
        pem: version.publicPem,
        algorithm: version.algorithm,
        name: version.name,
        protectionLevel: key.protectionLevel,
      });
    }
    if (req.method === 'POST' && action === ':asymmetricSign') {
      const algorithm = ALGORITHMS[version.algorithm] as (typeof ALGORITHMS)[string];
      const given = body.digest?.[algorithm.digest];
      const digest = typeof given === 'string' ? Buffer.from(given, 'base64') : undefined;
      if (!digest || digest.length !== algorithm.bytes) {
        return fail(400, 'INVALID_ARGUMENT', `The request digest is invalid for the algorithm ${version.algorithm}.`);
      }
      return sendJson(res, 200, { signature: derSignature(signDigest(version.privateKey, digest)).toString('base64'), name: version.name });
    }
    return fail(404, 'NOT_FOUND', 'no such method');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  const serviceAccountKey = JSON.stringify({
    type: 'service_account',
    project_id: 'svc-test-project',
    private_key_id: 'fake-key-id',
    private_key: accountKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    client_email: account,
    client_id: '100000000000000000001',
    token_uri: `${base}/token`,
  });
  return Object.assign(fake, {
    url: base,
    serviceAccountKey,
    addVersion(id: string) {
      const key = keys.get(id);
      if (!key) throw new Error(`no crypto key ${id}`);
      key.versions.push(newVersion(key, key.versions.length + 1, 'ENABLED'));
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
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(body));
}
