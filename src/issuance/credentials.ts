// Building and recording credentials, shared by the credential and deferred credential endpoints.
import { randomUUID } from 'node:crypto';
import type { JWK } from 'jose';
import { tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, nowIso } from '../platform/db/values.js';
import { lazy } from '../platform/lazy.js';
import type { IssuanceDeps } from './deps.js';
import { credentialRequestDenied } from './errors.js';
import { issuerUrls, vctOf } from './metadata.js';
import type { CredentialConfiguration } from './ports.js';

const mdocFormat = lazy(() => import('./formats/mdoc.js'));
const sdJwtVcFormat = lazy(() => import('./formats/sd-jwt-vc.js'));

/** One credential per holder key (a batch), or one unbound credential when the configuration has no key binding. */
export async function buildCredentials(
  deps: IssuanceDeps,
  tenantId: string,
  config: CredentialConfiguration,
  claims: Record<string, unknown>,
  holderJwks: JWK[],
  sessionId?: string,
): Promise<string[]> {
  const problems = deps.configs.validateClaims(config, claims);
  if (problems.length)
    throw credentialRequestDenied(
      `the claims do not satisfy the configuration: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`,
    );
  const signer = await deps.signing.signer(tenantId, { keyChainId: config.keyChainId, usageType: 'attestation' });
  const keys: (JWK | undefined)[] = config.keyBinding === false || holderJwks.length === 0 ? [undefined] : holderJwks;
  const urls = issuerUrls(deps.publicUrl, tenantId);
  // One status list entry per credential: `status` in the SD-JWT VC payload or in the mdoc MSO.
  const statuses =
    config.statusManagement && deps.statusEntries
      ? await deps.statusEntries.allocate(tenantId, { credentialConfigurationId: config.id, sessionId, count: keys.length })
      : undefined;
  const credentials = await Promise.all(
    keys.map(async (holderJwk, i) => {
      const status = statuses?.[i] && { status_list: { idx: statuses[i].idx, uri: statuses[i].uri } };
      const lifetimeSeconds = config.lifeTime;
      if (config.config.format === 'mso_mdoc') {
        const { issueMdoc } = await mdocFormat();
        const docType = config.config.docType as string;
        return issueMdoc({ docType, fields: config.fields, claims, holderJwk, lifetimeSeconds, status }, signer);
      }
      const { issueSdJwtVc } = await sdJwtVcFormat();
      return issueSdJwtVc(
        {
          issuer: urls.issuer,
          vct: vctOf(config, urls),
          claims,
          fields: config.fields,
          holderJwk,
          lifetimeSeconds,
          trustFormat: config.sdJwtTrustFormat ?? 'x5c',
          status,
        },
        signer,
      );
    }),
  );
  deps.metrics.credentialsIssued(tenantId, config.config.format, credentials.length);
  return credentials;
}

/** Remembers what was issued (for notifications and, later, status management); returns the notification id. */
export async function recordIssued(db: Executor, tenantId: string, sessionId: string, config: CredentialConfiguration): Promise<string> {
  const notificationId = randomUUID();
  await tenantDb(db, tenantId)
    .insertInto('issued_credentials', {
      id: randomUUID(),
      session_id: sessionId,
      credential_configuration_id: config.id,
      format: config.config.format,
      notification_id: notificationId,
      notification_event: null,
      created_at: nowIso(),
    })
    .execute();
  return notificationId;
}

/** Configurations of the session already issued or deferred: each is issued once per offer. */
export async function handledConfigurations(db: Executor, tenantId: string, sessionId: string): Promise<Set<string>> {
  const scoped = tenantDb(db, tenantId);
  const issued = await scoped
    .selectFrom('issued_credentials')
    .select('credential_configuration_id')
    .where('session_id', '=', sessionId)
    .execute();
  const deferred = await scoped
    .selectFrom('deferred_transactions')
    .select('credential_configuration_id')
    .where('session_id', '=', sessionId)
    .execute();
  return new Set([...issued, ...deferred].map((r) => r.credential_configuration_id));
}
