// A MASTER_SECRET that is not the one a database was created with stops the start (exit 78, one
// line), instead of a service that starts and fails with a 500 at the first signature, when it
// cannot open the keys sealed under the other secret.
//
// The database keeps a check value: a constant sealed under a key derived from MASTER_SECRET,
// written at the first start. Every later start opens it: one read of one row, made while the rest of
// the service is assembled. A database made before the check value existed is judged by one of its
// sealed keys, and gets the check value when that opens.

import { createSealer } from '../crypto/sealed.js';
import { type Executor, nowIso } from '../db/values.js';
import { StartUpError } from './start-up-errors.js';

const NAME = 'master-secret-check';
const CHECKED = 'MASTER_SECRET opens the data of this database';

/** The database was created with another MASTER_SECRET; first-run.ts tells a generated one apart. */
export class WrongMasterSecret extends StartUpError {
  constructor() {
    super(
      'config',
      'MASTER_SECRET: not the secret this database was created with (the data sealed under that secret does not open); start with the original MASTER_SECRET',
    );
  }
}

export const wrongMasterSecret = () => new WrongMasterSecret();

/**
 * Resolves when MASTER_SECRET opens this database's data (and the check value is stored); rejects with
 * the configuration error otherwise. `sealedKeyOpens` says whether a key sealed by an earlier version
 * opens (undefined: no key is stored, the database holds nothing sealed).
 */
export async function checkMasterSecret(db: Executor, masterSecret: string, sealedKeyOpens: () => Promise<boolean | undefined>) {
  const sealer = createSealer(masterSecret, NAME);
  const opens = (sealed: string) => {
    try {
      return sealer.open(sealed, NAME) === CHECKED;
    } catch {
      return false;
    }
  };
  const stored = await storedCheck(db);
  if (stored !== undefined) {
    if (!opens(stored)) throw wrongMasterSecret();
    return;
  }
  if ((await sealedKeyOpens()) === false) throw wrongMasterSecret();
  // Instances starting at once on a new database each try; the first write stands, and an instance
  // that lost the race (perhaps started with another secret) is judged by the value that won.
  const written = await db
    .insertInto('service_settings')
    // Start-up, before the service answers anyone: the system's time.
    .values({ name: NAME, value: sealer.seal(CHECKED, NAME), created_at: nowIso() })
    .onConflict((oc) => oc.column('name').doNothing())
    .returning('name')
    .executeTakeFirst();
  if (!written && !opens((await storedCheck(db)) ?? '')) throw wrongMasterSecret();
}

/**
 * Whether `masterSecret` opens the stored check value, without writing one (undefined: none is
 * stored, the database is new or older than the check). The master key sources (../master-key) ask
 * before they wrap a secret for good.
 */
export async function checkValueOpens(db: Executor, masterSecret: string): Promise<boolean | undefined> {
  const stored = await storedCheck(db);
  if (stored === undefined) return undefined;
  try {
    return createSealer(masterSecret, NAME).open(stored, NAME) === CHECKED;
  } catch {
    return false;
  }
}

/** Whether a check value is stored: the database holds data sealed under some MASTER_SECRET. */
export async function hasCheckValue(db: Executor): Promise<boolean> {
  return (await storedCheck(db)) !== undefined;
}

async function storedCheck(db: Executor): Promise<string | undefined> {
  const row = await db.selectFrom('service_settings').select('value').where('name', '=', NAME).executeTakeFirst();
  return row?.value;
}
