// Keys a qualified trust service provider (QTSP) holds, used through the Cloud Signature Consortium
// API v2.0 (remote signing). svc makes no keys there: a key chain names an existing credential
// (credentialID), whose public key and certificate chain svc reads once (credentials/info) and
// whose certificates are the QTSP's, not ones svc makes. svc hashes; the QTSP signs the hash
// (signatures/signHash) and answers DER, which becomes r || s. svc authenticates as an OAuth 2.0
// client (client credentials); a credential whose signatures need a fresh authorization
// (authMode explicit) gets a SAD for each signature from credentials/authorize. A credential that
// needs a person to authorize (oauth2code) cannot sign unattended and is refused. Every call goes
// through the operator's outbound client.
import { X509Certificate } from 'node:crypto';
import type { JWK } from 'jose';
import { z } from 'zod';
import type { SigningAlgorithm } from '../../../platform/crypto/algorithms.js';
import { derToP1363 } from '../../../platform/crypto/ecdsa-signatures.js';
import { invalidFields } from '../../../platform/http/problem.js';
import { jsonObjectOf, type OutboundClient, type OutboundResponse, readAnswer } from '../../../platform/outbound/client.js';
import { COORDINATE_BYTES, digestOf, ExternalKeyProvider } from '../external.js';
import type { Adoptions } from '../key-names.js';
import type { ProviderCapabilities } from '../key-provider.js';
import { ProviderStartError } from '../start-error.js';

export interface CscSettings {
  id: string;
  adopt: Adoptions;
  url: string;
  clientId: string;
  clientSecret: string;
  scope: string;
}

/** The hash (NIST OIDs) and the ECDSA signature algorithm (RFC 5758) of each JWS algorithm. */
const HASH_OID: Record<SigningAlgorithm, string> = {
  ES256: '2.16.840.1.101.3.4.2.1',
  ES384: '2.16.840.1.101.3.4.2.2',
  ES512: '2.16.840.1.101.3.4.2.3',
};
const SIGN_ALGO: Record<SigningAlgorithm, string> = {
  ES256: '1.2.840.10045.4.3.2',
  ES384: '1.2.840.10045.4.3.3',
  ES512: '1.2.840.10045.4.3.4',
};
/** The authorization modes svc can use unattended: none needed, or a SAD it asks for with its own token. */
const UNATTENDED = new Set(['implicit', 'explicit']);
const TIMEOUT_MS = 10_000;
/** A token is renewed this long before the QTSP says it expires. */
const TOKEN_MARGIN_MS = 30_000;

const Info = z.object({ methods: z.array(z.string()).optional(), oauth2: z.string().optional() });
const Token = z.object({ access_token: z.string().min(1), expires_in: z.number().positive().optional() });
const CredentialInfo = z.object({
  key: z.object({ status: z.string() }),
  cert: z.object({ status: z.string().optional(), certificates: z.array(z.string().min(1)).min(1) }),
  /** CSC v2.0.0.2 says auth.mode; earlier drafts authMode. */
  auth: z.object({ mode: z.string() }).optional(),
  authMode: z.string().optional(),
});
const Authorized = z.object({ SAD: z.string().min(1) });
const Signed = z.object({ signatures: z.array(z.string().min(1)).length(1) });

/** The certificates CSC gives (base64 DER, leaf first) as a PEM chain. */
const pemOf = (certificates: string[]) =>
  certificates.map((der) => new X509Certificate(Buffer.from(der, 'base64')).toString().trim()).join('\n');

export class CscKeyProvider extends ExternalKeyProvider {
  readonly type = 'csc';
  /** No key is made: a chain names a credential the QTSP already holds. */
  readonly capabilities: ProviderCapabilities = { generate: false, import: false, algorithms: ['ES256', 'ES384', 'ES512'], decrypt: false };
  override readonly issuesCertificates = true;
  private readonly api: string;
  private tokenEndpoint: string;
  /** The bearer token, shared by concurrent calls while one is fetched. */
  private token?: Promise<{ value: string; until: number }>;

  private constructor(
    private readonly settings: CscSettings,
    private readonly outbound: OutboundClient,
  ) {
    super(settings.id, settings.adopt);
    const base = settings.url.replace(/\/+$/, '');
    this.api = `${base}/csc/v2/`;
    this.tokenEndpoint = `${base}/oauth2/token`;
  }

  /** Asks info (where the token endpoint is, that signHash is offered) and a token: the QTSP answers and takes the client. */
  static async connect(settings: CscSettings, outbound: OutboundClient): Promise<CscKeyProvider> {
    const provider = new CscKeyProvider(settings, outbound);
    const where = `CSC service at ${settings.url}`;
    let reply: OutboundResponse;
    try {
      reply = await provider.post('info', {}, false);
    } catch (err) {
      throw new ProviderStartError(`${where} is unreachable: ${(err as Error).message}`, 'unavailable');
    }
    const info = reply.ok ? readAnswer(Info, jsonObjectOf(reply)) : undefined;
    if (!info || 'wrong' in info)
      throw new ProviderStartError(`${where} answered info with ${reply.status}${cscError(reply)}`, 'unavailable');
    if (info.value.methods && !info.value.methods.includes('signatures/signHash'))
      throw new ProviderStartError(`${where} does not offer signatures/signHash`, 'config');
    if (info.value.oauth2) provider.tokenEndpoint = `${info.value.oauth2.replace(/\/+$/, '')}/oauth2/token`;
    try {
      await provider.bearer();
    } catch (err) {
      if (err instanceof ClientRefused) throw new ProviderStartError(`${where} refuses the client credentials (${err.message})`, 'config');
      throw new ProviderStartError(`${where}: no token (${(err as Error).message})`, 'unavailable');
    }
    return provider;
  }

  /** A bearer token by the client credentials grant, reused until shortly before it expires. */
  private async bearer(): Promise<string> {
    const current = this.token && (await this.token.catch(() => undefined));
    if (current && current.until > Date.now()) return current.value;
    this.token = this.fetchToken();
    this.token.catch(() => {
      this.token = undefined;
    });
    return (await this.token).value;
  }

  private async fetchToken() {
    const reply = await this.outbound.request(new URL(this.tokenEndpoint), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: this.settings.clientId,
        client_secret: this.settings.clientSecret,
        scope: this.settings.scope,
      }).toString(),
      timeoutMs: TIMEOUT_MS,
    });
    if (reply.status === 400 || reply.status === 401) throw new ClientRefused(`${reply.status}${cscError(reply)}`);
    if (!reply.ok) throw new Error(`the token endpoint answered ${reply.status}${cscError(reply)}`);
    const read = readAnswer(Token, jsonObjectOf(reply));
    if ('wrong' in read) throw new Error(`the token endpoint's answer is not a token (${read.wrong})`);
    // An in-process cache's age: the system clock (see src/platform/ttl-cache.ts).
    return { value: read.value.access_token, until: Date.now() + (read.value.expires_in ?? 300) * 1000 - TOKEN_MARGIN_MS };
  }

  /** POST {url}/csc/v2/<method> with JSON; with the bearer token unless `authorized` is false, fetched anew once if it was refused. */
  private async post(method: string, body: unknown, authorized = true): Promise<OutboundResponse> {
    const send = async () =>
      this.outbound.request(new URL(method, this.api), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorized && { authorization: `Bearer ${await this.bearer()}` }) },
        body: JSON.stringify(body),
        timeoutMs: TIMEOUT_MS,
      });
    const reply = await send();
    if (reply.status !== 401 || !authorized) return reply;
    this.token = undefined;
    return send();
  }

  /** The JSON answer of `method`, read by `schema`; a failure or an unreadable answer throws, naming the method. */
  private async answer<T>(method: string, body: unknown, schema: z.ZodType<T>): Promise<T> {
    const reply = await this.post(method, body);
    if (!reply.ok) throw new Error(`${method} answered ${reply.status}${cscError(reply)}`);
    const read = readAnswer(schema, jsonObjectOf(reply));
    if ('wrong' in read) throw new Error(`${method}'s answer does not read (${read.wrong})`);
    return read.value;
  }

  /**
   * The credential `name`: its certificate chain (the QTSP's) and the public key of its leaf. The
   * reference keeps its authorization mode beside its id (explicit:<credentialID>), so signing knows
   * whether to ask for a SAD first without asking credentials/info again.
   */
  protected async ensureKey(name: string): Promise<{ jwk: JWK; ref: string; certificateChain: string }> {
    const reply = await this.post('credentials/info', { credentialID: name, certificates: 'chain', certInfo: true, authInfo: true });
    // CSC answers an unknown credentialID with 400 invalid_request: the request's fault, not an outage.
    if (reply.status === 400) throw refused(`key provider '${this.name}' has no credential '${name}' for this tenant`);
    if (!reply.ok) throw new Error(`credentials/info answered ${reply.status}${cscError(reply)}`);
    const read = readAnswer(CredentialInfo, jsonObjectOf(reply));
    if ('wrong' in read) throw new Error(`credentials/info's answer does not read (${read.wrong})`);
    const credential = read.value;
    const mode = credential.auth?.mode ?? credential.authMode ?? 'implicit';
    if (!UNATTENDED.has(mode))
      throw refused(
        `credential '${name}' of key provider '${this.name}' authorizes signatures by ${mode} (a person in the loop); svc signs unattended and takes implicit or explicit credentials only`,
      );
    if (credential.key.status !== 'enabled')
      throw refused(`credential '${name}' of key provider '${this.name}' has a ${credential.key.status} key`);
    if (credential.cert.status !== undefined && credential.cert.status !== 'valid')
      throw refused(`credential '${name}' of key provider '${this.name}' has a ${credential.cert.status} certificate`);
    let certificateChain: string;
    try {
      certificateChain = pemOf(credential.cert.certificates);
    } catch {
      throw new Error(`credentials/info gave certificates of credential '${name}' that do not read`);
    }
    const leaf = new X509Certificate(Buffer.from(credential.cert.certificates[0] as string, 'base64'));
    const jwk = leaf.publicKey.export({ format: 'jwk' }) as JWK;
    return { jwk, ref: `${mode}:${name}`, certificateChain };
  }

  protected async signRaw(ref: string, algorithm: SigningAlgorithm, data: Uint8Array): Promise<Uint8Array> {
    const separator = ref.indexOf(':');
    const mode = ref.slice(0, separator);
    const credentialID = ref.slice(separator + 1);
    const hashes = [digestOf(algorithm, data).toString('base64')];
    const hashAlgorithmOID = HASH_OID[algorithm];
    // explicit: the QTSP wants a Signature Activation Data for exactly this hash, used once.
    const SAD =
      mode === 'explicit'
        ? (await this.answer('credentials/authorize', { credentialID, numSignatures: 1, hashes, hashAlgorithmOID }, Authorized)).SAD
        : undefined;
    const signed = await this.answer(
      'signatures/signHash',
      { credentialID, ...(SAD && { SAD }), hashes, hashAlgorithmOID, signAlgo: SIGN_ALGO[algorithm] },
      Signed,
    );
    return derToP1363(Buffer.from(signed.signatures[0] as string, 'base64'), COORDINATE_BYTES[algorithm]);
  }

  /** The QTSP answers info and gives a token. */
  async check(): Promise<void> {
    const reply = await this.post('info', {}, false);
    if (!reply.ok) throw new Error(`info answered ${reply.status}${cscError(reply)}`);
    await this.bearer();
  }

  async close(): Promise<void> {}
}

/** The token endpoint refused svc's client: a configuration to fix. */
class ClientRefused extends Error {}

/** A credential that cannot back a key chain: a 400 naming externalKeyId. */
const refused = (message: string) => invalidFields([{ field: 'body.externalKeyId', message }]);

/** The QTSP's own words for a failure ({"error", "error_description"}), shortened, for the log. */
function cscError(reply: OutboundResponse): string {
  const body = jsonObjectOf(reply);
  const error = body && Object.hasOwn(body, 'error') ? String(body.error) : '';
  const description = body && Object.hasOwn(body, 'error_description') ? String(body.error_description) : '';
  const words = [error, description].filter(Boolean).join(': ');
  return words ? `: ${words.slice(0, 200)}` : '';
}
