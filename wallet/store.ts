// The wallet folder: one holder key, generated on first use, and the credentials received, one file
// each. Everything in it is private (files 0600 in a 0700 folder): the key proves possession of
// every credential, and the credentials hold personal data.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JwtSignerJwk } from '@openid4vc/oauth2';
import { exportJWK, generateKeyPair, type JWK } from 'jose';

export interface HolderKey {
  publicJwk: JWK;
  privateJwk: JWK;
  /** The key as the OpenID4VC libraries name a signer (ES256, embedded JWK). */
  signer: JwtSignerJwk;
}

export type CredentialFormat = 'dc+sd-jwt' | 'mso_mdoc';

export interface StoredCredential {
  id: string;
  format: CredentialFormat;
  /** As the issuer sent it: the SD-JWT VC with every disclosure, or the base64url IssuerSigned of an mdoc. */
  credential: string;
  issuer: string;
  configurationId: string;
  receivedAt: string;
}

const PRIVATE_FILE = { mode: 0o600 } as const;

export function keyFromPrivateJwk(privateJwk: JWK): HolderKey {
  const { d: _d, ...publicJwk } = privateJwk;
  return { publicJwk, privateJwk, signer: { method: 'jwk', alg: 'ES256', publicJwk: publicJwk as JwtSignerJwk['publicJwk'] } };
}

/** A fresh P-256 key (holder keys in tests, DPoP keys of one flow). */
export async function generateHolderKey(): Promise<HolderKey> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const { kty, crv, x, y, d } = await exportJWK(privateKey);
  return keyFromPrivateJwk({ kty, crv, x, y, d });
}

export class WalletStore {
  private readonly credentialsDir: string;

  constructor(readonly dir: string) {
    this.credentialsDir = join(dir, 'credentials');
  }

  private ensureFolders() {
    for (const folder of [this.dir, this.credentialsDir]) {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      chmodSync(folder, 0o700);
    }
  }

  /** The holder key of this wallet, created (0600) the first time it is needed. */
  async holderKey(): Promise<HolderKey> {
    const file = join(this.dir, 'holder-key.json');
    if (existsSync(file)) {
      if ((statSync(file).mode & 0o077) !== 0) throw new Error(`${file} is readable by others; chmod 600 it`);
      return keyFromPrivateJwk(JSON.parse(readFileSync(file, 'utf8')) as JWK);
    }
    this.ensureFolders();
    const key = await generateHolderKey();
    writeFileSync(file, `${JSON.stringify(key.privateJwk, null, 2)}\n`, { ...PRIVATE_FILE, flag: 'wx' });
    return key;
  }

  save(credential: Omit<StoredCredential, 'id' | 'receivedAt'>): StoredCredential {
    this.ensureFolders();
    // The configuration id names the file for a person browsing the folder; the suffix keeps names unique.
    const id = `${credential.configurationId.replace(/[^A-Za-z0-9._-]/g, '_')}-${randomBytes(4).toString('hex')}`;
    const stored: StoredCredential = { id, ...credential, receivedAt: new Date().toISOString() };
    writeFileSync(join(this.credentialsDir, `${id}.json`), `${JSON.stringify(stored, null, 2)}\n`, { ...PRIVATE_FILE, flag: 'wx' });
    return stored;
  }

  private files(): string[] {
    return existsSync(this.credentialsDir) ? readdirSync(this.credentialsDir).filter((name) => name.endsWith('.json')) : [];
  }

  list(): StoredCredential[] {
    return this.files()
      .map((name) => this.read(name))
      .sort((a, b) => a.receivedAt.localeCompare(b.receivedAt));
  }

  private read(name: string): StoredCredential {
    try {
      return JSON.parse(readFileSync(join(this.credentialsDir, name), 'utf8')) as StoredCredential;
    } catch {
      const id = name.slice(0, -'.json'.length);
      throw new Error(`${join(this.credentialsDir, name)} is not a stored credential (not JSON); npm run wallet -- rm ${id} removes it`);
    }
  }

  /** Removes one credential; false when the folder holds none by that id. */
  remove(id: string): boolean {
    // Only a name the folder lists is removed: an id is never made into a path (../holder-key).
    const file = this.files().find((name) => name === `${id}.json`);
    if (!file) return false;
    rmSync(join(this.credentialsDir, file));
    return true;
  }

  /** Empties the wallet: every credential and the holder key (a new one is made on next use). */
  reset(): number {
    const count = this.files().length;
    rmSync(this.credentialsDir, { recursive: true, force: true });
    rmSync(join(this.dir, 'holder-key.json'), { force: true });
    return count;
  }
}
