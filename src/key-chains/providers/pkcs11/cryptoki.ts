// The few PKCS#11 (Cryptoki, v2.40) calls svc makes, through koffi: a foreign function interface
// whose Node-API binary comes prebuilt in its npm package (no install script, no compiler, the same
// binary under every Node version). Only the module's C_GetFunctionList is looked up by name, as the
// standard asks; every other function is read from the list it returns. Unix layout only (CK_ULONG
// is unsigned long, structures are not packed): PKCS#11 modules on Windows pack theirs.
import { createRequire } from 'node:module';

type Koffi = typeof import('koffi');
type Fn = ((...args: unknown[]) => number) & { async: (...args: unknown[]) => void };

export const CKR = {
  OK: 0x0,
  SLOT_ID_INVALID: 0x3,
  GENERAL_ERROR: 0x5,
  ATTRIBUTE_SENSITIVE: 0x11,
  ATTRIBUTE_TYPE_INVALID: 0x12,
  DEVICE_ERROR: 0x30,
  DEVICE_REMOVED: 0x32,
  PIN_INCORRECT: 0xa0,
  PIN_LOCKED: 0xa4,
  SESSION_CLOSED: 0xb0,
  SESSION_HANDLE_INVALID: 0xb3,
  TOKEN_NOT_PRESENT: 0xe0,
  TOKEN_NOT_RECOGNIZED: 0xe1,
  USER_ALREADY_LOGGED_IN: 0x100,
  USER_NOT_LOGGED_IN: 0x101,
  BUFFER_TOO_SMALL: 0x150,
  CRYPTOKI_ALREADY_INITIALIZED: 0x191,
} as const;
const CKR_NAMES = new Map<number, string>(Object.entries(CKR).map(([name, code]) => [code, `CKR_${name}`]));

export const CKA = {
  CLASS: 0x0,
  TOKEN: 0x1,
  PRIVATE: 0x2,
  LABEL: 0x3,
  VALUE: 0x11,
  KEY_TYPE: 0x100,
  ID: 0x102,
  SENSITIVE: 0x103,
  SIGN: 0x108,
  VERIFY: 0x10a,
  DERIVE: 0x10c,
  EXTRACTABLE: 0x162,
  NEVER_EXTRACTABLE: 0x164,
  ALWAYS_SENSITIVE: 0x165,
  EC_PARAMS: 0x180,
  EC_POINT: 0x181,
} as const;
export const CKO = { PUBLIC_KEY: 2, PRIVATE_KEY: 3 } as const;
export const CKK_EC = 3;
export const CKM = { EC_KEY_PAIR_GEN: 0x1040, ECDSA: 0x1041 } as const;
const CKF_RW_SESSION = 0x2;
const CKF_SERIAL_SESSION = 0x4;
const CKF_OS_LOCKING_OK = 0x2;
const CKU_USER = 1;
const CK_UNAVAILABLE_INFORMATION = 0xffffffffffffffffn;

/** A Cryptoki call that did not return CKR_OK. */
export class CryptokiError extends Error {
  constructor(
    readonly call: string,
    readonly code: number,
  ) {
    super(`${call} returned ${CKR_NAMES.get(code) ?? `0x${code.toString(16)}`}`);
    this.name = 'CryptokiError';
  }
}

/** One attribute of a template: a number (CK_ULONG), a boolean (CK_BBOOL), or bytes. */
export type AttributeValue = number | boolean | Uint8Array | string;
export type Template = [type: number, value: AttributeValue][];

function encodeValue(value: AttributeValue): Buffer {
  if (typeof value === 'boolean') return Buffer.from([value ? 1 : 0]);
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  if (typeof value === 'number') {
    const buffer = Buffer.alloc(8);
    buffer.writeBigUInt64LE(BigInt(value));
    return buffer;
  }
  return Buffer.from(value);
}

/** The function list's order (PKCS#11 v2.40, pkcs11f.h): only the names svc calls are given their types. */
const FUNCTION_ORDER = [
  'C_Initialize',
  'C_Finalize',
  'C_GetInfo',
  'C_GetFunctionList',
  'C_GetSlotList',
  'C_GetSlotInfo',
  'C_GetTokenInfo',
  'C_GetMechanismList',
  'C_GetMechanismInfo',
  'C_InitToken',
  'C_InitPIN',
  'C_SetPIN',
  'C_OpenSession',
  'C_CloseSession',
  'C_CloseAllSessions',
  'C_GetSessionInfo',
  'C_GetOperationState',
  'C_SetOperationState',
  'C_Login',
  'C_Logout',
  'C_CreateObject',
  'C_CopyObject',
  'C_DestroyObject',
  'C_GetObjectSize',
  'C_GetAttributeValue',
  'C_SetAttributeValue',
  'C_FindObjectsInit',
  'C_FindObjects',
  'C_FindObjectsFinal',
  'C_EncryptInit',
  'C_Encrypt',
  'C_EncryptUpdate',
  'C_EncryptFinal',
  'C_DecryptInit',
  'C_Decrypt',
  'C_DecryptUpdate',
  'C_DecryptFinal',
  'C_DigestInit',
  'C_Digest',
  'C_DigestUpdate',
  'C_DigestKey',
  'C_DigestFinal',
  'C_SignInit',
  'C_Sign',
] as const;

/** The prototypes of the calls made, in koffi's C-like syntax. */
const PROTOTYPES: Partial<Record<(typeof FUNCTION_ORDER)[number], string>> = {
  C_Initialize: 'unsigned long C_Initialize(CK_C_INITIALIZE_ARGS *args)',
  C_Finalize: 'unsigned long C_Finalize(void *reserved)',
  C_GetSlotList: 'unsigned long C_GetSlotList(uint8_t tokenPresent, _Out_ unsigned long *list, _Inout_ unsigned long *count)',
  C_GetTokenInfo: 'unsigned long C_GetTokenInfo(unsigned long slot, _Out_ uint8_t *info)',
  C_OpenSession:
    'unsigned long C_OpenSession(unsigned long slot, unsigned long flags, void *app, void *notify, _Out_ unsigned long *session)',
  C_CloseSession: 'unsigned long C_CloseSession(unsigned long session)',
  C_GetSessionInfo: 'unsigned long C_GetSessionInfo(unsigned long session, _Out_ uint8_t *info)',
  C_Login: 'unsigned long C_Login(unsigned long session, unsigned long user, const uint8_t *pin, unsigned long pinLength)',
  C_GetAttributeValue:
    'unsigned long C_GetAttributeValue(unsigned long session, unsigned long object, _Inout_ CK_ATTRIBUTE *template, unsigned long count)',
  C_FindObjectsInit: 'unsigned long C_FindObjectsInit(unsigned long session, CK_ATTRIBUTE *template, unsigned long count)',
  C_FindObjects:
    'unsigned long C_FindObjects(unsigned long session, _Out_ unsigned long *objects, unsigned long max, _Out_ unsigned long *count)',
  C_FindObjectsFinal: 'unsigned long C_FindObjectsFinal(unsigned long session)',
  C_SignInit: 'unsigned long C_SignInit(unsigned long session, CK_MECHANISM *mechanism, unsigned long key)',
  C_Sign:
    'unsigned long C_Sign(unsigned long session, const uint8_t *data, unsigned long length, uint8_t *signature, unsigned long *signatureLength)',
};
const GENERATE_KEY_PAIR_INDEX = 59;
const GENERATE_KEY_PAIR =
  'unsigned long C_GenerateKeyPair(unsigned long session, CK_MECHANISM *mechanism, CK_ATTRIBUTE *publicTemplate, unsigned long publicCount, CK_ATTRIBUTE *privateTemplate, unsigned long privateCount, _Out_ unsigned long *publicKey, _Out_ unsigned long *privateKey)';

let koffiLoaded: Koffi | undefined;
/** koffi (and its native binary) is read from node_modules when the first PKCS#11 provider is configured, never otherwise. */
function koffi(): Koffi {
  koffiLoaded ??= createRequire(import.meta.url)('koffi') as Koffi;
  return koffiLoaded;
}

/** Prototypes by function name: koffi's type names are global to the process, so each is declared once. */
const prototypes = new Map<string, unknown>();

function prototype(k: Koffi, name: string, declaration: string) {
  let type = prototypes.get(name);
  if (!type) {
    type = k.proto(declaration);
    prototypes.set(name, type);
  }
  return type as ReturnType<Koffi['proto']>;
}

let typesDeclared = false;
function declareTypes(k: Koffi) {
  if (typesDeclared) return;
  k.struct('CK_ATTRIBUTE', { type: 'unsigned long', pValue: 'void *', ulValueLen: 'unsigned long' });
  k.struct('CK_MECHANISM', { mechanism: 'unsigned long', pParameter: 'void *', ulParameterLen: 'unsigned long' });
  k.struct('CK_C_INITIALIZE_ARGS', {
    CreateMutex: 'void *',
    DestroyMutex: 'void *',
    LockMutex: 'void *',
    UnlockMutex: 'void *',
    flags: 'unsigned long',
    pReserved: 'void *',
  });
  typesDeclared = true;
}

/**
 * Modules open in this process, by path: a module is initialised once per process, so two providers
 * (or two services in one test process) on one module share it, and the last to close finalises it.
 */
const opened = new Map<string, { cryptoki: Cryptoki; users: number }>();
/**
 * Libraries loaded, by path, kept for the life of the process: koffi unloads a library whose handle
 * is collected, and a module's own state (its crypto library's) may not survive being unloaded and
 * loaded again. A module closed and opened again is initialised again, not reloaded.
 */
const libraries = new Map<string, ReturnType<Koffi['load']>>();

/** A loaded PKCS#11 module: the calls svc makes, each checked for CKR_OK. */
export class Cryptoki {
  private readonly fns = new Map<string, Fn>();

  private constructor(
    private readonly k: Koffi,
    readonly path: string,
  ) {}

  /** Loads the module and initialises it for use from several threads (signatures run off the main thread). */
  static open(path: string): Cryptoki {
    const shared = opened.get(path);
    if (shared) {
      shared.users++;
      return shared.cryptoki;
    }
    const cryptoki = Cryptoki.load(path);
    opened.set(path, { cryptoki, users: 1 });
    return cryptoki;
  }

  private static load(path: string): Cryptoki {
    const k = koffi();
    declareTypes(k);
    const library = libraries.get(path) ?? k.load(path);
    libraries.set(path, library);
    const getFunctionList = library.func('unsigned long C_GetFunctionList(_Out_ void **list)');
    const out: [unknown] = [null];
    check('C_GetFunctionList', getFunctionList(out) as number);
    const cryptoki = new Cryptoki(k, path);
    const pointers = k.decode(out[0], 8, 'void *', GENERATE_KEY_PAIR_INDEX + 1) as unknown[]; // after the 8-byte CK_VERSION (padded)
    FUNCTION_ORDER.forEach((name, index) => {
      const declaration = PROTOTYPES[name];
      if (declaration) cryptoki.fns.set(name, k.decode(pointers[index], prototype(k, name, declaration)) as Fn);
    });
    const generateKeyPair = prototype(k, 'C_GenerateKeyPair', GENERATE_KEY_PAIR);
    cryptoki.fns.set('C_GenerateKeyPair', k.decode(pointers[GENERATE_KEY_PAIR_INDEX], generateKeyPair) as Fn);
    cryptoki.initialize();
    return cryptoki;
  }

  private fn(name: string): Fn {
    const fn = this.fns.get(name);
    if (!fn) throw new Error(`${name} is not bound`);
    return fn;
  }

  private call(name: string, ...args: unknown[]) {
    check(name, this.fn(name)(...args));
  }

  /**
   * Sessions of this module handed out for an operation, by every provider in the process that
   * uses it: C_Finalize ends every session of the module, so it waits until none is in use.
   */
  private sessionsInUse = 0;
  /** Counts reinitialisations: a provider whose sessions are of an earlier one holds void handles and reconnects. */
  generation = 0;

  sessionTaken() {
    this.sessionsInUse++;
  }
  sessionReturned() {
    this.sessionsInUse--;
  }

  /**
   * Finalises and initialises the module again, so that it reads its slots and tokens anew (some
   * modules, SoftHSM2 among them, see a token that came back only so). Only while no session of the
   * module is in use, by any of its users (their operations would fail); false when it was not done.
   * Every user's sessions, idle ones too, end: each sees `generation` change and reconnects.
   */
  reinitialize(): boolean {
    if (this.sessionsInUse > 0) return false;
    this.fn('C_Finalize')(null);
    this.generation++;
    this.initialize();
    return true;
  }

  private initialize() {
    const rv = this.fn('C_Initialize')({
      CreateMutex: null,
      DestroyMutex: null,
      LockMutex: null,
      UnlockMutex: null,
      flags: CKF_OS_LOCKING_OK,
      pReserved: null,
    });
    if (rv !== CKR.CRYPTOKI_ALREADY_INITIALIZED) check('C_Initialize', rv);
  }

  /** Finalises the module when no other user in this process holds it open. */
  close() {
    const shared = opened.get(this.path);
    if (shared && --shared.users > 0) return;
    opened.delete(this.path);
    this.fn('C_Finalize')(null);
  }

  /** The slot whose token has this label (CK_TOKEN_INFO.label, 32 bytes padded with blanks); undefined when none. */
  findSlot(tokenLabel: string): number | undefined {
    const count = [0];
    this.call('C_GetSlotList', 1, null, count);
    const slots = new Array<number>(count[0] as number).fill(0);
    this.call('C_GetSlotList', 1, slots, count);
    for (const slot of slots.slice(0, count[0])) {
      // A slot whose token cannot say its label (being removed, failing) is not the one.
      const label = (() => {
        try {
          return this.tokenLabel(slot);
        } catch {
          return undefined;
        }
      })();
      if (label === tokenLabel) return slot;
    }
    return undefined;
  }

  /** The label of the token in `slot`; throws (CKR_TOKEN_NOT_PRESENT, CKR_DEVICE_REMOVED) when it is gone. */
  tokenLabel(slot: number): string {
    const info = Buffer.alloc(256); // CK_TOKEN_INFO is 208 bytes on 64-bit Unix; the label is its first 32
    this.call('C_GetTokenInfo', slot, info);
    return info.subarray(0, 32).toString('utf8').trimEnd();
  }

  openSession(slot: number): number {
    const session = [0];
    this.call('C_OpenSession', slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, null, null, session);
    return session[0] as number;
  }

  closeSession(session: number) {
    this.fn('C_CloseSession')(session);
  }

  /** Throws when the session is no longer usable (token removed, module reset). */
  checkSession(session: number) {
    this.call('C_GetSessionInfo', session, Buffer.alloc(64));
  }

  /** Logs the application in: PKCS#11 login state is shared by every session of the token. */
  login(session: number, pin: string) {
    const bytes = Buffer.from(pin, 'utf8');
    const rv = this.fn('C_Login')(session, CKU_USER, bytes, bytes.length);
    if (rv !== CKR.USER_ALREADY_LOGGED_IN) check('C_Login', rv);
  }

  findObjects(session: number, template: Template): number[] {
    this.call('C_FindObjectsInit', session, attributes(template), template.length);
    try {
      const found: number[] = [];
      for (;;) {
        const batch = new Array<number>(16).fill(0);
        const count = [0];
        this.call('C_FindObjects', session, batch, batch.length, count);
        found.push(...batch.slice(0, count[0]));
        if ((count[0] as number) < batch.length) return found;
      }
    } finally {
      this.fn('C_FindObjectsFinal')(session);
    }
  }

  /** The values of `types` on `object`; an attribute the object does not have is undefined. */
  attributes(session: number, object: number, types: number[]): (Buffer | undefined)[] {
    const sizes = types.map((type) => ({ type, pValue: null, ulValueLen: 0 }));
    const rv = this.fn('C_GetAttributeValue')(session, object, sizes, sizes.length);
    if (!readable(rv)) check('C_GetAttributeValue', rv);
    const buffers = sizes.map((s) =>
      BigInt(s.ulValueLen) === CK_UNAVAILABLE_INFORMATION ? undefined : this.k.alloc('uint8_t', Math.max(1, Number(s.ulValueLen))),
    );
    try {
      const values = sizes.map((s, i) => ({ type: s.type, pValue: buffers[i] ?? null, ulValueLen: buffers[i] ? s.ulValueLen : 0 }));
      const again = this.fn('C_GetAttributeValue')(session, object, values, values.length);
      if (!readable(again)) check('C_GetAttributeValue', again);
      return values.map((v, i) => {
        const buffer = buffers[i];
        if (!buffer || BigInt(v.ulValueLen) === CK_UNAVAILABLE_INFORMATION) return undefined;
        return Buffer.from(this.k.decode(buffer, 'uint8_t', Number(v.ulValueLen)) as number[]);
      });
    } finally {
      for (const buffer of buffers) if (buffer) this.k.free(buffer);
    }
  }

  generateKeyPair(session: number, publicTemplate: Template, privateTemplate: Template): { publicKey: number; privateKey: number } {
    const publicKey = [0];
    const privateKey = [0];
    const mechanism = { mechanism: CKM.EC_KEY_PAIR_GEN, pParameter: null, ulParameterLen: 0 };
    this.call(
      'C_GenerateKeyPair',
      session,
      mechanism,
      attributes(publicTemplate),
      publicTemplate.length,
      attributes(privateTemplate),
      privateTemplate.length,
      publicKey,
      privateKey,
    );
    return { publicKey: publicKey[0] as number, privateKey: privateKey[0] as number };
  }

  /**
   * CKM_ECDSA over `digest` (the caller hashes): the signature is r || s, each as long as the
   * curve's order, which is JOSE's and COSE's form already. Runs on a worker thread, so a slow
   * (network) HSM never holds up the event loop.
   */
  async signDigest(session: number, key: number, digest: Uint8Array, signatureLength: number): Promise<Buffer> {
    this.call('C_SignInit', session, { mechanism: CKM.ECDSA, pParameter: null, ulParameterLen: 0 }, key);
    // The worker thread reads and writes these while the call runs: they stay referenced until it ends.
    const input = Buffer.from(digest);
    const signature = Buffer.alloc(signatureLength);
    const length = new BigUint64Array([BigInt(signatureLength)]);
    const rv = await new Promise<number>((resolve, reject) =>
      this.fn('C_Sign').async(session, input, input.length, signature, length, (err: unknown, result: number) =>
        err ? reject(err) : resolve(result),
      ),
    );
    input.fill(0);
    check('C_Sign', rv);
    return signature.subarray(0, Number(length[0]));
  }
}

function attributes(template: Template) {
  return template.map(([type, value]) => {
    const bytes = encodeValue(value);
    return { type, pValue: bytes, ulValueLen: bytes.length };
  });
}

/** CKR_OK, or a refusal of some attributes only (which then read as unavailable). */
const readable = (rv: number) => rv === CKR.OK || rv === CKR.ATTRIBUTE_TYPE_INVALID || rv === CKR.ATTRIBUTE_SENSITIVE;

function check(call: string, rv: number) {
  if (rv !== CKR.OK) throw new CryptokiError(call, Number(rv));
}
