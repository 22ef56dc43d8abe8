// Where the claims of a credential come from: inline in the offer (checked then), an attribute
// provider or a webhook asked at issuance, or the fields' default values.
import type { JWK } from 'jose';
import { type CredentialConfiguration, defaultClaims, type FieldDefinition } from '../../credential-configs/service.js';
import type { HttpEndpointService, ResolvedEndpoint } from '../../http-endpoints/service.js';
import { isJsonObject } from '../../platform/json.js';
import { jsonObjectOf, type OutboundClient } from '../../platform/outbound/client.js';
import type { SessionService } from '../../sessions/service.js';
import { type ClaimSource, mergeClaims } from '../claim-sources.js';
import { credentialRequestDenied } from '../errors.js';
import type { AuthorizationResult } from '../session.js';

const PROVIDER_TIMEOUT_MS = 5_000;

/** The claim names a configuration declares, as a tree: a leaf takes any value, a node only its declared members. */
type DeclaredNames = Map<string, DeclaredNames | 'any'>;

function declaredNames(config: CredentialConfiguration): DeclaredNames {
  const root: DeclaredNames = new Map();
  const child = (node: DeclaredNames, name: string): DeclaredNames => {
    const existing = node.get(name);
    // Below a name taken whole, nothing narrows it: what is added there is dropped.
    if (existing === 'any') return new Map();
    if (existing) return existing;
    const created: DeclaredNames = new Map();
    node.set(name, created);
    return created;
  };
  // A child's path continues its parent's; a path through an array (an index or null) is taken whole from there.
  const add = (field: FieldDefinition, at: DeclaredNames) => {
    const arrayAt = field.path.findIndex((segment) => typeof segment !== 'string');
    // A copy: the configuration's own path must stay as it is.
    const names = field.path.slice(0, arrayAt < 0 ? undefined : arrayAt) as string[];
    const last = names.pop();
    if (last === undefined) return;
    const parent = names.reduce(child, at);
    if (arrayAt >= 0 || !field.children?.length) parent.set(last, 'any');
    else for (const member of field.children) add(member, child(parent, last));
  };
  for (const field of config.fields) add(field, field.namespace ? child(root, field.namespace) : root);
  return root;
}

/**
 * What of the authorization's claims the configuration declares: the user's authorization yields one
 * record for the whole session (a presentation's claims, an upstream provider's), and each credential
 * takes the part its fields name; the rest would fail its issuance as undeclared.
 */
function declaredPart(claims: Record<string, unknown>, names: DeclaredNames): Record<string, unknown> {
  const part: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(claims)) {
    const node = names.get(name);
    if (node === 'any') part[name] = value;
    else if (node && isJsonObject(value)) {
      const inner = declaredPart(value, node);
      if (Object.keys(inner).length) part[name] = inner;
    }
  }
  return part;
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
    const authorized = authorization ? declaredPart(authorization.claims, declaredNames(config)) : {};
    const defaults = mergeClaims(defaultClaims(config), authorized);
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
