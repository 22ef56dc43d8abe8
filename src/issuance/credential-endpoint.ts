// The credential endpoint (OpenID4VCI 1.0 section 8). Each step enforces one rule and fails with
// the error code that rule names; `issue` lists them in the order they apply.
import { randomUUID } from 'node:crypto';
import type { JWK } from 'jose';
import { tenantDb } from '../platform/db/tenant-db.js';
import { nowIso } from '../platform/db/values.js';
import type { SessionState } from '../sessions/model.js';
import { hashHandle } from '../sessions/service.js';
import type { IssuanceAccessToken } from './access-tokens.js';
import { obtainClaims } from './claims.js';
import { buildCredentials, handledConfigurations, recordIssued } from './credentials.js';
import type { IssuanceDeps } from './deps.js';
import { verifyDpop } from './dpop.js';
import {
  credentialRequestDenied,
  invalidCredentialRequest,
  invalidProof,
  invalidToken,
  notFoundIssuer,
  unknownCredentialConfiguration,
  unknownCredentialIdentifier,
} from './errors.js';
import { issuerUrls } from './metadata.js';
import type { ClaimSource } from './offers.js';
import type { CredentialConfiguration } from './ports.js';
import { verifyProofs } from './proofs.js';
import type { IssuerSettings } from './settings.js';

export interface ResourceRequest {
  tenantId: string;
  authorization?: string;
  dpop?: string;
  url: string;
  body: Record<string, unknown>;
}

export type CredentialResult =
  | { status: 200; body: { credentials: { credential: string }[]; notification_id: string } }
  | { status: 202; body: { transaction_id: string; interval: number } };

const DEFERRED_INTERVAL_SECONDS = 5;

/** The access token of a resource request: bearer or DPoP-bound, with the DPoP proof checked. */
export async function authenticateWallet(
  deps: IssuanceDeps,
  request: ResourceRequest,
  settings: IssuerSettings,
): Promise<{ token: IssuanceAccessToken; session: SessionState }> {
  if (!(await deps.tenantExists(request.tenantId))) throw notFoundIssuer(request.tenantId);
  const match = /^(Bearer|DPoP)\s+(\S+)$/i.exec(request.authorization ?? '');
  if (!match) throw invalidToken('an access token is required');
  const [, scheme, raw] = match as unknown as [string, string, string];
  const token = await deps.tokens.verify(raw, issuerUrls(deps.publicUrl, request.tenantId).issuer);
  if (!token || token.tenantId !== request.tenantId) throw invalidToken('the access token is invalid or expired', scheme);
  if (token.jkt) {
    if (scheme.toLowerCase() !== 'dpop' || !request.dpop)
      throw invalidToken('this access token is DPoP-bound: use the DPoP scheme with a proof', 'DPoP');
    const jkt = await verifyDpop(
      request.dpop,
      { tenantId: request.tenantId, method: 'POST', url: request.url, accessToken: raw },
      deps.nonces,
    );
    if (jkt !== token.jkt) throw invalidToken('the DPoP proof is signed by another key than the token is bound to', 'DPoP');
  } else if (scheme.toLowerCase() === 'dpop' || settings.dpopRequired) {
    throw invalidToken('this access token is not DPoP-bound', scheme);
  }
  const session = await deps.sessions.find(request.tenantId, token.sessionId);
  if (!session?.consumed) throw invalidToken('the session of this access token is no longer valid', scheme);
  return { token, session };
}

interface ParsedRequest {
  configurationId: string;
  proofJwts: string[];
}

function parseRequest(body: Record<string, unknown>, settings: IssuerSettings): ParsedRequest {
  if (body.credential_identifier !== undefined)
    throw unknownCredentialIdentifier('credential identifiers are not issued by this issuer; use credential_configuration_id');
  const configurationId = body.credential_configuration_id;
  if (typeof configurationId !== 'string' || !configurationId) throw invalidCredentialRequest('credential_configuration_id is required');
  const proofs = body.proofs as { jwt?: unknown } | undefined;
  const single = body.proof as { proof_type?: string; jwt?: unknown } | undefined;
  if (proofs && single) throw invalidCredentialRequest('send proofs or proof, not both');
  let proofJwts: unknown[] = [];
  if (proofs) {
    const keys = Object.keys(proofs);
    if (keys.length !== 1 || !Array.isArray(proofs.jwt)) throw invalidProof('proofs must hold exactly one proof type, jwt, as an array');
    proofJwts = proofs.jwt;
  } else if (single) {
    if (single.proof_type !== 'jwt') throw invalidProof('proof_type must be jwt');
    proofJwts = [single.jwt];
  }
  if (proofJwts.some((p) => typeof p !== 'string')) throw invalidProof('every jwt proof must be a string');
  if (proofJwts.length > settings.batchSize) throw invalidCredentialRequest(`at most ${settings.batchSize} proofs per request`);
  return { configurationId, proofJwts: proofJwts as string[] };
}

export class CredentialEndpoint {
  constructor(private readonly deps: IssuanceDeps) {}

  async issue(request: ResourceRequest): Promise<CredentialResult> {
    const settings = await this.deps.settings.get(request.tenantId);
    const { session } = await authenticateWallet(this.deps, request, settings);
    if (session.status === 'failed') throw credentialRequestDenied(`this offer has failed: ${session.errorReason ?? 'no reason given'}`);
    if (request.body.credential_response_encryption !== undefined)
      throw invalidCredentialRequest('credential response encryption is not supported by this issuer');
    const parsed = parseRequest(request.body, settings);
    const config = await this.offeredConfiguration(session, parsed.configurationId);
    await this.checkNotYetIssued(session, config);
    const holderJwks = await this.holderKeys(request, config, parsed.proofJwts, settings);
    const source = (session.private?.credentialPayload as { credentialClaims?: Record<string, ClaimSource> } | undefined)
      ?.credentialClaims?.[config.id];
    const claims = await obtainClaims(this.deps, session, config, source, holderJwks);
    if (!claims.ready) return this.defer(session, config, holderJwks, claims.message);
    let credentials: string[];
    try {
      credentials = await buildCredentials(this.deps, request.tenantId, config, claims.claims, holderJwks, session.id);
    } catch (err) {
      await this.fail(session, err instanceof Error ? err.message : String(err));
      throw err;
    }
    const notificationId = await this.complete(session, config);
    return { status: 200, body: { credentials: credentials.map((credential) => ({ credential })), notification_id: notificationId } };
  }

  private async offeredConfiguration(session: SessionState, id: string): Promise<CredentialConfiguration> {
    const offered = (session.public.credentialConfigurationIds as string[] | undefined) ?? [];
    if (!offered.includes(id)) throw unknownCredentialConfiguration(`'${id}' is not part of this offer`);
    try {
      return await this.deps.configs.get(session.tenantId, id);
    } catch {
      throw unknownCredentialConfiguration(`'${id}' is no longer configured`);
    }
  }

  private async checkNotYetIssued(session: SessionState, config: CredentialConfiguration) {
    if ((await handledConfigurations(this.deps.db, session.tenantId, session.id)).has(config.id)) {
      throw invalidCredentialRequest(`'${config.id}' has already been issued for this offer`);
    }
  }

  private async holderKeys(
    request: ResourceRequest,
    config: CredentialConfiguration,
    jwts: string[],
    settings: IssuerSettings,
  ): Promise<JWK[]> {
    if (config.keyBinding === false) return [];
    if (jwts.length === 0) throw invalidProof('this credential is bound to a holder key: send jwt proofs');
    const urls = issuerUrls(this.deps.publicUrl, request.tenantId);
    const proofs = await verifyProofs(
      jwts,
      { tenantId: request.tenantId, issuer: urls.issuer, maxAgeSeconds: settings.nonceLifetimeSeconds },
      this.deps.nonces,
    );
    return proofs.map((p) => p.jwk);
  }

  /** The claims are not ready: a deferred transaction the integrator completes or fails later. */
  private async defer(
    session: SessionState,
    config: CredentialConfiguration,
    holderJwks: JWK[],
    message?: string,
  ): Promise<CredentialResult> {
    const transactionId = randomUUID();
    const now = nowIso();
    await tenantDb(this.deps.db, session.tenantId)
      .insertInto('deferred_transactions', {
        hash: hashHandle(transactionId),
        id: transactionId,
        session_id: session.id,
        credential_configuration_id: config.id,
        status: 'pending',
        message: message ?? null,
        request: this.deps.sealer.sealJson({ holderJwks }, transactionId),
        credentials: null,
        created_at: now,
        updated_at: now,
        expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      })
      .execute();
    await this.deps.sessions.log(session.id, 'info', 'credential deferred', { credentialConfigurationId: config.id, transactionId });
    return { status: 202, body: { transaction_id: transactionId, interval: DEFERRED_INTERVAL_SECONDS } };
  }

  private async complete(session: SessionState, config: CredentialConfiguration): Promise<string> {
    const notificationId = await recordIssued(this.deps.db, session.tenantId, session.id, config);
    await this.deps.sessions.log(session.id, 'info', 'credential issued', { credentialConfigurationId: config.id });
    const offered = (session.public.credentialConfigurationIds as string[] | undefined) ?? [];
    const handled = await handledConfigurations(this.deps.db, session.tenantId, session.id);
    if (offered.every((id) => handled.has(id))) await this.deps.sessions.update(session.tenantId, session.id, { status: 'completed' });
    return notificationId;
  }

  private async fail(session: SessionState, reason: string) {
    await this.deps.sessions.log(session.id, 'error', 'credential could not be issued', { reason });
    await this.deps.sessions.update(session.tenantId, session.id, { status: 'failed', errorReason: reason });
  }
}
