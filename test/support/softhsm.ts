// A real PKCS#11 token for tests: SoftHSM2 (Debian package softhsm2), with its token directory and
// configuration in a temporary folder of this test run, so that runs never share or keep keys.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kmsFiles } from './kms-files.js';

export const SOFTHSM_MODULE = ['/usr/lib/softhsm/libsofthsm2.so', '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so'].find((path) =>
  existsSync(path),
) as string;

export interface SoftHsm {
  dir: string;
  /** SOFTHSM2_CONF, set in this process too: the module reads it when it is initialised (in the service, in-process). */
  conf: string;
  /** Writes a KMS_PROVIDERS file and returns its path. */
  kmsFile(content: unknown): string;
  /** Another token beside the first, in the same token folder (one module, two tokens). */
  initToken(label: string, pin: string): void;
  deleteToken(label: string): void;
  /** Copies the token folder aside; the function returned puts the copy back (a token that returns). */
  keepCopy(): () => void;
  remove(): void;
}

/** A fresh SoftHSM2 with one token `label` (user PIN `pin`). */
export function softHsm(label: string, pin: string): SoftHsm {
  if (!SOFTHSM_MODULE) throw new Error('SoftHSM2 is not installed (apt-get install softhsm2)');
  const dir = mkdtempSync(join(tmpdir(), 'svc-softhsm-'));
  mkdirSync(join(dir, 'tokens'));
  const conf = join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  process.env.SOFTHSM2_CONF = conf;
  const util = (...args: string[]) => execFileSync('softhsm2-util', args, { env: { ...process.env, SOFTHSM2_CONF: conf }, stdio: 'pipe' });
  util('--init-token', '--free', '--label', label, '--pin', pin, '--so-pin', `${pin}-so`);
  const files = kmsFiles(dir);
  return {
    dir,
    conf,
    kmsFile: files.write,
    initToken(tokenLabel, tokenPin) {
      util('--init-token', '--free', '--label', tokenLabel, '--pin', tokenPin, '--so-pin', `${tokenPin}-so`);
    },
    deleteToken(tokenLabel) {
      util('--delete-token', '--token', tokenLabel);
    },
    keepCopy() {
      cpSync(join(dir, 'tokens'), join(dir, 'tokens-copy'), { recursive: true });
      return () => {
        rmSync(join(dir, 'tokens'), { recursive: true, force: true });
        cpSync(join(dir, 'tokens-copy'), join(dir, 'tokens'), { recursive: true });
      };
    },
    remove: files.remove,
  };
}
