// The key chains feature: keys and certificates per tenant, and the signing service every other
// feature signs with.
import type { AuditService } from '../audit/service.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import type { Executor } from '../platform/db/values.js';
import type { App } from '../platform/http/types.js';
import { KeyMaterial } from './material.js';
import { DbKeyProvider } from './providers.js';
import { keyChainRoutes } from './routes.js';
import { KeyChainService } from './service.js';
import { SigningService } from './signing.js';

export interface KeyChainNeeds {
  db: Executor;
  audit: AuditService;
  /** Seals private keys kept in the database (kmsProvider db). */
  sealer: Sealer;
  publicUrl: string;
  /** CERTIFICATE_COUNTRY. */
  country: string;
}

export function createKeyChains(needs: KeyChainNeeds) {
  const dbKeys = new DbKeyProvider(needs.sealer);
  const keyChains = new KeyChainService(needs.db, new Map([['db', dbKeys]]), new KeyMaterial(dbKeys, needs.publicUrl), needs.audit, {
    country: needs.country,
  });
  const signing = new SigningService(keyChains);
  return { keyChains, signing, routes: (app: App) => keyChainRoutes(app, keyChains, signing) };
}
