// The registrar feature: the tenant's link to an external registrar, the access certificates it
// issues for key chains, and the registration certificates of presentation configurations.
import type { AuditService } from '../audit/service.js';
import type { KeyChainService } from '../key-chains/service.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import type { Executor } from '../platform/db/values.js';
import type { App } from '../platform/http/types.js';
import type { OutboundClient } from '../platform/outbound/client.js';
import type { PresentationConfigService } from '../presentation-configs/service.js';
import { AccessCertificates } from './access-certificates.js';
import { registrarCertificateRoutes } from './certificate-routes.js';
import { RegistrationCertificates } from './registration-certificates.js';
import { registrarRoutes } from './routes.js';
import { RegistrarService } from './service.js';

export interface RegistrarNeeds {
  db: Executor;
  audit: AuditService;
  /** Seals the registrar account's password and client secret. */
  sealer: Sealer;
  outbound: OutboundClient;
  keyChains: KeyChainService;
  presentationConfigs: PresentationConfigService;
  publicUrl: string;
  /** Whether a registration certificate has expired. */
  clock: Clock;
}

export function createRegistrar(needs: RegistrarNeeds) {
  const registrar = new RegistrarService(needs.db, needs.sealer, needs.outbound, needs.audit, needs.clock);
  const registrationCertificates = new RegistrationCertificates(registrar, needs.presentationConfigs, needs.audit, needs.clock);
  const accessCertificates = new AccessCertificates(registrar, needs.keyChains, new URL(needs.publicUrl).hostname);
  return {
    registrar,
    registrationCertificates,
    routes(app: App) {
      registrarRoutes(app, registrar);
      registrarCertificateRoutes(app, accessCertificates, registrationCertificates);
    },
  };
}
