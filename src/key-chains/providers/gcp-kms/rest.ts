// Google Cloud KMS's REST API (v1) and the Google OAuth tokens it takes, as plain HTTP through the
// service's outbound client (no Google SDK). Kept apart from the key provider so other uses of Cloud
// KMS can take the same client and token source.
// https://cloud.google.com/kms/docs/reference/rest
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { z } from 'zod';
import { jsonObjectOf, type OutboundClient, type OutboundResponse, readAnswer } from '../../../platform/outbound/client.js';
import { CachedToken, readToken } from '../bearer-token.js';

const SCOPE = 'https://www.googleapis.com/auth/cloudkms';
const TIMEOUT_MS = 10_000;
/** How long a new key version may stay PENDING_GENERATION (Cloud KMS makes asymmetric keys asynchronously). */
const GENERATION_WAIT_MS = 20_000;

/** The fields of a service account key file (JSON) that the JWT bearer grant needs. */
export const ServiceAccountKey = z.object({
  type: z.literal('service_account'),
  client_email: z.string().min(1),
  private_key: z.string().includes('PRIVATE KEY', { message: 'must be a PEM private key' }),
  private_key_id: z.string().optional(),
  token_uri: z.url({ protocol: /^https?$/ }).default('https://oauth2.googleapis.com/token'),
});
export type ServiceAccountKey = z.infer<typeof ServiceAccountKey>;

export type GcpCredentials =
  /** A service account key: an RS256 JWT signed with it, exchanged at its token_uri (RFC 7523). */
  | { kind: 'service-account'; key: ServiceAccountKey; privateKey: KeyObject }
  /** The attached service account (Compute Engine, Cloud Run, GKE Workload Identity), from the metadata server. */
  | { kind: 'metadata'; endpoint: string };

/** A service account key's private key, read once at start. */
export function serviceAccountCredentials(key: ServiceAccountKey): GcpCredentials {
  return { kind: 'service-account', key, privateKey: createPrivateKey(key.private_key) };
}

const trimSlashes = (url: string) => url.replace(/\/+$/, '');

/** Where Cloud KMS's access tokens come from, kept until shortly before they expire. */
export function gcpTokenSource(credentials: GcpCredentials, outbound: OutboundClient): CachedToken {
  if (credentials.kind === 'service-account') {
    const { key, privateKey } = credentials;
    const url = new URL(key.token_uri);
    return new CachedToken(async () => {
      const now = Math.floor(Date.now() / 1000);
      const assertion = await new SignJWT({ scope: SCOPE })
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(key.private_key_id && { kid: key.private_key_id }) })
        .setIssuer(key.client_email)
        .setAudience(key.token_uri)
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .sign(privateKey);
      const reply = await outbound.request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
        timeoutMs: TIMEOUT_MS,
      });
      return readToken(reply, `Google's token endpoint (${url.origin})`);
    });
  }
  const url = new URL(`${trimSlashes(credentials.endpoint)}/computeMetadata/v1/instance/service-accounts/default/token`);
  // The metadata server is at the cloud metadata address, which the outbound client refuses to everything else.
  const metadata = outbound.admittingMetadata();
  return new CachedToken(async () =>
    readToken(
      await metadata.request(url, { headers: { 'metadata-flavor': 'Google' }, timeoutMs: TIMEOUT_MS }),
      `the metadata server (${url.origin})`,
    ),
  );
}

const CryptoKey = z.object({
  name: z.string(),
  purpose: z.string(),
  versionTemplate: z.object({ algorithm: z.string() }).loose().optional(),
});
export type CryptoKey = z.infer<typeof CryptoKey>;
const CryptoKeyVersion = z.object({ name: z.string(), state: z.string(), algorithm: z.string().optional() });
export type CryptoKeyVersion = z.infer<typeof CryptoKeyVersion>;
const VersionList = z.object({
  cryptoKeyVersions: z.array(CryptoKeyVersion).default([]),
  nextPageToken: z.string().optional(),
});
const PublicKey = z.object({ pem: z.string().includes('PUBLIC KEY'), algorithm: z.string() });
const SignResponse = z.object({ signature: z.base64() });

/** Cloud KMS answered with an error: its status and its own status name (NOT_FOUND, PERMISSION_DENIED, ...). */
export class CloudKmsError extends Error {
  override name = 'CloudKmsError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** The number at the end of a version's resource name (.../cryptoKeyVersions/<n>). */
const versionNumber = (version: CryptoKeyVersion) => Number(version.name.split('/').pop());

export class CloudKmsClient {
  constructor(
    /** https://cloudkms.googleapis.com, or a Private Service Connect endpoint. */
    private readonly endpoint: string,
    private readonly token: CachedToken,
    private readonly outbound: OutboundClient,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /** One call with a bearer token; a 401 drops the kept token and tries once more with a new one. */
  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<OutboundResponse> {
    const url = new URL(`${trimSlashes(this.endpoint)}/v1/${path}`);
    for (let attempt = 1; ; attempt++) {
      const reply = await this.outbound.request(url, {
        method,
        headers: {
          authorization: `Bearer ${await this.token.get()}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        timeoutMs: TIMEOUT_MS,
      });
      if (reply.status !== 401 || attempt === 2) return reply;
      this.token.drop();
    }
  }

  private async read<T>(schema: z.ZodType<T>, action: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const reply = await this.call(method, path, body);
    if (!reply.ok) {
      const error = jsonObjectOf(reply)?.error;
      const status = error && typeof error === 'object' && 'status' in error && typeof error.status === 'string' ? error.status : '';
      throw new CloudKmsError(`${action}: Cloud KMS answered ${reply.status}${status && `: ${status.slice(0, 64)}`}`, reply.status);
    }
    const read = readAnswer(schema, jsonObjectOf(reply));
    if ('wrong' in read) throw new Error(`${action}: the answer is not what Cloud KMS gives (${read.wrong})`);
    return read.value;
  }

  /** keyRings.get: an answer means Cloud KMS is reachable, takes the token, and the key ring exists. */
  async getKeyRing(keyRing: string): Promise<void> {
    await this.read(z.object({ name: z.string() }), `reading key ring ${keyRing}`, 'GET', keyRing);
  }

  /** The crypto key `id` of the key ring; undefined when there is none. */
  async getCryptoKey(keyRing: string, id: string): Promise<CryptoKey | undefined> {
    try {
      return await this.read(CryptoKey, `reading crypto key ${id}`, 'GET', `${keyRing}/cryptoKeys/${id}`);
    } catch (err) {
      if (err instanceof CloudKmsError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** A new ASYMMETRIC_SIGN crypto key (with its first version, made asynchronously). */
  async createCryptoKey(keyRing: string, id: string, algorithm: string, protectionLevel: 'SOFTWARE' | 'HSM'): Promise<CryptoKey> {
    return this.read(CryptoKey, `creating crypto key ${id}`, 'POST', `${keyRing}/cryptoKeys?cryptoKeyId=${encodeURIComponent(id)}`, {
      purpose: 'ASYMMETRIC_SIGN',
      versionTemplate: { algorithm, protectionLevel },
      labels: { 'created-by': 'svc' },
    });
  }

  /** The newest version of the key that can sign, waiting while the newest is still being generated; undefined when none can. */
  async newestEnabledVersion(cryptoKey: string): Promise<CryptoKeyVersion | undefined> {
    const deadline = Date.now() + GENERATION_WAIT_MS;
    for (let wait = 200; ; wait = Math.min(wait * 2, 2_000)) {
      const versions = (await this.versions(cryptoKey)).sort((a, b) => versionNumber(b) - versionNumber(a));
      if (versions[0]?.state !== 'PENDING_GENERATION' || Date.now() > deadline) {
        return versions.find((version) => version.state === 'ENABLED');
      }
      await this.sleep(wait);
    }
  }

  private async versions(cryptoKey: string): Promise<CryptoKeyVersion[]> {
    const all: CryptoKeyVersion[] = [];
    let pageToken: string | undefined;
    for (let page = 0; page < 20; page++) {
      const query = new URLSearchParams({ pageSize: '100', ...(pageToken && { pageToken }) });
      const list = await this.read(VersionList, `listing versions of ${cryptoKey}`, 'GET', `${cryptoKey}/cryptoKeyVersions?${query}`);
      all.push(...list.cryptoKeyVersions);
      pageToken = list.nextPageToken;
      if (!pageToken) break;
    }
    return all;
  }

  /** The PEM public key of a version, and its algorithm. */
  async publicKey(version: string): Promise<{ pem: string; algorithm: string }> {
    return this.read(PublicKey, `reading the public key of ${version}`, 'GET', `${version}/publicKey`);
  }

  /** The DER ECDSA signature by `version` over `digest` (sha256 or sha384, as the version's algorithm hashes). */
  async asymmetricSign(version: string, hash: 'sha256' | 'sha384', digest: Uint8Array): Promise<Buffer> {
    const signed = await this.read(SignResponse, `signing with ${version}`, 'POST', `${version}:asymmetricSign`, {
      digest: { [hash]: Buffer.from(digest).toString('base64') },
    });
    return Buffer.from(signed.signature, 'base64');
  }
}
