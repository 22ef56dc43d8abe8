// The ordered list of schema versions. Append only: a released migration never changes.
import type { Migration } from 'kysely';
import type { Dialect } from '../platform/db/connect.js';
import { foundation } from './0001-foundation.js';
import { keyChains } from './0002-key-chains.js';
import { issuance } from './0003-issuance.js';
import { statusLists } from './0004-status-lists.js';
import { trustLists } from './0005-trust-lists.js';
import { presentationConfigs } from './0006-presentation-configs.js';
import { clientTokenGenerations } from './0007-client-token-generations.js';
import { clientFirstToken } from './0008-client-first-token.js';
import { registrarConfigs } from './0009-registrar-configs.js';
import { identityProviderTokenCutoff } from './0010-identity-provider-token-cutoff.js';
import { schemaMetadata } from './0012-schema-metadata.js';
import { serviceSettings } from './0013-service-settings.js';
import { configurationsTaken } from './0014-configurations-taken.js';
import { sessionVersion } from './0017-session-version.js';
import { statusEntryStatus } from './0018-status-entry-status.js';
import { requestWindows } from './0019-request-windows.js';
import { credentialConfigScopes } from './0020-credential-config-scopes.js';
import { oneWindowCounter } from './0021-one-window-counter.js';
import { webhookDeliveries } from './0022-webhook-deliveries.js';
import { growthIndexes } from './0023-growth-indexes.js';
import { auditActingAdmin } from './0024-audit-acting-admin.js';
import { federationSubordinates } from './0025-federation-subordinates.js';
import { federationTrustMarks } from './0028-federation-trust-marks.js';
import { columnTypes, type VersionedMigration } from './types.js';

const MIGRATIONS: Record<string, VersionedMigration> = {
  '0001-foundation': foundation,
  '0002-key-chains': keyChains,
  '0003-issuance': issuance,
  '0004-status-lists': statusLists,
  '0005-trust-lists': trustLists,
  '0006-presentation-configs': presentationConfigs,
  '0007-client-token-generations': clientTokenGenerations,
  '0008-client-first-token': clientFirstToken,
  '0009-registrar-configs': registrarConfigs,
  '0010-identity-provider-token-cutoff': identityProviderTokenCutoff,
  '0012-schema-metadata': schemaMetadata,
  '0013-service-settings': serviceSettings,
  '0014-configurations-taken': configurationsTaken,
  '0017-session-version': sessionVersion,
  '0018-status-entry-status': statusEntryStatus,
  '0019-request-windows': requestWindows,
  '0020-credential-config-scopes': credentialConfigScopes,
  '0021-one-window-counter': oneWindowCounter,
  '0022-webhook-deliveries': webhookDeliveries,
  '0023-growth-indexes': growthIndexes,
  '0024-audit-acting-admin': auditActingAdmin,
  '0025-federation-subordinates': federationSubordinates,
  '0028-federation-trust-marks': federationTrustMarks,
};

export function migrationsFor(dialect: Dialect): Record<string, Migration> {
  const t = columnTypes(dialect);
  return Object.fromEntries(Object.entries(MIGRATIONS).map(([name, m]) => [name, { up: (db) => m.up(db, t) }]));
}
