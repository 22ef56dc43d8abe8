// Keys in a PKCS#11 token (an HSM, or SoftHSM2): found by their label (CKA_LABEL = the key's
// reference), generated there when missing, never extractable. The application logs in once, at
// start: PKCS#11 login state is shared by all the application's sessions, and signatures run on a
// small pool of sessions (a session carries one operation at a time), each taken for one signature.
import type { JWK } from 'jose';
import { ALGORITHM_PARAMS, SIGNING_ALGORITHMS, type SigningAlgorithm } from '../../../platform/crypto/algorithms.js';
import { COORDINATE_BYTES, digestOf, ExternalKeyProvider } from '../external.js';
import type { Adoptions } from '../key-names.js';
import type { ProviderCapabilities } from '../key-provider.js';
import { ProviderStartError } from '../start-error.js';
import { CKA, CKK_EC, CKO, CKR, Cryptoki, CryptokiError, type Template } from './cryptoki.js';

export interface Pkcs11Settings {
  id: string;
  adopt: Adoptions;
  module: string;
  tokenLabel: string;
  pin: string;
  /** Sessions for concurrent signatures (default 4). */
  sessions?: number;
}

/** DER of each curve's OID (CKA_EC_PARAMS). */
const EC_PARAMS: Record<SigningAlgorithm, Buffer> = {
  ES256: Buffer.from('06082a8648ce3d030107', 'hex'),
  ES384: Buffer.from('06052b81040022', 'hex'),
  ES512: Buffer.from('06052b81040023', 'hex'),
};

/**
 * Return values after which the application's sessions or login may be gone: the token or device
 * removed or failing, the session closed, the login lost. SoftHSM2 answers a removed token with
 * CKR_GENERAL_ERROR. Reconnecting costs a login, and only after such a failure.
 */
const TOKEN_LOST = new Set<number>([
  CKR.SLOT_ID_INVALID,
  CKR.GENERAL_ERROR,
  CKR.DEVICE_ERROR,
  CKR.DEVICE_REMOVED,
  CKR.SESSION_CLOSED,
  CKR.SESSION_HANDLE_INVALID,
  CKR.TOKEN_NOT_PRESENT,
  CKR.TOKEN_NOT_RECOGNIZED,
  CKR.USER_NOT_LOGGED_IN,
]);

export class Pkcs11KeyProvider extends ExternalKeyProvider {
  readonly type = 'pkcs11';
  readonly capabilities: ProviderCapabilities = { generate: true, import: false, algorithms: [...SIGNING_ALGORITHMS], decrypt: false };
  private readonly idle: number[] = [];
  private readonly waiting: { resolve: (session: number) => void; reject: (err: unknown) => void }[] = [];
  private sessionCount = 0;
  /** The token or the login was lost: the next operation reconnects first. */
  private lost = false;
  /** Private key handles by label (handles of token objects stay valid while the application is logged in). */
  private readonly handles = new Map<string, number>();
  /** The module's generation the sessions were opened in: another provider on the module may reinitialise it. */
  private generation: number;

  private constructor(
    private readonly cryptoki: Cryptoki,
    private slot: number,
    private readonly settings: Pkcs11Settings,
    firstSession: number,
  ) {
    super(settings.id, settings.adopt);
    this.generation = cryptoki.generation;
    this.idle.push(firstSession);
    this.sessionCount = 1;
  }

  /** Loads the module, finds the token and logs in; throws a ProviderStartError that says which failed. */
  static connect(settings: Pkcs11Settings): Pkcs11KeyProvider {
    let cryptoki: Cryptoki;
    try {
      cryptoki = Cryptoki.open(settings.module);
    } catch (err) {
      throw new ProviderStartError(`cannot load the PKCS#11 module ${settings.module}: ${(err as Error).message}`, 'config');
    }
    let slot: number | undefined;
    try {
      slot = cryptoki.findSlot(settings.tokenLabel);
    } catch (err) {
      cryptoki.close();
      throw new ProviderStartError(`cannot list the tokens: ${(err as Error).message}`, 'unavailable');
    }
    if (slot === undefined) {
      cryptoki.close();
      throw new ProviderStartError(`no token labelled '${settings.tokenLabel}' is present`, 'unavailable');
    }
    const session = cryptoki.openSession(slot);
    try {
      cryptoki.login(session, settings.pin);
    } catch (err) {
      cryptoki.closeSession(session);
      cryptoki.close();
      const wrongPin = err instanceof CryptokiError && (err.code === CKR.PIN_INCORRECT || err.code === CKR.PIN_LOCKED);
      throw new ProviderStartError(
        wrongPin ? `the PIN of token '${settings.tokenLabel}' is wrong (${err.message})` : `cannot log in: ${(err as Error).message}`,
        wrongPin ? 'config' : 'unavailable',
      );
    }
    return new Pkcs11KeyProvider(cryptoki, slot, settings, session);
  }

  /**
   * After the token was lost (removed, reset, the HSM failed over), or the module was reinitialised
   * for another provider, the next operation finds the token again by its label and logs in anew:
   * sessions and key handles of before are void.
   */
  private reconnect() {
    this.lost = true; // until it succeeds
    // Handles of an earlier generation are not closed: the module may have given their numbers to new sessions.
    const stale = this.generation !== this.cryptoki.generation;
    for (const session of this.idle.splice(0)) {
      if (!stale) this.cryptoki.closeSession(session);
      this.sessionCount--;
    }
    this.handles.clear();
    let slot = this.cryptoki.findSlot(this.settings.tokenLabel);
    if (slot === undefined && this.cryptoki.reinitialize()) slot = this.cryptoki.findSlot(this.settings.tokenLabel);
    this.generation = this.cryptoki.generation;
    if (slot === undefined) throw new Error(`no token labelled '${this.settings.tokenLabel}' is present`);
    const session = this.cryptoki.openSession(slot);
    try {
      this.cryptoki.login(session, this.settings.pin);
    } catch (err) {
      this.cryptoki.closeSession(session);
      throw err;
    }
    this.slot = slot;
    this.idle.push(session);
    this.sessionCount++;
    this.lost = false;
  }

  /**
   * A session of the pool: an idle one, a new one while under the limit, else the next one released.
   * The module counts it as in use until it is released (a waiter is handed it still in use).
   */
  private async acquire(): Promise<number> {
    if (this.lost || this.generation !== this.cryptoki.generation) this.reconnect();
    const idle = this.idle.pop();
    if (idle !== undefined) {
      this.cryptoki.sessionTaken();
      return idle;
    }
    if (this.sessionCount < (this.settings.sessions ?? 4)) {
      this.sessionCount++;
      try {
        const session = this.cryptoki.openSession(this.slot);
        this.cryptoki.sessionTaken();
        return session;
      } catch (err) {
        this.sessionCount--;
        throw err;
      }
    }
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  private release(session: number, broken = false) {
    if (broken) {
      this.cryptoki.sessionReturned();
      this.cryptoki.closeSession(session);
      this.sessionCount--;
      // One waiting for a session gets a new one (or the reason there is none) instead of waiting on.
      const next = this.waiting.shift();
      if (next) this.acquire().then(next.resolve, next.reject);
      return;
    }
    const next = this.waiting.shift();
    if (next) return next.resolve(session);
    this.cryptoki.sessionReturned();
    this.idle.push(session);
  }

  private async withSession<T>(work: (session: number) => T | Promise<T>): Promise<T> {
    const session = await this.acquire();
    try {
      const result = await work(session);
      this.release(session);
      return result;
    } catch (err) {
      // A session the token no longer knows is dropped; a token lost is found again by the next operation.
      const lost = err instanceof CryptokiError && TOKEN_LOST.has(err.code);
      if (lost) this.lost = true;
      this.release(session, lost);
      throw err;
    }
  }

  private findKey(session: number, label: string, kind: number): number | undefined {
    const found = this.cryptoki.findObjects(session, [
      [CKA.CLASS, kind],
      [CKA.LABEL, label],
    ]);
    if (found.length > 1) throw new Error(`${found.length} keys of the token are labelled '${label}'`);
    return found[0];
  }

  protected ensureKey(ref: string, algorithm: SigningAlgorithm): Promise<{ jwk: JWK; ref: string }> {
    return this.withSession((session) => {
      let publicKey = this.findKey(session, ref, CKO.PUBLIC_KEY);
      const privateKey = this.findKey(session, ref, CKO.PRIVATE_KEY);
      if (privateKey !== undefined && publicKey === undefined) {
        throw new Error(`key '${ref}' has no public key object in the token (svc reads the public key from it)`);
      }
      if (privateKey === undefined) {
        if (publicKey !== undefined) throw new Error(`the token has a public key labelled '${ref}' without its private key`);
        publicKey = this.cryptoki.generateKeyPair(session, publicTemplate(ref, algorithm), privateTemplate(ref)).publicKey;
      }
      if (publicKey === undefined) throw new Error(`the token has no public key labelled '${ref}'`);
      return { jwk: this.publicJwkOf(session, publicKey), ref };
    });
  }

  private publicJwkOf(session: number, publicKey: number): JWK {
    const [params, point] = this.cryptoki.attributes(session, publicKey, [CKA.EC_PARAMS, CKA.EC_POINT]);
    const algorithm = SIGNING_ALGORITHMS.find((alg) => params && EC_PARAMS[alg].equals(params));
    if (!algorithm || !point) throw new Error('the key is not an EC key on P-256, P-384 or P-521');
    const size = COORDINATE_BYTES[algorithm];
    // CKA_EC_POINT is the DER OCTET STRING of the uncompressed point; a few modules give the point bare.
    const raw = point.length === 2 * size + 1 ? point : point.subarray(point.length - (2 * size + 1));
    if (raw[0] !== 4) throw new Error('the public key is not an uncompressed EC point');
    return {
      kty: 'EC',
      crv: ALGORITHM_PARAMS[algorithm].curve,
      x: raw.subarray(1, 1 + size).toString('base64url'),
      y: raw.subarray(1 + size).toString('base64url'),
    };
  }

  private privateHandle(session: number, ref: string): number {
    let handle = this.handles.get(ref);
    if (handle === undefined) {
      handle = this.findKey(session, ref, CKO.PRIVATE_KEY);
      if (handle === undefined) throw new Error(`the token has no private key labelled '${ref}'`);
      this.handles.set(ref, handle);
    }
    return handle;
  }

  protected signRaw(ref: string, algorithm: SigningAlgorithm, data: Uint8Array): Promise<Uint8Array> {
    return this.withSession(async (session) => {
      try {
        return await this.cryptoki.signDigest(
          session,
          this.privateHandle(session, ref),
          digestOf(algorithm, data),
          2 * COORDINATE_BYTES[algorithm],
        );
      } catch (err) {
        this.handles.delete(ref); // a handle the token no longer knows is looked up again next time
        throw err;
      }
    });
  }

  /** The token is present and the session logged in: a signature would be made. */
  async check(): Promise<void> {
    await this.withSession((session) => {
      this.cryptoki.checkSession(session);
      this.cryptoki.tokenLabel(this.slot);
    });
  }

  /** Key attributes as the token reports them (for operators' checks and tests): booleans by attribute name. */
  async keyAttributes(ref: string): Promise<Record<'token' | 'sensitive' | 'extractable' | 'private' | 'sign', boolean | undefined>> {
    return this.withSession((session) => {
      const [token, sensitive, extractable, isPrivate, sign] = this.cryptoki
        .attributes(session, this.privateHandle(session, ref), [CKA.TOKEN, CKA.SENSITIVE, CKA.EXTRACTABLE, CKA.PRIVATE, CKA.SIGN])
        .map((value) => (value ? value[0] === 1 : undefined));
      return { token, sensitive, extractable, private: isPrivate, sign };
    });
  }

  async close(): Promise<void> {
    for (const session of this.idle.splice(0)) this.cryptoki.closeSession(session);
    this.cryptoki.close();
  }
}

function publicTemplate(label: string, algorithm: SigningAlgorithm): Template {
  return [
    [CKA.CLASS, CKO.PUBLIC_KEY],
    [CKA.KEY_TYPE, CKK_EC],
    [CKA.TOKEN, true],
    [CKA.LABEL, label],
    [CKA.EC_PARAMS, EC_PARAMS[algorithm]],
    [CKA.VERIFY, true],
  ];
}

/** Signing only, kept in the token, never readable: CKA_SENSITIVE true, CKA_EXTRACTABLE false. */
function privateTemplate(label: string): Template {
  return [
    [CKA.CLASS, CKO.PRIVATE_KEY],
    [CKA.KEY_TYPE, CKK_EC],
    [CKA.TOKEN, true],
    [CKA.PRIVATE, true],
    [CKA.LABEL, label],
    [CKA.SIGN, true],
    [CKA.SENSITIVE, true],
    [CKA.EXTRACTABLE, false],
  ];
}
