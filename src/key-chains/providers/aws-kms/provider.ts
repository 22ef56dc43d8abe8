// Keys in AWS KMS, through the official client (@aws-sdk/client-kms, bundled into a chunk loaded
// only when an aws-kms provider is configured). A chain's key is found by its alias
// (alias/<name>), made when missing (KeySpec ECC_NIST_P256/P384/P521, KeyUsage SIGN_VERIFY: the
// private key never leaves KMS), and named by its key ARN from then on, so re-pointing the alias
// later does not change which key signs for a certificate. svc hashes and KMS signs the digest.
// The client's HTTP requests go through the operator's outbound client and its address policy.
import { createPublicKey } from 'node:crypto';
import {
  CreateAliasCommand,
  CreateKeyCommand,
  DescribeKeyCommand,
  GetPublicKeyCommand,
  type KeySpec,
  KMSClient,
  ListKeysCommand,
  SignCommand,
} from '@aws-sdk/client-kms';
import type { JWK } from 'jose';
import type { SigningAlgorithm } from '../../../platform/crypto/algorithms.js';
import type { OutboundClient } from '../../../platform/outbound/client.js';
import { derToRaw } from '../der-signature.js';
import { COORDINATE_BYTES, digestOf, ExternalKeyProvider } from '../external.js';
import type { Adoptions } from '../key-names.js';
import type { ProviderCapabilities } from '../key-provider.js';
import { ProviderStartError } from '../start-error.js';

export interface AwsKmsSettings {
  id: string;
  adopt: Adoptions;
  region: string;
  endpoint?: string;
  /** Absent: the SDK's default chain (environment, shared files, web identity, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

const KEY_SPEC: Record<SigningAlgorithm, KeySpec> = { ES256: 'ECC_NIST_P256', ES384: 'ECC_NIST_P384', ES512: 'ECC_NIST_P521' };
const SIGNING_ALGORITHM = { ES256: 'ECDSA_SHA_256', ES384: 'ECDSA_SHA_384', ES512: 'ECDSA_SHA_512' } as const;
/** Refusals of the credentials themselves: a configuration to fix, not an outage. */
export const CREDENTIAL_ERRORS = new Set([
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'AccessDeniedException',
  'IncompleteSignature',
]);
const TIMEOUT_MS = 10_000;

/** Where it was first written (its tests import it from here). */
export { derToRaw };

export class AwsKmsKeyProvider extends ExternalKeyProvider {
  readonly type = 'aws-kms';
  readonly capabilities: ProviderCapabilities = { generate: true, import: false, algorithms: ['ES256', 'ES384', 'ES512'], decrypt: false };
  /** Alias names take letters, digits, / _ and -, not '.'. */
  protected override readonly nameSeparator = '/';
  /** An alias is at most 256 characters, alias/ included. */
  protected override readonly maxNameLength = 256 - 'alias/'.length;

  private constructor(
    settings: AwsKmsSettings,
    private readonly client: KMSClient,
  ) {
    super(settings.id, settings.adopt);
  }

  /** Lists one key: an answer means KMS is reachable and takes the credentials. */
  static async connect(settings: AwsKmsSettings, outbound: OutboundClient): Promise<AwsKmsKeyProvider> {
    const client = new KMSClient({
      region: settings.region,
      ...(settings.endpoint && { endpoint: settings.endpoint }),
      ...(settings.credentials && { credentials: settings.credentials }),
      requestHandler: outboundHandler(outbound),
      maxAttempts: 2,
    });
    const provider = new AwsKmsKeyProvider(settings, client);
    const where = settings.endpoint ?? `region ${settings.region}`;
    try {
      await client.send(new ListKeysCommand({ Limit: 1 }));
    } catch (err) {
      const name = (err as Error).name;
      if (CREDENTIAL_ERRORS.has(name)) throw new ProviderStartError(`AWS KMS (${where}) refuses the credentials (${name})`, 'config');
      throw new ProviderStartError(`AWS KMS (${where}) is unreachable: ${(err as Error).message}`, 'unavailable');
    }
    return provider;
  }

  protected async ensureKey(name: string, algorithm: SigningAlgorithm): Promise<{ jwk: JWK; ref: string }> {
    const alias = `alias/${name}`;
    let keyArn: string | undefined;
    try {
      keyArn = (await this.client.send(new DescribeKeyCommand({ KeyId: alias }))).KeyMetadata?.Arn;
    } catch (err) {
      if ((err as Error).name !== 'NotFoundException') throw err;
    }
    if (!keyArn) {
      const made = await this.client.send(
        new CreateKeyCommand({
          KeySpec: KEY_SPEC[algorithm],
          KeyUsage: 'SIGN_VERIFY',
          Description: `svc key chain key ${name}`,
        }),
      );
      keyArn = made.KeyMetadata?.Arn;
      if (!keyArn) throw new Error('CreateKey answered without a key ARN');
      await this.client.send(new CreateAliasCommand({ AliasName: alias, TargetKeyId: keyArn }));
    }
    const key = await this.client.send(new GetPublicKeyCommand({ KeyId: keyArn }));
    if (key.KeySpec !== KEY_SPEC[algorithm] || key.KeyUsage !== 'SIGN_VERIFY' || !key.PublicKey) {
      throw new Error(`key ${alias} is ${key.KeySpec} for ${key.KeyUsage}, not ${KEY_SPEC[algorithm]} for SIGN_VERIFY`);
    }
    const jwk = createPublicKey({ key: Buffer.from(key.PublicKey), format: 'der', type: 'spki' }).export({ format: 'jwk' }) as JWK;
    return { jwk, ref: keyArn };
  }

  protected async signRaw(ref: string, algorithm: SigningAlgorithm, data: Uint8Array): Promise<Uint8Array> {
    const signed = await this.client.send(
      new SignCommand({
        KeyId: ref,
        Message: digestOf(algorithm, data),
        MessageType: 'DIGEST',
        SigningAlgorithm: SIGNING_ALGORITHM[algorithm],
      }),
    );
    if (!signed.Signature) throw new Error('Sign answered without a signature');
    return derToRaw(signed.Signature, COORDINATE_BYTES[algorithm]);
  }

  async check(): Promise<void> {
    await this.client.send(new ListKeysCommand({ Limit: 1 }));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

/** The SDK's HTTP handler, made of the outbound client: same address policy, time limit and size cap as every outbound call. */
export function outboundHandler(outbound: OutboundClient) {
  return {
    metadata: { handlerProtocol: 'http/1.1' },
    async handle(request: {
      protocol: string;
      hostname: string;
      port?: number;
      method: string;
      path: string;
      query?: Record<string, string | string[] | null>;
      headers: Record<string, string>;
      body?: string | Uint8Array;
    }) {
      const url = new URL(`${request.protocol}//${request.hostname}${request.port ? `:${request.port}` : ''}${request.path}`);
      for (const [name, value] of Object.entries(request.query ?? {})) {
        for (const one of Array.isArray(value) ? value : [value]) if (one !== null) url.searchParams.append(name, one);
      }
      // Host and Content-Length are the HTTP client's to set (the SDK signs the same values).
      const {
        host: _host,
        'content-length': _length,
        ...headers
      } = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]));
      // The bytes as they are: the SDK's JSON body is a Uint8Array whose valueOf() is a string, which
      // Buffer.from(body) would call (and the SDK warn about).
      const body =
        request.body === undefined || typeof request.body === 'string'
          ? request.body
          : Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength).toString('utf8');
      const reply = await outbound.request(url, { method: request.method as 'POST', headers, body, timeoutMs: TIMEOUT_MS });
      const replyHeaders: Record<string, string> = {};
      for (const [name, value] of Object.entries(reply.headers)) if (value !== undefined) replyHeaders[name] = String(value);
      return { response: { statusCode: reply.status, reason: '', headers: replyHeaders, body: new Uint8Array(reply.body) } };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
    destroy() {},
  };
}
