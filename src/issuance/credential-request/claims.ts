// Where the claims of a credential come from: inline in the offer (checked then), an attribute
// provider or a webhook asked at issuance, or the fields' default values.
import type { JWK } from 'jose';
import { type CredentialConfiguration, defaultClaims } from '../../credential-configs/service.js';
import type { HttpEndpointService, ResolvedEndpoint } from '../../http-endpoints/service.js';
import { jsonObjectOf, type OutboundClient } from '../../platform/http/outbound-client.js';
import { isJsonObject } from '../../platform/json.js';
import type { SessionService } from '../../sessions/service.js';
import type { ClaimSource } from '../credential-offer/schemas.js';
import { credentialRequestDenied } from '../errors.js';
import type { AuthorizationResult } from '../session.js';

const PROVIDER_TIMEOUT_MS = 5_000;

/** Given claims over the fields' defaults, object by object (an mdoc namespace keeps the defaults it does not override). */
export function mergeClaims(defaults: Record<string, unknown>, given: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...defaults };
  for (const [key, value] of Object.entries(given)) {
    const base = merged[key];
    merged[key] = isJsonObject(base) && isJsonObject(value) ? mergeClaims(base, value) : value;
  }
  return merged;
}

export type ClaimsResult = { ready: true; claims: Record<string, unknown> } | { ready: false; message?: string };

/**
 * The attribute provider protocol: POST {sessionId, tenantId, credentialConfigurationId, holderJwks,
 * authorization?} as JSON (authorization: what the user's authorization produced, when it did); 200 {claims} issues, 202 (optionally {message}) defers the credential until the claims
 * are supplied through POST /api/issuer/deferred/{transactionId}/complete.
 */
async function askEndpoint(outbound: OutboundClient, endpoint: ResolvedEndpoint, body: Record<string, unknown>): Promise<ClaimsResult> {
  const response = await outbound.request(endpoint.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...endpoint.headers },
    body: JSON.stringify(body),
    timeoutMs: PROVIDER_TIMEOUT_MS,
  });
  const answer = (jsonObjectOf(response) ?? {}) as { claims?: unknown; message?: string };
  if (response.status === 202) return { ready: false, ...(answer.message && { message: answer.message }) };
  if (!response.ok) throw new Error(`answered ${response.status}`);
  if (!answer.claims || typeof answer.claims !== 'object' || Array.isArray(answer.claims))
    throw new Error('answered without a claims object');
  return { ready: true, claims: answer.claims as Record<string, unknown> };
}

export class ClaimSources {
  constructor(
    private readonly attributeProviders: HttpEndpointService,
    private readonly outbound: OutboundClient,
    private readonly sessions: SessionService,
  ) {}

  /**
   * The claims of one credential: inline, asked of the attribute source (which may defer them), or the
   * defaults; what the user's authorization produced is laid over the defaults first.
   */
  async obtain(
    session: { id: string; tenantId: string },
    config: CredentialConfiguration,
    source: ClaimSource | undefined,
    holderJwks: JWK[],
    authorization?: AuthorizationResult,
  ): Promise<ClaimsResult> {
    const defaults = mergeClaims(defaultClaims(config), authorization?.claims ?? {});
    if (source?.type === 'inline') return { ready: true, claims: mergeClaims(defaults, source.claims) };
    const endpoint = await this.endpointOf(session.tenantId, config, source);
    if (!endpoint) return { ready: true, claims: defaults };
    try {
      const result = await askEndpoint(this.outbound, endpoint, {
        sessionId: session.id,
        tenantId: session.tenantId,
        credentialConfigurationId: config.id,
        holderJwks,
        ...(authorization && { authorization }),
      });
      await this.sessions.log(
        session.id,
        'info',
        result.ready ? 'claims received from the attribute source' : 'attribute source deferred the claims',
        { credentialConfigurationId: config.id },
      );
      return result.ready ? { ready: true, claims: mergeClaims(defaults, result.claims) } : result;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      await this.sessions.log(session.id, 'error', 'attribute source failed', { credentialConfigurationId: config.id, reason });
      throw credentialRequestDenied('the claims for this credential could not be obtained');
    }
  }

  /** The offer's webhook or attribute provider, else the configuration's attribute provider. */
  private async endpointOf(tenantId: string, config: CredentialConfiguration, source: ClaimSource | undefined) {
    if (source?.type === 'webhook') {
      const auth = source.webhook.auth;
      return { url: source.webhook.url, headers: auth?.type === 'header' ? { [auth.header.name]: auth.header.value } : {} };
    }
    const providerId = source?.type === 'attributeProvider' ? source.attributeProviderId : source ? undefined : config.attributeProviderId;
    return providerId ? this.attributeProviders.resolve(tenantId, providerId) : undefined;
  }
}
