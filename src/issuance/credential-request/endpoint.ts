// The credential endpoint (OpenID4VCI 1.0 section 8). `answer` authenticates the wallet and opens
// the request (decrypting it when it came encrypted, section 10); `issue` lists the steps in the
// order they apply, each enforcing one rule and failing with the error code that rule names (key
// proofs and key attestations in proofs.ts); the answer is encrypted when the request asked so.
import { randomUUID } from 'node:crypto';
import type { JWK } from 'jose';
import type { CredentialConfigService, CredentialConfiguration } from '../../credential-configs/service.js';
import type { Sealer } from '../../platform/crypto/sealed.js';
import type { Executor } from '../../platform/db/values.js';
import type { SessionState } from '../../sessions/model.js';
import type { SessionService } from '../../sessions/service.js';
import type { WalletAccessCheck } from '../access/wallet-access.js';
import type { ResourceRequest } from '../client-request.js';
import {
  credentialRequestDenied,
  invalidCredentialRequest,
  unknownCredentialConfiguration,
  unknownCredentialIdentifier,
} from '../errors.js';
import type { Issuer } from '../issuers.js';
import type { NonceStore } from '../nonce/store.js';
import { grantedConfigurationIds, type IssuancePublicData, issuancePrivate, issuancePublic } from '../session.js';
import type { ClaimSources } from './claims.js';
import { insertTransaction } from './deferred-store.js';
import type { CredentialEncryption, WalletAnswer } from './encryption.js';
import type { CredentialMinter, StatusRecord } from './minter.js';
import { type CheckedProofs, carriesKeyAttestation, checkKeyProofs, spentNonce } from './proofs.js';
import { type CredentialRequest, parseCredentialRequest } from './schemas.js';
import { issuedRecord, releaseConfiguration, type TakenConfiguration, takeConfiguration, takenConfigurations } from './store.js';

export type CredentialResult =
  | { status: 200; body: { credentials: { credential: string }[]; notification_id: string } }
  | { status: 202; body: { transaction_id: string; interval: number } };

export const DEFERRED_INTERVAL_SECONDS = 5;

export class CredentialEndpoint {
  constructor(
    private readonly db: Executor,
    private readonly access: WalletAccessCheck,
    private readonly configs: CredentialConfigService,
    private readonly sessions: SessionService,
    private readonly nonces: NonceStore,
    private readonly claims: ClaimSources,
    private readonly minter: CredentialMinter,
    /** Encrypts a deferred transaction's holder keys. */
    private readonly sealer: Sealer,
    private readonly encryption: CredentialEncryption,
  ) {}

  /** The request as JSON, or as the JWE `encryptedBody` (application/jwt); the answer encrypted when the request asks for it. */
  async answer(request: ResourceRequest, encryptedBody?: string): Promise<WalletAnswer> {
    const { issuer, session, token } = await this.access.authenticate(request);
    const opened = await this.encryption.openRequest(issuer, request.body, encryptedBody);
    const result = await this.issue(issuer, session, token.round, opened.body);
    return this.encryption.answer(result.status, result.body, opened.responseEncryption);
  }

  private async issue(issuer: Issuer, session: SessionState, round: number, body: Record<string, unknown>): Promise<CredentialResult> {
    this.checkSessionUsable(session);
    const offered = issuancePublic(session);
    const parsed = parseCredentialRequest(body, issuer.settings.batchSize);
    const config = await this.grantedConfiguration(session, offered, parsed);
    const proven = await this.holderKeys(issuer, config, parsed);
    const holderJwks = proven?.keys ?? [];
    const taken = { sessionId: session.id, configurationId: config.id, round };
    await this.take(session, taken, proven?.nonce);
    try {
      const personal = issuancePrivate(session);
      const source = personal?.credentialPayload.credentialClaims[config.id];
      const claims = await this.claims.obtain(session, config, source, holderJwks, personal?.authorizationResult);
      if (!claims.ready) return await this.defer(session, config, holderJwks, claims.message);
      const { credentials, statusRecord } = await this.mint(issuer, session, config, claims.claims, holderJwks);
      const notificationId = await this.complete(session, offered, config, statusRecord);
      return { status: 200, body: { credentials: credentials.map((credential) => ({ credential })), notification_id: notificationId } };
    } catch (err) {
      await releaseConfiguration(this.db, session.tenantId, taken);
      throw err;
    }
  }

  private checkSessionUsable(session: SessionState) {
    if (session.status === 'failed') throw credentialRequestDenied(`this offer has failed: ${session.errorReason ?? 'no reason given'}`);
  }

  /**
   * The configuration requested, if the wallet was granted it. What was granted by authorization_details
   * is requested by its credential_identifier, everything else by credential_configuration_id
   * (OpenID4VCI 1.0 section 8.2).
   */
  private async grantedConfiguration(
    session: SessionState,
    offered: IssuancePublicData,
    { configurationId: id, byIdentifier }: CredentialRequest,
  ): Promise<CredentialConfiguration> {
    const byDetails = offered.authorizedByDetails ?? [];
    if (byIdentifier && !byDetails.includes(id))
      throw unknownCredentialIdentifier(`'${id}' is not a credential identifier of this access token`);
    if (!byIdentifier && byDetails.includes(id)) {
      throw invalidCredentialRequest(`'${id}' was granted by authorization_details: request it by its credential_identifier`);
    }
    if (!grantedConfigurationIds(offered).includes(id)) {
      throw unknownCredentialConfiguration(`'${id}' is not part of this offer`);
    }
    const config = await this.configs.find(session.tenantId, id);
    if (!config) throw unknownCredentialConfiguration(`'${id}' is no longer configured`);
    return config;
  }

  /**
   * Each configuration once per offer and access token round (so at most batchSize credentials of it
   * for the code's token, and again for each refreshed one): taken in one statement before anything
   * is made, so of racing requests exactly one goes on. Given back if its request fails before a
   * credential or deferred transaction exists. The proofs' c_nonce is spent in the same statement
   * (on PostgreSQL), the configuration taken only if it was.
   */
  private async take(session: SessionState, taken: TakenConfiguration, nonce: string | undefined) {
    const spend = nonce === undefined ? undefined : this.nonces.consuming(session.tenantId, 'c_nonce', nonce);
    const took = await takeConfiguration(this.db, session.tenantId, taken, this.sessions.clock.now(), spend);
    if (!took.spent) throw spentNonce();
    if (!took.taken) {
      throw invalidCredentialRequest(`'${taken.configurationId}' has already been issued for this access token`);
    }
  }

  private async holderKeys(
    { tenantId, urls, settings, walletProviderAnchors }: Issuer,
    config: CredentialConfiguration,
    request: CredentialRequest,
  ): Promise<CheckedProofs | undefined> {
    if (config.keyBinding === false) return undefined;
    const { clock } = this.sessions;
    const context = {
      tenantId,
      issuer: urls.issuer,
      maxAgeSeconds: settings.nonceLifetimeSeconds,
      batchSize: settings.batchSize,
      clock,
      keyAttestations: {
        clock,
        required: config.config.keyAttestationsRequired,
        // Read only where a key attestation is to be checked: most requests carry none.
        trustedCertificates:
          config.config.keyAttestationsRequired || carriesKeyAttestation(request.proofs) ? await walletProviderAnchors() : [],
      },
    };
    return checkKeyProofs(request.proofs, context);
  }

  /** The claims are not ready: a deferred transaction the integrator completes or fails later. */
  private async defer(
    session: SessionState,
    config: CredentialConfiguration,
    holderJwks: JWK[],
    message?: string,
  ): Promise<CredentialResult> {
    const transactionId = randomUUID();
    await insertTransaction(
      this.db,
      session.tenantId,
      {
        id: transactionId,
        sessionId: session.id,
        configurationId: config.id,
        message: message ?? null,
        request: this.sealer.sealJson({ holderJwks }, transactionId),
      },
      this.sessions.clock.now(),
    );
    await this.sessions.log(session.id, 'info', 'credential deferred', {
      credentialConfigurationId: config.id,
      transactionId,
      transactionStatus: 'pending',
    });
    return { status: 202, body: { transaction_id: transactionId, interval: DEFERRED_INTERVAL_SECONDS } };
  }

  /** A credential that cannot be made fails the offer, so the integrator sees why. */
  private async mint(
    issuer: Issuer,
    session: SessionState,
    config: CredentialConfiguration,
    claims: Record<string, unknown>,
    holderJwks: JWK[],
  ) {
    try {
      return await this.minter.mintUnrecorded({
        urls: issuer.urls,
        tenantId: issuer.tenantId,
        config,
        claims,
        holderJwks,
        sessionId: session.id,
        federationEntityId: issuer.settings.federation?.entityId,
      });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      await this.sessions.log(session.id, 'error', 'credential could not be issued', { reason });
      await this.sessions.update(session.tenantId, session.id, { status: 'failed', errorReason: reason });
      throw err;
    }
  }

  /**
   * Records the issuance, and the credentials' status entries; the session completes once every
   * offered configuration was handled.
   */
  private async complete(
    session: SessionState,
    offered: IssuancePublicData,
    config: CredentialConfiguration,
    statusRecord: StatusRecord | undefined,
  ): Promise<string> {
    const issued = issuedRecord(this.db, session.tenantId, session.id, config.id, config.config.format, this.sessions.clock.now());
    const log = { level: 'info', message: 'credential issued', details: { credentialConfigurationId: config.id } } as const;
    // This request took its configuration before it got here; only the others need looking up.
    const others = grantedConfigurationIds(offered).filter((id) => id !== config.id);
    const taken = others.length > 0 ? await takenConfigurations(this.db, session.tenantId, session.id) : new Set<string>();
    if (others.every((id) => taken.has(id))) {
      // The records of the credential and its status entries go in the statement that completes the
      // session (on PostgreSQL), sent once whatever the update meets.
      const writes = [issued.query, ...(statusRecord ? [statusRecord] : [])].map((query) => ({ query, guards: false }));
      await this.sessions.update(session.tenantId, session.id, { status: 'completed' }, { from: session, log, writes });
    } else {
      await statusRecord?.execute();
      await issued.query.execute();
      await this.sessions.log(session.id, log.level, log.message, log.details);
    }
    return issued.notificationId;
  }
}
