// Credential offers (OpenID4VCI 1.0 section 4): a session, a pre-authorized code for the wallet,
// and the offer served by reference so that the QR code stays small. `create` checks, in order: the
// flow is available, the client may offer these configurations, they exist, their claims are valid,
// the authorization server and webhook endpoint named exist; then it opens the session.
import { randomBytes } from 'node:crypto';
import {
  type CredentialConfigService,
  type CredentialConfiguration,
  defaultClaims,
  validateClaims,
} from '../../credential-configs/service.js';
import type { HttpEndpointService } from '../../http-endpoints/service.js';
import type { RequestContext } from '../../platform/auth/principal.js';
import type { Executor } from '../../platform/db/values.js';
import { badRequest, type FieldError, forbidden, unlessNotFound } from '../../platform/http/problem.js';
import type { OutboundClient } from '../../platform/outbound/client.js';
import type { SessionService } from '../../sessions/service.js';
import { hashHandle } from '../../sessions/service.js';
import { type ClaimSource, mergeClaims } from '../claim-sources.js';
import { PRE_AUTHORIZED_GRANT } from '../grants.js';
import { CHAINED_HANDLE, OFFER_HANDLE } from '../handles.js';
import type { Issuer, IssuerDirectory } from '../issuers.js';
import { authorizationServers } from '../metadata/metadata.js';
import { type IssuancePrivate, type IssuancePublic, issuancePrivate } from '../session.js';
import { type CreatedOffer, DC_API_PROTOCOL, type OfferRequest } from './schemas.js';

/** iso-18013-7 (Annex C) is a way to ask for a presentation; it has no issuance counterpart. */
function checkSupported(input: OfferRequest) {
  if (input.response_type === 'iso-18013-7') {
    throw badRequest("response_type: 'iso-18013-7' is a presentation flow; offers use uri or dc-api", [
      { field: 'body.response_type', message: 'must be uri or dc-api for an offer' },
    ]);
  }
}

/** A transaction code protects a pre-authorized code; in the authorization code flow the authorization step does that. */
function checkFlowFields(input: OfferRequest) {
  if (input.flow === 'authorization_code' && input.tx_code !== undefined) {
    throw badRequest('tx_code: only the pre-authorized code flow uses a transaction code', [
      { field: 'body.tx_code', message: 'only for flow pre_authorized_code' },
    ]);
  }
}

/**
 * The chained authorization server authorizes by the upstream login alone; the steps of interactive
 * authorization are run by the built-in server's interactive authorization endpoint only, so a
 * configuration that asks for them cannot be offered through the chained one.
 */
function checkNoInteractiveSteps(configs: CredentialConfiguration[]) {
  const interactive = configs.filter((c) => c.iaeActions?.length).map((c) => c.id);
  if (!interactive.length) return;
  throw badRequest(`authorization_server: ${interactive.join(', ')} need interactive authorization, which the built-in server runs`, [
    { field: 'body.authorization_server', message: `the chained authorization server runs no iaeActions (of ${interactive.join(', ')})` },
  ]);
}

function checkAllowed(ctx: RequestContext, ids: string[]) {
  const allowed = ctx.principal.allowedIssuanceConfigs;
  if (!allowed?.length) return;
  const refused = ids.filter((id) => !allowed.includes(id));
  if (refused.length) throw forbidden(`this client may not offer ${refused.join(', ')} (allowedIssuanceConfigs)`);
}

export class OfferService {
  constructor(
    private readonly db: Executor,
    private readonly issuers: IssuerDirectory,
    private readonly sessions: SessionService,
    private readonly configs: CredentialConfigService,
    private readonly attributeProviders: HttpEndpointService,
    private readonly webhookEndpoints: HttpEndpointService,
    private readonly outbound: OutboundClient,
  ) {}

  private async configurations(tenantId: string, ids: string[]) {
    const problems: FieldError[] = [];
    const configs: CredentialConfiguration[] = [];
    for (const [i, id] of ids.entries()) {
      const config = await this.configs.find(tenantId, id);
      if (config) configs.push(config);
      else problems.push({ field: `body.credentialConfigurationIds.${i}`, message: `no credential configuration '${id}'` });
    }
    if (problems.length) throw badRequest(problems.map((p) => p.message).join('; '), problems);
    return configs;
  }

  /**
   * Inline claims are checked now (merged over the fields' defaults); other sources are asked at
   * issuance, and so is interactive authorization (iaeActions) in the authorization code flow, whose
   * steps supply claims only once the user went through them, and so is the login at the chained
   * authorization server (upstreamLogin), whose provider supplies them then.
   */
  private async checkClaims(
    tenantId: string,
    configs: CredentialConfiguration[],
    sources: Record<string, ClaimSource>,
    flow: string,
    upstreamLogin = false,
  ) {
    const problems: FieldError[] = [];
    for (const key of Object.keys(sources)) {
      if (!configs.some((c) => c.id === key))
        problems.push({ field: `body.credentialClaims.${key}`, message: 'is not one of credentialConfigurationIds' });
    }
    for (const config of configs) {
      if (!sources[config.id] && flow === 'authorization_code' && (upstreamLogin || config.iaeActions?.length)) continue;
      problems.push(...(await this.claimProblems(tenantId, config, sources[config.id])));
    }
    if (problems.length) throw badRequest(problems.map((p) => `${p.field}: ${p.message}`).join('; '), problems);
  }

  private async claimProblems(tenantId: string, config: CredentialConfiguration, source: ClaimSource | undefined): Promise<FieldError[]> {
    const at = `body.credentialClaims.${config.id}`;
    if (source?.type === 'attributeProvider') {
      const found = await unlessNotFound(this.attributeProviders.resolve(tenantId, source.attributeProviderId));
      return found ? [] : [{ field: `${at}.attributeProviderId`, message: `no attribute provider '${source.attributeProviderId}'` }];
    }
    if (source?.type === 'webhook') {
      const refusal = this.outbound.urlRefusal(source.webhook.url);
      return refusal ? [{ field: `${at}.webhook.url`, message: refusal }] : [];
    }
    if (!source && config.attributeProviderId) return [];
    const claims = mergeClaims(defaultClaims(config), source?.claims ?? {});
    return validateClaims(config, claims).map((p) => ({
      field: `${at}.claims${p.path.length ? `.${p.path.join('.')}` : ''}`,
      message: p.message,
    }));
  }

  /**
   * The authorization server of the offer: one the issuer lists (the first by default). The built-in
   * server serves both flows; the chained one and external ones (issuer settings authorizationServers)
   * the authorization code flow only, since a pre-authorized code is redeemed at the built-in token
   * endpoint. That endpoint takes pre-authorized codes even while the built-in server is disabled
   * (builtinAuthorizationServerEnabled false: it is not listed then, and authorizes nothing), so a
   * pre-authorized offer defaults to it, and only an authorization code offer is refused it.
   */
  private checkAuthorizationServer(issuer: Issuer, input: OfferRequest): string {
    const servers = authorizationServers(issuer.urls, issuer.settings);
    const builtin = issuer.urls.issuer;
    const byCode = input.flow === 'authorization_code';
    const server = input.authorization_server ?? (byCode ? servers[0] : builtin);
    if (server === builtin && byCode && !issuer.settings.builtinAuthorizationServerEnabled) {
      throw badRequest(
        'authorization_server: the built-in authorization server is disabled (issuer settings builtinAuthorizationServerEnabled)',
        [{ field: 'body.authorization_server', message: 'the built-in authorization server is disabled' }],
      );
    }
    if (server === builtin) return server;
    if (server === undefined) {
      throw badRequest(
        'authorization_server: no enabled authorization server serves the authorization code flow (the built-in one is disabled, and no chained or external one is enabled)',
        [{ field: 'body.authorization_server', message: 'no enabled authorization server serves the authorization code flow' }],
      );
    }
    if (!servers.includes(server)) {
      throw badRequest('authorization_server: not an enabled authorization server of this issuer', [
        { field: 'body.authorization_server', message: 'is not an enabled authorization server' },
      ]);
    }
    if (!byCode) {
      throw badRequest('authorization_server: the pre-authorized code flow is served by the built-in authorization server only', [
        { field: 'body.authorization_server', message: 'must be the built-in authorization server for this flow' },
      ]);
    }
    return server;
  }

  private async checkWebhookEndpoint(tenantId: string, id: string | undefined) {
    if (!id || (await unlessNotFound(this.webhookEndpoints.resolve(tenantId, id)))) return;
    throw badRequest(`webhookEndpointId: no webhook endpoint '${id}'`, [
      { field: 'body.webhookEndpointId', message: 'no such webhook endpoint' },
    ]);
  }

  async create(ctx: RequestContext, tenantId: string, input: OfferRequest): Promise<CreatedOffer> {
    checkSupported(input);
    checkFlowFields(input);
    checkAllowed(ctx, input.credentialConfigurationIds);
    const issuer = await this.issuers.get(tenantId);
    const configs = await this.configurations(tenantId, input.credentialConfigurationIds);
    const server = this.checkAuthorizationServer(issuer, input);
    const upstreamLogin = server === issuer.urls.chainedAuthorizationServer;
    if (upstreamLogin) checkNoInteractiveSteps(configs);
    await this.checkClaims(tenantId, configs, input.credentialClaims ?? {}, input.flow, upstreamLogin);
    await this.checkWebhookEndpoint(tenantId, input.webhookEndpointId);
    const webhookEndpointId = input.webhookEndpointId ?? configs.find((c) => c.webhookEndpointId)?.webhookEndpointId ?? null;
    return this.open(ctx, issuer, input, webhookEndpointId, server);
  }

  /** The session of the offer, the secret of its grant (pre-authorized code or issuer_state) and its offer handle, in one transaction. */
  private async open(
    ctx: RequestContext,
    { tenantId, urls, settings }: Issuer,
    input: OfferRequest,
    webhookEndpointId: string | null,
    server: string,
  ): Promise<CreatedOffer> {
    const grant = offerGrant(input, { server, urls, several: authorizationServers(urls, settings).length > 1 });
    const offerHandle = randomBytes(24).toString('base64url');
    const credentialOffer = {
      credential_issuer: urls.issuer,
      credential_configuration_ids: input.credentialConfigurationIds,
      grants: grant.grants,
    };
    const credentialOfferUri = `${urls.issuer}/credential-offer/${offerHandle}`;
    const uri = `openid-credential-offer://?credential_offer_uri=${encodeURIComponent(credentialOfferUri)}`;
    const publicData: IssuancePublic = {
      flow: input.flow,
      responseType: input.response_type,
      credentialConfigurationIds: input.credentialConfigurationIds,
      offerUrl: uri,
      txCodeRequired: Boolean(input.tx_code),
      webhookEndpointId,
      notifications: [],
    };
    const privateData: IssuancePrivate = {
      offer: credentialOffer,
      credentialPayload: { credentialClaims: input.credentialClaims ?? {} },
      ...(input.tx_code && { txCodeHash: hashHandle(input.tx_code) }),
    };
    const handles = [
      ...(grant.handle ? [{ purpose: grant.handle, secret: grant.secret }] : []),
      { purpose: OFFER_HANDLE.offer, secret: offerHandle },
    ];
    const details = { credentialConfigurationIds: input.credentialConfigurationIds, by: ctx.principal.clientId };
    const session = await this.sessions.create(
      {
        tenantId,
        kind: 'issuance',
        clientId: ctx.principal.clientId,
        lifetimeSeconds: settings.offerLifetimeSeconds,
        public: publicData,
        private: privateData,
      },
      this.db,
      { handles, log: { level: 'info', message: 'offer created', details } },
    );
    const created = { uri, session: session.id, credentialOffer, credentialOfferUri, expiresAt: session.expiresAt };
    // Over the DC API the offer goes by value to the wallet the browser picks; the flow then goes on
    // at the issuer's endpoints as for any offer.
    return input.response_type === 'dc-api' ? { ...created, dcApiRequest: { protocol: DC_API_PROTOCOL, data: credentialOffer } } : created;
  }

  /** The offer behind credential_offer_uri; fetching it moves the session to `fetched`. */
  async byReference(tenantId: string, handle: string): Promise<Record<string, unknown> | undefined> {
    // Read and moved in one statement (on PostgreSQL); a second fetch finds it fetched and leaves it so.
    const { session } = await this.sessions.moveByHandle(OFFER_HANDLE.offer, handle, { from: 'active', to: 'fetched', tenantId });
    if (!session || session.status === 'expired') return undefined;
    return issuancePrivate(session)?.offer;
  }
}

/**
 * The grant of the offer and the secret it carries: a pre-authorized code, or the issuer_state that
 * ties the wallet's authorization request to this offer (and so to the user the integrator identified).
 * authorization_server is named only when the issuer lists several (OpenID4VCI 1.0 section 4.1.1).
 * The issuer_state is kept under the handle of the server that serves the offer, so that no other
 * one takes it; an external authorization server serves the authorization itself (this service sees
 * none of it), so its issuer_state is kept under none.
 */
function offerGrant(input: OfferRequest, target: { server: string; urls: Issuer['urls']; several: boolean }) {
  const secret = randomBytes(32).toString('base64url');
  if (input.flow === 'authorization_code') {
    const grant = { issuer_state: secret, ...(target.several && { authorization_server: target.server }) };
    return { handle: issuerStateHandle(target.server, target.urls), secret, grants: { authorization_code: grant } };
  }
  const grant = { 'pre-authorized_code': secret, ...txCodeDescription(input) };
  return { handle: OFFER_HANDLE.preAuthorizedCode, secret, grants: { [PRE_AUTHORIZED_GRANT]: grant } };
}

function issuerStateHandle(server: string, urls: Issuer['urls']): string | undefined {
  if (server === urls.issuer) return OFFER_HANDLE.issuerState;
  if (server === urls.chainedAuthorizationServer) return CHAINED_HANDLE.issuerState;
  return undefined;
}

/** What the wallet shows its user about the transaction code (the code itself goes out of band). */
function txCodeDescription(input: OfferRequest) {
  if (!input.tx_code) return {};
  return {
    tx_code: {
      input_mode: /^\d+$/.test(input.tx_code) ? 'numeric' : 'text',
      length: input.tx_code.length,
      ...(input.tx_code_description && { description: input.tx_code_description }),
    },
  };
}
