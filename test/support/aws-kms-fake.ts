// A stand-in for AWS KMS (which cannot run here), speaking its documented JSON 1.1 protocol: POST /
// with X-Amz-Target TrentService.<Operation>, Content-Type application/x-amz-json-1.1, a SigV4
// Authorization header (its access key id is checked, not the signature), blobs in base64, errors as
// {"__type": ..., "message": ...}. Operations: ListKeys, CreateKey (ECC_NIST_P256, SIGN_VERIFY),
// CreateAlias, DescribeKey (by id, ARN or alias/name), GetPublicKey (DER SubjectPublicKeyInfo) and
// Sign (MessageType RAW or DIGEST, ECDSA_SHA_256, the signature in DER). Keys are real P-256 keys that
// never leave the fake; a digest is signed by ECDSA computed here (node:crypto signs messages only).
// Symmetric keys (CreateKey with KeySpec SYMMETRIC_DEFAULT, KeyUsage ENCRYPT_DECRYPT) serve Encrypt
// (Plaintext) and Decrypt (CiphertextBlob, optional KeyId): the blob names its key, as KMS's does,
// and Decrypt refuses one of another key than KeyId (IncorrectKeyException) or one that does not
// open (InvalidCiphertextException).
import {
  createCipheriv,
  createDecipheriv,
  createECDH,
  createHash,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  randomUUID,
} from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const ACCOUNT = '111122223333';
/** The order of P-256's base point. */
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

interface FakeKey {
  id: string;
  arn: string;
  /** Signing keys. */
  privateKey?: KeyObject;
  publicDer?: Buffer;
  /** Symmetric (ENCRYPT_DECRYPT) keys. */
  secret?: Buffer;
  createdAt: number;
}

export interface AwsKmsFake {
  url: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  keys: Map<string, FakeKey>;
  aliases: Map<string, string>;
  /** The X-Amz-Target of every request, in order. */
  targets: string[];
  /** When set, every operation fails with this error type (HTTP 500: KMSInternalException, 400 otherwise). */
  failWith?: string;
  stop(): Promise<void>;
}

export async function startAwsKmsFake(region = 'eu-central-1'): Promise<AwsKmsFake> {
  const fake: Omit<AwsKmsFake, 'url' | 'stop'> = {
    region,
    credentials: { accessKeyId: 'AKIAFAKEKMS0000000', secretAccessKey: 'fake-secret-key-for-tests-only' },
    keys: new Map(),
    aliases: new Map(),
    targets: [],
  };
  const findKey = (keyId: string) => {
    const id = keyId.startsWith('alias/') ? fake.aliases.get(keyId) : keyId.replace(/^arn:aws:kms:[^:]+:\d+:key\//, '');
    return id === undefined ? undefined : fake.keys.get(id);
  };
  const metadata = (key: FakeKey) => ({
    AWSAccountId: ACCOUNT,
    KeyId: key.id,
    Arn: key.arn,
    CreationDate: key.createdAt,
    Enabled: true,
    KeyState: 'Enabled',
    ...(key.secret
      ? { KeyUsage: 'ENCRYPT_DECRYPT', KeySpec: 'SYMMETRIC_DEFAULT', EncryptionAlgorithms: ['SYMMETRIC_DEFAULT'] }
      : {
          KeyUsage: 'SIGN_VERIFY',
          KeySpec: 'ECC_NIST_P256',
          CustomerMasterKeySpec: 'ECC_NIST_P256',
          SigningAlgorithms: ['ECDSA_SHA_256'],
        }),
    KeyManager: 'CUSTOMER',
    Origin: 'AWS_KMS',
  });
  const operations: Record<string, (input: Record<string, any>) => unknown> = {
    ListKeys: () => ({ Keys: [...fake.keys.values()].map((key) => ({ KeyId: key.id, KeyArn: key.arn })), Truncated: false }),
    CreateKey: (input) => {
      if ((input.KeySpec ?? 'SYMMETRIC_DEFAULT') === 'SYMMETRIC_DEFAULT' && (input.KeyUsage ?? 'ENCRYPT_DECRYPT') === 'ENCRYPT_DECRYPT') {
        const id = randomUUID();
        const key = { id, arn: `arn:aws:kms:${region}:${ACCOUNT}:key/${id}`, secret: randomBytes(32), createdAt: Date.now() / 1000 };
        fake.keys.set(id, key);
        return { KeyMetadata: metadata(key) };
      }
      if (input.KeySpec !== 'ECC_NIST_P256' || input.KeyUsage !== 'SIGN_VERIFY')
        throw error('UnsupportedOperationException', 'this fake makes P-256 signing keys');
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const id = randomUUID();
      const key = {
        id,
        arn: `arn:aws:kms:${region}:${ACCOUNT}:key/${id}`,
        privateKey,
        publicDer: publicKey.export({ format: 'der', type: 'spki' }),
        createdAt: Date.now() / 1000,
      };
      fake.keys.set(id, key);
      return { KeyMetadata: metadata(key) };
    },
    CreateAlias: (input) => {
      // KMS's alias pattern: alias/ then letters, digits, / _ and -, at most 256 characters in all.
      if (!/^alias\/[a-zA-Z0-9/_-]+$/.test(input.AliasName) || input.AliasName.length > 256)
        throw error('ValidationException', `Alias ${input.AliasName} is not a valid alias name`);
      const key = findKey(input.TargetKeyId);
      if (!key) throw error('NotFoundException', `Key '${input.TargetKeyId}' does not exist`);
      if (fake.aliases.has(input.AliasName))
        throw error('AlreadyExistsException', `An alias with the name ${input.AliasName} already exists`);
      fake.aliases.set(input.AliasName, key.id);
      return {};
    },
    DescribeKey: (input) => {
      const key = findKey(input.KeyId);
      if (!key) throw error('NotFoundException', `Alias ${input.KeyId} is not found.`);
      return { KeyMetadata: metadata(key) };
    },
    Encrypt: (input) => {
      const key = findKey(input.KeyId);
      if (!key) throw error('NotFoundException', `Key '${input.KeyId}' does not exist`);
      if (!key.secret) throw error('InvalidKeyUsageException', `${key.arn} key usage is SIGN_VERIFY which is not valid for Encrypt.`);
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key.secret, iv);
      const sealed = Buffer.concat([cipher.update(Buffer.from(input.Plaintext, 'base64')), cipher.final(), cipher.getAuthTag()]);
      // The blob starts with the key's id (36 characters), so Decrypt finds the key without KeyId.
      const blob = Buffer.concat([Buffer.from(key.id, 'utf8'), iv, sealed]);
      return { KeyId: key.arn, CiphertextBlob: blob.toString('base64'), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
    },
    Decrypt: (input) => {
      const blob = Buffer.from(input.CiphertextBlob ?? '', 'base64');
      const named = fake.keys.get(blob.subarray(0, 36).toString('utf8'));
      if (!named?.secret || blob.length < 36 + 12 + 16) throw error('InvalidCiphertextException', '');
      if (input.KeyId !== undefined && findKey(input.KeyId)?.id !== named.id) {
        throw error('IncorrectKeyException', 'The key ID in the request does not identify a CMK that can perform this operation.');
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', named.secret, blob.subarray(36, 48));
        decipher.setAuthTag(blob.subarray(blob.length - 16));
        const plaintext = Buffer.concat([decipher.update(blob.subarray(48, blob.length - 16)), decipher.final()]);
        return { KeyId: named.arn, Plaintext: plaintext.toString('base64'), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
      } catch {
        throw error('InvalidCiphertextException', '');
      }
    },
    GetPublicKey: (input) => {
      const key = findKey(input.KeyId);
      if (!key?.publicDer) throw error('NotFoundException', `Key '${input.KeyId}' does not exist`);
      return {
        KeyId: key.arn,
        PublicKey: key.publicDer.toString('base64'),
        KeySpec: 'ECC_NIST_P256',
        KeyUsage: 'SIGN_VERIFY',
        SigningAlgorithms: ['ECDSA_SHA_256'],
      };
    },
    Sign: (input) => {
      const key = findKey(input.KeyId);
      if (!key?.privateKey) throw error('NotFoundException', `Key '${input.KeyId}' does not exist`);
      if (input.SigningAlgorithm !== 'ECDSA_SHA_256') throw error('InvalidKeyUsageException', 'this fake signs ECDSA_SHA_256');
      const message = Buffer.from(input.Message, 'base64');
      const digest = input.MessageType === 'DIGEST' ? message : createHash('sha256').update(message).digest();
      if (digest.length !== 32) throw error('ValidationException', 'the digest of ECDSA_SHA_256 is 32 bytes');
      return { KeyId: key.arn, Signature: signDigest(key.privateKey, digest).toString('base64'), SigningAlgorithm: 'ECDSA_SHA_256' };
    },
  };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = String(req.headers['x-amz-target'] ?? '');
    fake.targets.push(target);
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(body));
    const credential = /^AWS4-HMAC-SHA256 Credential=([^/]+)\//.exec(String(req.headers.authorization ?? ''))?.[1];
    if (credential !== fake.credentials.accessKeyId) {
      return send(400, { __type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' });
    }
    const operation =
      req.method === 'POST' && target.startsWith('TrentService.') ? operations[target.slice('TrentService.'.length)] : undefined;
    if (!operation) return send(400, { __type: 'UnknownOperationException' });
    if (fake.failWith)
      return send(fake.failWith === 'KMSInternalException' ? 500 : 400, { __type: fake.failWith, message: 'failing as told' });
    try {
      return send(200, operation(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}')));
    } catch (err) {
      const { type, message } = err as { type: string; message: string };
      return send(400, { __type: type, message });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

const error = (type: string, message: string) => Object.assign(new Error(message), { type });

const toBigInt = (bytes: Uint8Array) => BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
const toBytes = (value: bigint, size: number) => Buffer.from(value.toString(16).padStart(size * 2, '0'), 'hex');

function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let b = base % modulus;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
  }
  return result;
}

/** ECDSA over a P-256 digest (SEC 1, 4.1.3): r = x(kG) mod n, s = k⁻¹(z + r·d) mod n; DER as KMS answers. */
export function signDigest(privateKey: KeyObject, digest: Buffer): Buffer {
  const d = toBigInt(Buffer.from(privateKey.export({ format: 'jwk' }).d as string, 'base64url'));
  const z = toBigInt(digest);
  for (;;) {
    const k = (toBigInt(randomBytes(40)) % (N - 1n)) + 1n;
    const point = createECDH('prime256v1');
    point.setPrivateKey(toBytes(k, 32));
    const r = toBigInt(point.getPublicKey().subarray(1, 33)) % N;
    const s = (modPow(k, N - 2n, N) * ((z + r * d) % N)) % N;
    if (r !== 0n && s !== 0n) return derSignature(r, s);
  }
}

function derSignature(r: bigint, s: bigint): Buffer {
  const integer = (value: bigint) => {
    let bytes = toBytes(value, 32);
    while (bytes.length > 1 && bytes[0] === 0 && (bytes[1] as number) < 0x80) bytes = bytes.subarray(1);
    if ((bytes[0] as number) >= 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
    return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
  };
  const body = Buffer.concat([integer(r), integer(s)]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}
