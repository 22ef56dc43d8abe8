// Azure Key Vault's keys REST API (api-version 7.5) and the Microsoft Entra tokens it takes, as plain
// HTTP through the service's outbound client (no Azure SDK). Kept apart from the key provider so
// other uses of the vault (wrapping keys) can take the same client and token source.
// https://learn.microsoft.com/rest/api/keyvault/keys
import { z } from 'zod';
import { jsonObjectOf, type OutboundClient, type OutboundResponse, readAnswer } from '../../../platform/outbound/client.js';
import { CachedToken, readToken } from '../bearer-token.js';

export const API_VERSION = '7.5';
/** The audience of Key Vault tokens (public cloud). */
const VAULT_RESOURCE = 'https://vault.azure.net';
const TIMEOUT_MS = 10_000;

export type AzureCredentials =
  /** An app registration's client secret: Entra's OAuth 2.0 client credentials grant. */
  | { kind: 'client-secret'; authorityUrl: string; tenantId: string; clientId: string; clientSecret: string }
  /** The managed identity of the VM, App Service or pod (system-assigned, or the user-assigned one clientId names), from IMDS. */
  | { kind: 'managed-identity'; endpoint: string; clientId?: string };

const trimSlashes = (url: string) => url.replace(/\/+$/, '');

/** Where the vault's access tokens come from, kept until shortly before they expire. */
export function azureTokenSource(credentials: AzureCredentials, outbound: OutboundClient): CachedToken {
  if (credentials.kind === 'client-secret') {
    const url = new URL(`${trimSlashes(credentials.authorityUrl)}/${encodeURIComponent(credentials.tenantId)}/oauth2/v2.0/token`);
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: credentials.clientId,
      client_secret: credentials.clientSecret,
      scope: `${VAULT_RESOURCE}/.default`,
    }).toString();
    return new CachedToken(async () => {
      const reply = await outbound.request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
        timeoutMs: TIMEOUT_MS,
      });
      return readToken(reply, `Microsoft Entra (${url.origin})`);
    });
  }
  const url = new URL(credentials.endpoint);
  url.searchParams.set('api-version', '2018-02-01');
  url.searchParams.set('resource', VAULT_RESOURCE);
  if (credentials.clientId) url.searchParams.set('client_id', credentials.clientId);
  // IMDS listens on the cloud metadata address, which the outbound client refuses to everything else.
  const imds = outbound.admittingMetadata();
  return new CachedToken(async () =>
    readToken(
      await imds.request(url, { headers: { metadata: 'true' }, timeoutMs: TIMEOUT_MS }),
      `the managed identity endpoint (${url.origin})`,
    ),
  );
}

/** A key as Key Vault answers it (KeyBundle): its JSON Web Key, whose kid ends in the key's version. */
const KeyBundle = z.object({
  key: z.object({
    kid: z.url(),
    kty: z.string(),
    crv: z.string().optional(),
    x: z.string().optional(),
    y: z.string().optional(),
  }),
});
export type KeyBundle = z.infer<typeof KeyBundle>;
const SignResult = z.object({ kid: z.string(), value: z.string().regex(/^[A-Za-z0-9_-]+$/, 'must be base64url') });

/** Key Vault answered with an error: its status and its own code (KeyNotFound, Forbidden, ...). */
export class KeyVaultError extends Error {
  override name = 'KeyVaultError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export class KeyVaultClient {
  constructor(
    /** https://<vault>.vault.azure.net, or a private endpoint. */
    readonly vaultUrl: string,
    private readonly token: CachedToken,
    private readonly outbound: OutboundClient,
  ) {}

  /** One call with a bearer token; a 401 drops the kept token and tries once more with a new one (it was revoked or expired early). */
  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<OutboundResponse> {
    const url = new URL(`${trimSlashes(this.vaultUrl)}${path}`);
    url.searchParams.set('api-version', API_VERSION);
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

  private static failure(action: string, reply: OutboundResponse): KeyVaultError {
    const error = jsonObjectOf(reply)?.error;
    const code =
      error && typeof error === 'object' && 'code' in error && typeof error.code === 'string' ? `: ${error.code.slice(0, 64)}` : '';
    return new KeyVaultError(`${action}: Key Vault answered ${reply.status}${code}`, reply.status);
  }

  private static bundle(action: string, reply: OutboundResponse): KeyBundle {
    const read = readAnswer(KeyBundle, jsonObjectOf(reply));
    if ('wrong' in read) throw new Error(`${action}: the answer is not a key (${read.wrong})`);
    return read.value;
  }

  /** GET /keys?maxresults=1: an answer means the vault is reachable and takes the token (and its identity may list keys). */
  async listOne(): Promise<void> {
    const reply = await this.call('GET', '/keys?maxresults=1');
    if (!reply.ok) throw KeyVaultClient.failure('listing keys', reply);
  }

  /** The current version of the key `name`; undefined when the vault has no key of that name. */
  async getKey(name: string): Promise<KeyBundle | undefined> {
    const action = `reading key '${name}'`;
    const reply = await this.call('GET', `/keys/${encodeURIComponent(name)}`);
    if (reply.status === 404) return undefined;
    if (!reply.ok) throw KeyVaultClient.failure(action, reply);
    return KeyVaultClient.bundle(action, reply);
  }

  /** Creates the key `name` (a new version of it, if it exists): EC or EC-HSM on `curve`, for signing only. */
  async createKey(name: string, kty: 'EC' | 'EC-HSM', curve: string): Promise<KeyBundle> {
    const action = `creating key '${name}'`;
    const reply = await this.call('POST', `/keys/${encodeURIComponent(name)}/create`, {
      kty,
      crv: curve,
      key_ops: ['sign', 'verify'],
      tags: { createdBy: 'svc' },
    });
    if (!reply.ok) throw KeyVaultClient.failure(action, reply);
    return KeyVaultClient.bundle(action, reply);
  }

  /** The signature (r || s, as JWS wants it) by version `version` of key `name` over `digest`. */
  async sign(name: string, version: string, algorithm: string, digest: Uint8Array): Promise<Buffer> {
    const action = `signing with key '${name}'`;
    const reply = await this.call('POST', `/keys/${encodeURIComponent(name)}/${encodeURIComponent(version)}/sign`, {
      alg: algorithm,
      value: Buffer.from(digest).toString('base64url'),
    });
    if (!reply.ok) throw KeyVaultClient.failure(action, reply);
    const read = readAnswer(SignResult, jsonObjectOf(reply));
    if ('wrong' in read) throw new Error(`${action}: the answer is not a signature (${read.wrong})`);
    return Buffer.from(read.value.value, 'base64url');
  }
}

/** The version part of a key identifier (https://<vault>/keys/<name>/<version>). */
export function versionOf(kid: string): string {
  const version = new URL(kid).pathname.split('/').filter(Boolean)[2];
  if (!version) throw new Error(`the key identifier ${kid} names no version`);
  return version;
}
