// A stand-in for a qualified trust service provider's remote signing service (a QTSP cannot run
// here), speaking the Cloud Signature Consortium API v2.0: POST {base}/csc/v2/info (no
// authentication); POST {base}/oauth2/token with grant_type=client_credentials and the client's id
// and secret (form body or HTTP Basic), answering a bearer token; with that token, POST
// credentials/list, credentials/info (key, cert with the chain as base64 DER, authMode/auth.mode),
// credentials/authorize (explicit credentials: a SAD bound to the hashes and their number) and
// signatures/signHash (SHA-256/384 hashes, ecdsa-with-SHA256/384, DER signatures; an explicit
// credential's SAD is used up by it). Errors are {"error", "error_description"} with 400 or 401.
// Each credential's key is a real P-256 key that never leaves the fake, certified by a CA chain of
// the fake's own (root, issuing CA, end entity).
import 'reflect-metadata';
import { KeyObject, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as x509 from '@peculiar/x509';
import { signDigest } from './aws-kms-fake.js';
import { MDOC_DOCUMENT_SIGNER_EKU, type TestCertificate, testCertificate } from './test-pki.js';

const SHA256 = '2.16.840.1.101.3.4.2.1';
const ECDSA_SHA256 = '1.2.840.10045.4.3.2';

export interface CscCredential {
  id: string;
  authMode: 'implicit' | 'explicit' | 'oauth2code';
  leaf: TestCertificate;
  privateKey: KeyObject;
  keyStatus: 'enabled' | 'disabled';
}

export interface CscFake {
  url: string;
  client: { id: string; secret: string };
  /** The fake's CA: its root (self-signed) and the issuing CA that certifies every credential. */
  root: TestCertificate;
  issuingCa: TestCertificate;
  credentials: Map<string, CscCredential>;
  /** "METHOD path" of every request, in order. */
  requests: string[];
  /** SADs given out and not used yet. */
  sads: Map<string, { credentialID: string; hashes: string[] }>;
  /** When set, every request is answered with this status (a QTSP that is down). */
  failWith?: number;
  /** A credential of the fake, its key made now and certified by the issuing CA. */
  addCredential(id: string, authMode?: CscCredential['authMode']): Promise<CscCredential>;
  stop(): Promise<void>;
}

class CscError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

export async function startCscFake(): Promise<CscFake> {
  const root = await testCertificate('CN=Fake QTSP Root CA,O=Fake QTSP,C=DE', { ca: true });
  const issuingCa = await testCertificate('CN=Fake QTSP Issuing CA,O=Fake QTSP,C=DE', { ca: true, issuer: root });
  const tokens = new Set<string>();
  const fake: Omit<CscFake, 'url' | 'stop'> = {
    client: { id: 'svc-client', secret: 'fake-csc-secret-for-tests-only' },
    root,
    issuingCa,
    credentials: new Map(),
    requests: [],
    sads: new Map(),
    async addCredential(id, authMode = 'implicit') {
      const leaf = await testCertificate(`CN=${id},O=Fake QTSP customer,C=DE`, {
        issuer: issuingCa,
        extensions: [
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([MDOC_DOCUMENT_SIGNER_EKU], true),
        ],
      });
      const credential: CscCredential = { id, authMode, leaf, privateKey: KeyObject.from(leaf.keys.privateKey), keyStatus: 'enabled' };
      fake.credentials.set(id, credential);
      return credential;
    },
  };

  const credentialOf = (input: Record<string, unknown>) => {
    const id = typeof input.credentialID === 'string' ? input.credentialID : undefined;
    const credential = id === undefined ? undefined : fake.credentials.get(id);
    if (!credential) throw new CscError(400, 'invalid_request', 'Invalid parameter credentialID');
    return credential;
  };
  const hashesOf = (input: Record<string, unknown>) => {
    const { hashes } = input;
    if (!Array.isArray(hashes) || hashes.length === 0 || hashes.some((hash) => typeof hash !== 'string'))
      throw new CscError(400, 'invalid_request', 'Missing (or invalid type) array parameter hashes');
    if (input.hashAlgorithmOID !== SHA256) throw new CscError(400, 'invalid_request', 'Invalid parameter hashAlgorithmOID');
    for (const hash of hashes as string[])
      if (Buffer.from(hash, 'base64').length !== 32) throw new CscError(400, 'invalid_request', 'Invalid digest value');
    return hashes as string[];
  };

  const methods: Record<string, (input: Record<string, unknown>) => unknown> = {
    'credentials/list': () => ({ credentialIDs: [...fake.credentials.keys()] }),
    'credentials/info': (input) => {
      const credential = credentialOf(input);
      const { certificate } = credential.leaf;
      return {
        description: `credential ${credential.id}`,
        key: { status: credential.keyStatus, algo: ['1.2.840.10045.2.1', ECDSA_SHA256], len: 256, curve: '1.2.840.10045.3.1.7' },
        cert: {
          status: 'valid',
          certificates: [credential.leaf.der, issuingCa.der, root.der],
          issuerDN: certificate.issuer,
          serialNumber: certificate.serialNumber,
          subjectDN: certificate.subject,
          validFrom: certificate.notBefore.toISOString(),
          validTo: certificate.notAfter.toISOString(),
        },
        auth: { mode: credential.authMode },
        authMode: credential.authMode,
        SCAL: credential.authMode === 'explicit' ? '2' : '1',
        multisign: 1,
      };
    },
    'credentials/authorize': (input) => {
      const credential = credentialOf(input);
      if (credential.authMode !== 'explicit') throw new CscError(400, 'invalid_request', 'The credential is not explicitly authorized');
      const hashes = hashesOf(input);
      if (input.numSignatures !== hashes.length) throw new CscError(400, 'invalid_request', 'Numbers of signatures and hashes differ');
      const SAD = randomBytes(24).toString('base64url');
      fake.sads.set(SAD, { credentialID: credential.id, hashes });
      return { SAD };
    },
    'signatures/signHash': (input) => {
      const credential = credentialOf(input);
      const hashes = hashesOf(input);
      if (input.signAlgo !== ECDSA_SHA256) throw new CscError(400, 'invalid_request', 'Invalid parameter signAlgo');
      if (credential.keyStatus !== 'enabled') throw new CscError(400, 'invalid_request', 'The key is disabled');
      if (credential.authMode === 'explicit') {
        // A SAD authorizes exactly its hashes of its credential, once.
        const sad = typeof input.SAD === 'string' ? fake.sads.get(input.SAD) : undefined;
        if (!sad || sad.credentialID !== credential.id || sad.hashes.join() !== hashes.join())
          throw new CscError(400, 'invalid_request', 'Invalid parameter SAD');
        fake.sads.delete(input.SAD as string);
      } else if (credential.authMode === 'oauth2code') {
        throw new CscError(400, 'invalid_request', 'Invalid parameter SAD');
      }
      return { signatures: hashes.map((hash) => signDigest(credential.privateKey, Buffer.from(hash, 'base64')).toString('base64')) };
    },
  };

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    fake.requests.push(`${req.method} ${path}`);
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (fake.failWith) return send(fake.failWith, { error: 'temporarily_unavailable', error_description: 'failing as told' });
    if (req.method !== 'POST') return send(405, { error: 'invalid_request', error_description: 'POST only' });
    try {
      if (path === '/oauth2/token') return send(200, token(req.headers.authorization, text));
      if (path === '/csc/v2/info') return send(200, info());
      const method = path.startsWith('/csc/v2/') ? path.slice('/csc/v2/'.length) : '';
      const handler = Object.hasOwn(methods, method) ? methods[method] : undefined;
      if (!handler) return send(404, { error: 'invalid_request', error_description: `no method ${method}` });
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!bearer || !tokens.has(bearer)) throw new CscError(401, 'invalid_token', 'The access token is not valid');
      let input: unknown;
      try {
        input = JSON.parse(text || '{}');
      } catch {
        throw new CscError(400, 'invalid_request', 'The body is not JSON');
      }
      return send(200, handler(input as Record<string, unknown>));
    } catch (err) {
      if (!(err instanceof CscError)) throw err;
      return send(err.status, { error: err.error, error_description: err.message });
    }
  });

  /** RFC 6749 4.4: client credentials, in the body or as HTTP Basic. */
  function token(authorization: string | undefined, body: string) {
    const form = new URLSearchParams(body);
    if (form.get('grant_type') !== 'client_credentials') throw new CscError(400, 'unsupported_grant_type', 'client_credentials only');
    let id = form.get('client_id');
    let secret = form.get('client_secret');
    const basic = /^Basic (.+)$/.exec(authorization ?? '')?.[1];
    if (basic) [id = null, secret = null] = Buffer.from(basic, 'base64').toString('utf8').split(':');
    if (id !== fake.client.id || secret !== fake.client.secret) throw new CscError(401, 'invalid_client', 'Invalid client credentials');
    const accessToken = randomBytes(24).toString('base64url');
    tokens.add(accessToken);
    return { access_token: accessToken, token_type: 'Bearer', expires_in: 3600 };
  }

  function info() {
    return {
      specs: '2.0.0.0',
      name: 'Fake QTSP',
      logo: `${url}/logo.png`,
      region: 'DE',
      lang: 'en-US',
      description: 'A stand-in for a remote signing service',
      authType: ['oauth2client'],
      oauth2: url,
      methods: ['info', 'oauth2/token', ...Object.keys(methods)],
    };
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(fake, {
    url,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
