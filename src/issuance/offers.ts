// Credential offers (OpenID4VCI 1.0 section 4): a session, a pre-authorized code for the wallet,
// and the offer served by reference so that the QR code stays small.
import { randomBytes } from 'node:crypto';
import type { RequestContext } from '../platform/auth/principal.js';
import { badRequest, type FieldError, forbidden, unlessNotFound } from '../platform/http/problem.js';
import { hashHandle } from '../sessions/service.js';
import { mergeClaims } from './claims.js';
import type { IssuanceDeps } from './deps.js';
import { authorizationServers, issuerUrls } from './metadata.js';
import type { CredentialConfiguration } from './ports.js';

export const PRE_AUTHORIZED_GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
export const HANDLE = { preAuthorizedCode: 'pre-authorized_code', offer: 'credential_offer' } as const;

export type ClaimSource =
  | { type: 'inline'; claims: Record<string, unknown> }
  | { type: 'attributeProvider'; attributeProviderId: string }
  | { type: 'webhook'; webhook: { url: string; auth?: { type: 'none' } | { type: 'header'; header: { name: string; value: string } } } };

export interface OfferRequest {
  response_type: 'uri' | 'dc-api' | 'iso-18013-7';
  flow: 'authorization_code' | 'pre_authorized_code';
  credentialConfigurationIds: string[];
  authorization_server?: string;
  credentialClaims?: Record<string, ClaimSource>;
  tx_code?: string;
  tx_code_description?: string;
  webhookEndpointId?: string;
}

export interface CreatedOffer {
  uri: string;
  session: string;
  credentialOffer: Record<string, unknown>;
  credentialOfferUri: string;
  expiresAt: string;
}

const notYet = (field: string, value: string) =>
  badRequest(`${field}: '${value}' is not supported yet`, [{ field, message: `'${value}' is not supported yet; use the default` }]);

function checkSupported(input: OfferRequest) {
  if (input.response_type !== 'uri') throw notYet('body.response_type', input.response_type);
  if (input.flow !== 'pre_authorized_code') throw notYet('body.flow', input.flow);
}

function checkAllowed(ctx: RequestContext, ids: string[]) {
  const allowed = ctx.principal.allowedIssuanceConfigs;
  if (!allowed?.length) return;
  const refused = ids.filter((id) => !allowed.includes(id));
  if (refused.length) throw forbidden(`this client may not offer ${refused.join(', ')} (allowedIssuanceConfigs)`);
}

export class OfferService {
  constructor(private readonly deps: IssuanceDeps) {}

  private async configurations(tenantId: string, ids: string[]) {
    const problems: FieldError[] = [];
    const configs: CredentialConfiguration[] = [];
    for (const [i, id] of ids.entries()) {
      try {
        configs.push(await this.deps.configs.get(tenantId, id));
      } catch {
        problems.push({ field: `body.credentialConfigurationIds.${i}`, message: `no credential configuration '${id}'` });
      }
    }
    if (problems.length) throw badRequest(problems.map((p) => p.message).join('; '), problems);
    return configs;
  }

  /** Inline claims are checked now (merged over the fields' defaults); other sources are asked at issuance. */
  private async checkClaims(tenantId: string, configs: CredentialConfiguration[], sources: Record<string, ClaimSource>) {
    const problems: FieldError[] = [];
    for (const key of Object.keys(sources)) {
      if (!configs.some((c) => c.id === key))
        problems.push({ field: `body.credentialClaims.${key}`, message: 'is not one of credentialConfigurationIds' });
    }
    for (const config of configs) {
      const source = sources[config.id];
      if (source?.type === 'attributeProvider') {
        if (!(await unlessNotFound(this.deps.attributeProviders.resolve(tenantId, source.attributeProviderId)))) {
          problems.push({
            field: `body.credentialClaims.${config.id}.attributeProviderId`,
            message: `no attribute provider '${source.attributeProviderId}'`,
          });
        }
      }
      const refusal = source?.type === 'webhook' ? this.deps.outbound.urlRefusal(source.webhook.url) : undefined;
      if (refusal) problems.push({ field: `body.credentialClaims.${config.id}.webhook.url`, message: refusal });
      if (source?.type === 'webhook' || source?.type === 'attributeProvider' || (!source && config.attributeProviderId)) continue;
      const claims = mergeClaims(this.deps.configs.defaultClaims(config), source?.type === 'inline' ? source.claims : {});
      for (const p of this.deps.configs.validateClaims(config, claims)) {
        problems.push({ field: `body.credentialClaims.${config.id}.claims${p.path ? `.${p.path}` : ''}`, message: p.message });
      }
    }
    if (problems.length) throw badRequest(problems.map((p) => `${p.field}: ${p.message}`).join('; '), problems);
  }

  async create(ctx: RequestContext, tenantId: string, input: OfferRequest): Promise<CreatedOffer> {
    checkSupported(input);
    checkAllowed(ctx, input.credentialConfigurationIds);
    const configs = await this.configurations(tenantId, input.credentialConfigurationIds);
    await this.checkClaims(tenantId, configs, input.credentialClaims ?? {});
    const settings = await this.deps.settings.get(tenantId);
    const urls = issuerUrls(this.deps.publicUrl, tenantId);
    const servers = authorizationServers(urls, settings);
    const server = input.authorization_server ?? servers[0];
    if (server !== urls.issuer) {
      throw badRequest('authorization_server: pre-authorized codes are redeemed at the built-in authorization server', [
        {
          field: 'body.authorization_server',
          message: servers.includes(server ?? '')
            ? 'must be the built-in authorization server for this flow'
            : 'is not an enabled authorization server',
        },
      ]);
    }
    if (input.webhookEndpointId) {
      if (!(await unlessNotFound(this.deps.webhookEndpoints.resolve(tenantId, input.webhookEndpointId)))) {
        throw badRequest(`webhookEndpointId: no webhook endpoint '${input.webhookEndpointId}'`, [
          { field: 'body.webhookEndpointId', message: 'no such webhook endpoint' },
        ]);
      }
    }

    const code = randomBytes(32).toString('base64url');
    const offerHandle = randomBytes(24).toString('base64url');
    const credentialOffer = {
      credential_issuer: urls.issuer,
      credential_configuration_ids: input.credentialConfigurationIds,
      grants: {
        [PRE_AUTHORIZED_GRANT]: {
          'pre-authorized_code': code,
          ...(input.tx_code && {
            tx_code: {
              input_mode: /^\d+$/.test(input.tx_code) ? 'numeric' : 'text',
              length: input.tx_code.length,
              ...(input.tx_code_description && { description: input.tx_code_description }),
            },
          }),
        },
      },
    };
    const credentialOfferUri = `${urls.issuer}/credential-offer/${offerHandle}`;
    const uri = `openid-credential-offer://?credential_offer_uri=${encodeURIComponent(credentialOfferUri)}`;
    const session = await this.deps.db.transaction().execute(async (trx) => {
      const created = await this.deps.sessions.create(
        {
          tenantId,
          kind: 'issuance',
          clientId: ctx.principal.clientId,
          lifetimeSeconds: settings.offerLifetimeSeconds,
          public: {
            flow: input.flow,
            responseType: input.response_type,
            credentialConfigurationIds: input.credentialConfigurationIds,
            offerUrl: uri,
            txCodeRequired: Boolean(input.tx_code),
            ...(input.webhookEndpointId && { webhookEndpointId: input.webhookEndpointId }),
            notifications: [],
          },
          private: {
            offer: credentialOffer,
            credentialPayload: { credentialClaims: input.credentialClaims ?? {} },
            ...(input.tx_code && { txCodeHash: hashHandle(input.tx_code) }),
          },
        },
        trx,
      );
      await this.deps.sessions.addHandle(created.id, HANDLE.preAuthorizedCode, code, created.expiresAt, trx);
      await this.deps.sessions.addHandle(created.id, HANDLE.offer, offerHandle, created.expiresAt, trx);
      await this.deps.sessions.log(
        created.id,
        'info',
        'offer created',
        { credentialConfigurationIds: input.credentialConfigurationIds, by: ctx.principal.clientId },
        trx,
      );
      return created;
    });
    return { uri, session: session.id, credentialOffer, credentialOfferUri, expiresAt: session.expiresAt };
  }

  /** The offer behind credential_offer_uri; fetching it moves the session to `fetched`. */
  async byReference(tenantId: string, handle: string) {
    const session = await this.deps.sessions.findByHandle(HANDLE.offer, handle);
    if (!session || session.tenantId !== tenantId || session.status === 'expired') return undefined;
    await this.deps.sessions.update(tenantId, session.id, { status: 'fetched' }, { statuses: ['active'] });
    return session.private?.offer as Record<string, unknown> | undefined;
  }
}
