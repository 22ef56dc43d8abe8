// The pushed authorization request endpoint (RFC 9126; OpenID4VCI 1.0 section 5.1.4). `push` lists the
// steps in the order they apply; each enforces one rule and fails with the error that rule names. The
// request is kept with the offer's session, and the wallet gets a single-use request_uri for it. A
// new request for the same offer replaces the one before: its request_uri and code stop working, and
// an interactive authorization running for it ends (its auth_session and web_session with it).
import { randomBytes } from 'node:crypto';
import type { CredentialConfigService, CredentialConfiguration } from '../../credential-configs/service.js';
import { type Executor, inTransaction, type OnceInsert } from '../../platform/db/values.js';
import { PrototypeMemberRefused, parseOutsideJson } from '../../platform/json.js';
import type { SessionState } from '../../sessions/model.js';
import type { SessionService } from '../../sessions/service.js';
import { type DpopProofs, replayedProof } from '../access/dpop.js';
import type { ClientRequest } from '../client-request.js';
import {
  invalidAuthorizationDetails,
  invalidDpopProof,
  invalidRequest,
  invalidScope,
  invalidTarget,
  unsupportedResponseType,
} from '../errors.js';
import { STEP_HANDLE } from '../handles.js';
import type { Issuer, IssuerDirectory } from '../issuers.js';
import { parseOAuthParams } from '../oauth-params.js';
import { type AuthorizationRequest, type IssuancePrivate, type IssuancePublic, issuancePrivate, issuancePublic } from '../session.js';
import { offerRefusal } from './offer-session.js';
import {
  AuthorizationDetailsSchema,
  type PushedAuthorizationRequest,
  PushedAuthorizationRequestSchema,
  REQUEST_URI_LIFETIME_SECONDS,
  REQUEST_URI_PREFIX,
  redirectUriRefusal,
} from './schemas.js';
import { type AuthorizationServerRole, BUILTIN_SERVER } from './server-role.js';
import { replayedAttestationProof, type WalletAttestations } from './wallet-attestation.js';
import type { WalletInitiatedLimit } from './wallet-initiated-limit.js';

export type PushRequest = ClientRequest;

/** The session's responseType when a wallet started from the metadata, with no offer. */
export const WALLET_INITIATED = 'wallet-initiated';

export interface PushResponse {
  request_uri: string;
  expires_in: number;
}

/**
 * How long a wallet-initiated session lives until its authorization code is redeemed, which gives it
 * the offer lifetime (token/authorization-code.ts): time enough for the interactive steps, and an
 * abandoned request does not hold a session open for a day.
 */
export const WALLET_INITIATED_PENDING_SECONDS = 900;

/** S256 challenges are the base64url of a SHA-256 digest: 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export class PushedAuthorizationEndpoint {
  constructor(
    private readonly db: Executor,
    private readonly issuers: IssuerDirectory,
    private readonly sessions: SessionService,
    private readonly configs: CredentialConfigService,
    private readonly dpop: DpopProofs,
    private readonly attestations: WalletAttestations,
    private readonly walletInitiated: WalletInitiatedLimit,
    /** The built-in server, or the chained one (its own handles and identifier). */
    private readonly server: AuthorizationServerRole = BUILTIN_SERVER,
  ) {}

  async push(request: PushRequest): Promise<PushResponse> {
    const issuer = await this.issuers.get(request.tenantId);
    checkEnabled(this.server, issuer);
    const params = parseOAuthParams(PushedAuthorizationRequestSchema, request.body);
    const verified = await this.attestations.verify(issuer, params.client_id, request.attestation, this.server.identifier(issuer));
    const attested = verified?.attested;
    // The DPoP proof is checked now, so that its jti can ride on the offer's read; what is wrong with
    // it is answered at its step below, as before.
    const proof = this.dpopProof(issuer, request);
    checkResponseType(params);
    const codeChallenge = checkPkce(params);
    checkRedirectUri(params);
    checkResource(issuer, params);
    checkCredentialsNamed(params);
    let dpopFresh = true;
    let offer: SessionState | undefined;
    if (params.issuer_state === undefined) {
      if (verified && !(await verified.replay.executeTakeFirst()).numInsertedOrUpdatedRows) throw replayedAttestationProof();
    } else {
      const found = await this.findOffer(issuer, params.issuer_state, verified?.replay, 'thumbprint' in proof ? proof.replay : undefined);
      offer = found.offer;
      dpopFresh = found.dpopFresh;
    }
    const requestable = offer
      ? { ids: issuancePublic(offer).credentialConfigurationIds, of: 'this credential offer' }
      : await this.all(issuer);
    const byDetails = detailsConfigurations(issuer, requestable, params.authorization_details);
    const byScope = await this.scopeConfigurations(issuer, requestable.ids, params.scope);
    const credentialConfigurationIds = [...new Set([...byDetails, ...byScope.map((match) => match.id)])];
    const identified = offer ? [] : await this.identifiable(issuer, credentialConfigurationIds);
    const dpopJkt = await this.dpopKey(proof, params, offer === undefined, dpopFresh);
    const authorizationRequest: AuthorizationRequest = {
      requestId: randomBytes(16).toString('base64url'),
      clientId: params.client_id,
      redirectUri: params.redirect_uri,
      codeChallenge,
      ...(params.state !== undefined && { state: params.state }),
      ...(dpopJkt && { dpopJkt }),
      ...(attested && { attestationJkt: attested.instanceJkt }),
      credentialConfigurationIds,
      byDetails,
      ...(byScope.length && { scope: [...new Set(byScope.map((match) => match.scope))].join(' ') }),
    };
    if (offer) return this.store(offer, authorizationRequest);
    await this.walletInitiated.admit(issuer.tenantId, request.address);
    return this.storeWalletInitiated(issuer, authorizationRequest, identified);
  }

  /** Without an offer the wallet may ask for any configuration of the issuer (as its metadata lists them). */
  private async all({ tenantId }: Issuer) {
    return { ids: (await this.configs.list(tenantId)).map((config) => config.id), of: 'this credential issuer' };
  }

  /**
   * A wallet-initiated request (OpenID4VCI 1.0 section 3) names no offer, so no integrator said whom
   * it is for: each configuration must be one this server identifies the person for by itself.
   */
  private async identifiable({ tenantId }: Issuer, ids: string[]): Promise<CredentialConfiguration[]> {
    const configs: CredentialConfiguration[] = [];
    for (const id of ids) {
      const config = await this.configs.find(tenantId, id);
      if (!config) continue;
      const refusal = this.server.walletInitiatedRefusal(config);
      if (refusal) throw invalidRequest(refusal);
      configs.push(config);
    }
    return configs;
  }

  /**
   * A session of its own for a wallet-initiated request, as an offer would have opened (its claims
   * come from the steps that identify the person), with the request stored in the same transaction.
   */
  private async storeWalletInitiated(
    { tenantId, settings }: Issuer,
    request: AuthorizationRequest,
    configs: CredentialConfiguration[],
  ): Promise<PushResponse> {
    const metadata: IssuancePublic = {
      flow: 'authorization_code',
      responseType: WALLET_INITIATED,
      credentialConfigurationIds: request.credentialConfigurationIds,
      webhookEndpointId: configs.find((config) => config.webhookEndpointId)?.webhookEndpointId ?? null,
      notifications: [],
    };
    const personal: IssuancePrivate = { offer: {}, credentialPayload: { credentialClaims: {} } };
    return inTransaction(this.db, async (trx) => {
      const session = await this.sessions.create(
        {
          tenantId,
          kind: 'issuance',
          clientId: null,
          lifetimeSeconds: Math.min(settings.offerLifetimeSeconds, WALLET_INITIATED_PENDING_SECONDS),
          public: metadata,
          private: personal,
        },
        trx,
      );
      const details = { clientId: request.clientId, credentialConfigurationIds: request.credentialConfigurationIds };
      await this.sessions.log(session.id, 'info', 'wallet-initiated authorization request', details, trx);
      return this.store(session, request, trx);
    });
  }

  /**
   * issuer_state names the offer, and with it the user the integrator identified when making it. The
   * proofs' jtis (client attestation, DPoP) are remembered in the same round trip; a replayed
   * attestation proof is refused here, a replayed DPoP proof at its step (`dpopFresh`).
   */
  private async findOffer(
    issuer: Issuer,
    issuerState: string,
    attestationReplay: OnceInsert | undefined,
    dpopReplay: OnceInsert | undefined,
  ): Promise<{ offer: SessionState; dpopFresh: boolean }> {
    const inserts = [attestationReplay, dpopReplay].filter((insert) => insert !== undefined);
    const { session, inserted } = await this.sessions.findByHandleInsertingEach(this.server.handles.issuerState, issuerState, inserts);
    if (attestationReplay && !inserted[0]) throw replayedAttestationProof();
    const dpopFresh = !dpopReplay || inserted.at(-1) === true;
    if (!session || session.tenantId !== issuer.tenantId) throw invalidRequest('issuer_state names no credential offer of this issuer');
    const refusal = offerRefusal(session);
    if (refusal) throw invalidRequest(refusal);
    return { offer: session, dpopFresh };
  }

  /**
   * Scope values name configurations through their `scope` (each configuration has one, unique in the
   * tenant); values that name none of the offer's are ignored (OpenID4VCI 1.0 section 5.1.2; RFC 6749
   * section 3.3 lets the server narrow them, and the token response then says what it granted).
   */
  private async scopeConfigurations(
    { tenantId }: Issuer,
    offered: string[],
    scope: string | undefined,
  ): Promise<{ id: string; scope: string }[]> {
    if (scope === undefined) return [];
    const values = new Set(scope.split(' ').filter(Boolean));
    const matched: { id: string; scope: string }[] = [];
    for (const id of offered) {
      const scoped = (await this.configs.find(tenantId, id))?.config.scope;
      if (scoped && values.has(scoped)) matched.push({ id, scope: scoped });
    }
    if (!matched.length) throw invalidScope('no scope value names a credential configuration of this offer');
    return matched;
  }

  /** The request's DPoP proof checked but for its novelty, or why it fails (answered at its step, `dpopKey`). */
  private dpopProof({ settings }: Issuer, request: PushRequest): { thumbprint: string; replay: OnceInsert } | { failure: unknown } | {} {
    if (!request.dpop) return {};
    try {
      return this.dpop.check(request.dpop, { tenantId: request.tenantId, method: 'POST', url: request.url, settings });
    } catch (failure) {
      return { failure };
    }
  }

  /**
   * DPoP at PAR is optional; when used (or dpop_jkt is given) the token request must prove the same key
   * (RFC 9449 section 10). Its jti was remembered with the offer's read (`fresh`), or is now (no offer).
   */
  private async dpopKey(
    proof: ReturnType<PushedAuthorizationEndpoint['dpopProof']>,
    params: PushedAuthorizationRequest,
    remember: boolean,
    fresh: boolean,
  ): Promise<string | undefined> {
    if ('failure' in proof) throw proof.failure;
    if (!('thumbprint' in proof)) return params.dpop_jkt;
    if (remember && !(await proof.replay.executeTakeFirst()).numInsertedOrUpdatedRows) throw replayedProof();
    if (!fresh) throw replayedProof();
    if (params.dpop_jkt !== undefined && params.dpop_jkt !== proof.thumbprint)
      throw invalidDpopProof('dpop_jkt does not match the DPoP proof key');
    return proof.thumbprint;
  }

  /**
   * Keeps the request with the offer (only while it is unredeemed) and hands out a fresh request_uri
   * for it. Whatever ran for the request before ends in the same transaction: its request_uri, its
   * code, and an interactive authorization with its handles, so no step done for one request ever
   * authorizes another.
   */
  private async store(session: SessionState, authorizationRequest: AuthorizationRequest, db = this.db): Promise<PushResponse> {
    const secret = randomBytes(32).toString('base64url');
    const expiresAt = new Date(
      Math.min(this.sessions.clock.now().getTime() + REQUEST_URI_LIFETIME_SECONDS * 1000, Date.parse(session.expiresAt)),
    ).toISOString();
    const { handles } = this.server;
    // One statement on PostgreSQL: the request stored (a compare-and-set on the version read), the
    // handles of the request before dropped and the new request_uri added only if it was, the log lines.
    const follows = (current: SessionState) => [
      this.sessions.handlesDropping([handles.requestUri, handles.code, STEP_HANDLE.authSession, STEP_HANDLE.webSession]),
      this.sessions.handleFollowing(handles.requestUri, secret, expiresAt),
      ...(issuancePrivate(current)?.interactiveAuthorization !== undefined ? [this.sessions.logFollowing(ENDED_FLOW)] : []),
    ];
    const stored = await this.sessions.update(
      session.tenantId,
      session.id,
      { private: { authorizationRequest, interactiveAuthorization: undefined } },
      {
        expected: { consumed: false, statuses: ['active', 'fetched'] },
        db,
        from: session,
        log: { level: 'info', message: 'authorization request pushed', details: { clientId: authorizationRequest.clientId } },
        follows,
      },
    );
    if (!stored) throw invalidRequest('the credential offer is no longer valid');
    return {
      request_uri: `${REQUEST_URI_PREFIX}${secret}`,
      expires_in: Math.round((Date.parse(expiresAt) - this.sessions.clock.now().getTime()) / 1000),
    };
  }
}

const ENDED_FLOW = { level: 'warn', message: 'interactive authorization ended: a new authorization request was pushed' } as const;

/**
 * A disabled server takes no authorization requests: invalid_request (RFC 9126 section 2.3 answers
 * with the error codes of RFC 6749; none names a disabled server, and the request cannot be served).
 */
function checkEnabled(server: AuthorizationServerRole, issuer: Issuer) {
  const disabled = server.disabled(issuer);
  if (disabled) throw invalidRequest(disabled);
}

function checkResponseType(params: PushedAuthorizationRequest) {
  if (params.response_type !== 'code') throw unsupportedResponseType('response_type must be code');
}

/** PKCE with S256 only (HAIP; RFC 9700 section 2.1.1): plain would hand the verifier to whoever sees the request. */
function checkPkce(params: PushedAuthorizationRequest): string {
  if (params.code_challenge === undefined) throw invalidRequest('code_challenge is required (PKCE)');
  if (params.code_challenge_method !== 'S256') throw invalidRequest('code_challenge_method must be S256');
  if (!S256_CHALLENGE.test(params.code_challenge)) throw invalidRequest('code_challenge must be a base64url SHA-256 digest');
  return params.code_challenge;
}

function checkRedirectUri(params: PushedAuthorizationRequest) {
  const refusal = redirectUriRefusal(params.redirect_uri);
  if (refusal) throw invalidRequest(refusal);
}

/** A resource indicator (RFC 8707) can only name this credential issuer. */
function checkResource(issuer: Issuer, params: PushedAuthorizationRequest) {
  if (params.resource !== undefined && params.resource !== issuer.urls.issuer) {
    throw invalidTarget('resource must be the credential issuer identifier');
  }
}

/** Each authorization detail names one configuration of the offer, or of the issuer without one (OpenID4VCI 1.0 section 5.1.1). */
function detailsConfigurations(issuer: Issuer, requestable: { ids: string[]; of: string }, raw: string | undefined): string[] {
  if (raw === undefined) return [];
  let json: unknown;
  try {
    json = parseOutsideJson(raw, 'authorization_details');
  } catch (err) {
    if (err instanceof PrototypeMemberRefused) throw invalidAuthorizationDetails(err.message);
    throw invalidAuthorizationDetails('authorization_details must be a JSON array');
  }
  const details = AuthorizationDetailsSchema.safeParse(json);
  if (!details.success) {
    throw invalidAuthorizationDetails('authorization_details must be an array of {type: openid_credential, credential_configuration_id}');
  }
  for (const detail of details.data) {
    if (!requestable.ids.includes(detail.credential_configuration_id)) {
      throw invalidAuthorizationDetails(`'${detail.credential_configuration_id}' is not a credential configuration of ${requestable.of}`);
    }
    const locations = detail.locations;
    if (locations !== undefined && !(Array.isArray(locations) && locations.includes(issuer.urls.issuer))) {
      throw invalidAuthorizationDetails('locations must name this credential issuer');
    }
  }
  return [...new Set(details.data.map((d) => d.credential_configuration_id))];
}

function checkCredentialsNamed(params: PushedAuthorizationRequest) {
  if (params.authorization_details === undefined && params.scope === undefined) {
    throw invalidRequest('authorization_details or scope is required: name the credentials to issue');
  }
}
