// An OpenID Federation on loopback for tests: entities (trust anchors, intermediates, a credential
// issuer) under one HTTP server, each with its own ES256 key, serving real signed entity
// configurations at {entityId}/.well-known/openid-federation and subordinate statements at its
// federation_fetch_endpoint ({entityId}/fetch?sub=...), as OpenID Federation 1.0 defines them. Tests
// change what an entity says (its hints, a statement's expiry, the key it signs with) to break a chain,
// or how long it takes to answer.
import { createHash, createPrivateKey, createSign, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';

export interface TestKey {
  publicJwk: JWK;
  privateJwk: JWK;
}

export async function testKey(kid: string): Promise<TestKey> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const { kty, crv, x, y, d } = await exportJWK(privateKey);
  return { publicJwk: { kty, crv, x, y, kid, alg: 'ES256', use: 'sig' }, privateJwk: { kty, crv, x, y, d, kid } };
}

/** What a superior says about one subordinate. */
export interface Subordinate {
  /** The subordinate's keys as the superior vouches for them. */
  jwks: { keys: JWK[] };
  metadata?: Record<string, unknown>;
  metadata_policy?: Record<string, unknown>;
  metadata_policy_crit?: string[];
  constraints?: { max_path_length?: number };
  /** Seconds from now; negative: expired. */
  expiresIn?: number;
}

export class TestEntity {
  authorityHints: string[] = [];
  metadata: Record<string, Record<string, unknown>> = {};
  readonly subordinates = new Map<string, Subordinate>();
  /** Whether it has had subordinates: then it publishes a federation_fetch_endpoint. */
  private superior = false;
  /** Signs its entity configuration with this key instead of its own (a key not in its jwks). */
  signConfigurationWith?: TestKey;
  /** Seconds from now its entity configuration expires. */
  configurationExpiresIn = 3600;
  /** Milliseconds the server waits before it answers any request for this entity (a slow superior). */
  answerDelayMs = 0;

  constructor(
    readonly id: string,
    readonly key: TestKey,
  ) {}

  get jwks() {
    return { keys: [this.key.publicJwk] };
  }

  get fetchEndpoint() {
    return `${this.id}/fetch`;
  }

  /** Registers `entity` below this one, vouching for its keys. */
  subordinate(entity: { id: string; jwks: { keys: JWK[] } }, statement: Partial<Subordinate> = {}) {
    this.superior = true;
    this.subordinates.set(entity.id, { jwks: entity.jwks, ...statement });
  }

  entityConfiguration() {
    return sign(this.signConfigurationWith ?? this.key, {
      iss: this.id,
      sub: this.id,
      exp: now() + this.configurationExpiresIn,
      jwks: this.jwks,
      ...(this.authorityHints.length && { authority_hints: this.authorityHints }),
      metadata: {
        ...this.metadata,
        ...(this.superior && { federation_entity: { federation_fetch_endpoint: this.fetchEndpoint } }),
      },
    });
  }

  subordinateStatement(sub: string) {
    const found = this.subordinates.get(sub);
    if (!found) return undefined;
    const { expiresIn = 3600, ...claims } = found;
    return sign(this.key, { iss: this.id, sub, exp: now() + expiresIn, ...claims });
  }
}

const now = () => Math.floor(Date.now() / 1000);

async function sign(key: TestKey, claims: Record<string, unknown>) {
  return new SignJWT({ iat: now() - 5, ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'entity-statement+jwt', kid: key.privateJwk.kid as string })
    .sign(await importJWK(key.privateJwk, 'ES256'));
}

export interface TestFederation {
  url: string;
  /** Every request the server answered, for asserting what a resolver read. */
  requests: string[];
  entity(name: string): Promise<TestEntity>;
  stop(): Promise<void>;
}

/** The federation's server: entity `name` has the identifier {url}/{name}. */
export async function startFederation(): Promise<TestFederation> {
  const entities = new Map<string, TestEntity>();
  const requests: string[] = [];
  const server: Server = createServer(async (req, res) => {
    requests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://localhost');
    const [, name, ...rest] = url.pathname.split('/');
    const entity = entities.get(name ?? '');
    const path = rest.join('/');
    if (entity?.answerDelayMs) await new Promise((resolve) => setTimeout(resolve, entity.answerDelayMs));
    let statement: string | undefined;
    if (entity && path === '.well-known/openid-federation') statement = await entity.entityConfiguration();
    else if (entity && path === 'fetch') statement = await entity.subordinateStatement(url.searchParams.get('sub') ?? '');
    if (!statement) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/entity-statement+jwt' }).end(statement);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    async entity(name) {
      const entity = new TestEntity(`${url}/${name}`, await testKey(`${name}-federation-key`));
      entities.set(name, entity);
      return entity;
    },
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** An SD-JWT VC a foreign issuer signs with `key` (kid in the header, no x5c), bound to `holder`. */
export async function foreignSdJwtVc(issuer: string, key: TestKey, holder: JWK, claims: Record<string, unknown>, vct: string) {
  const signingKey = createPrivateKey({ key: key.privateJwk as import('node:crypto').JsonWebKey, format: 'jwk' });
  const sdjwt = new SDJwtVcInstance({
    signer: async (data: string) =>
      createSign('SHA256').update(data).sign({ key: signingKey, dsaEncoding: 'ieee-p1363' }).toString('base64url'),
    signAlg: 'ES256',
    hasher: (data: string | ArrayBuffer) =>
      createHash('sha256')
        .update(typeof data === 'string' ? data : Buffer.from(data))
        .digest(),
    hashAlg: 'sha-256',
    saltGenerator: () => randomBytes(16).toString('base64url'),
  });
  const { d: _d, ...holderPublic } = holder;
  const payload = { ...claims, iss: issuer, iat: now(), vct, cnf: { jwk: holderPublic } };
  const frame = { _sd: Object.keys(claims) };
  return sdjwt.issue(payload as never, frame as never, { header: { typ: 'dc+sd-jwt', kid: key.privateJwk.kid as string } });
}
