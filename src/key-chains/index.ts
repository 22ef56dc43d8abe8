// The key chains feature: keys and certificates per tenant, and the signing service every other
// feature signs with.

import type { AuditService } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import type { Executor } from '../platform/db/values.js';
import type { App } from '../platform/http/types.js';
import { KeyMaterial } from './material.js';
import { DbKeyProvider } from './providers/db/provider.js';
import type { KeyProvider } from './providers/key-provider.js';
import type { ConnectedProviders } from './providers/kms-file.js';
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
  /** The providers of KMS_PROVIDERS, connected; db is always there besides them. */
  external: Pick<ConnectedProviders, 'defaultProvider' | 'providers'>;
  clock: Clock;
}

export function createKeyChains(needs: KeyChainNeeds) {
  const providers = new Map<string, KeyProvider>([['db', new DbKeyProvider(needs.sealer)]]);
  for (const provider of needs.external.providers) providers.set(provider.name, provider);
  const providerOf = (name: string) => {
    const provider = providers.get(name);
    if (!provider) throw new Error(`key provider '${name}' is not configured`);
    return provider;
  };
  const keyChains = new KeyChainService(
    needs.db,
    providers,
    new KeyMaterial(providerOf, needs.publicUrl, needs.clock),
    needs.audit,
    {
      country: needs.country,
      kmsProvider: needs.external.defaultProvider,
    },
    needs.clock,
  );
  const signing = new SigningService(keyChains);
  return { keyChains, signing, routes: (app: App) => keyChainRoutes(app, keyChains, signing) };
}
