// What issuance needs from other features, as narrow interfaces: app.ts wires the real services.

export interface FieldDefinition {
  path: (string | number | null)[];
  type?: string;
  defaultValue?: unknown;
  mandatory?: boolean;
  disclosable?: boolean;
  namespace?: string;
  display?: { locale?: string; name?: string; description?: string }[];
  children?: FieldDefinition[] | null;
}

export interface CredentialConfiguration {
  id: string;
  config: {
    format: 'dc+sd-jwt' | 'mso_mdoc';
    display?: Record<string, unknown>[];
    scope?: string;
    docType?: string;
    keyAttestationsRequired?: Record<string, unknown> | null;
  };
  fields: FieldDefinition[];
  vct?: string | Record<string, unknown> | null;
  keyBinding?: boolean;
  keyChainId?: string | null;
  statusManagement?: boolean;
  lifeTime?: number | null;
  attributeProviderId?: string | null;
  webhookEndpointId?: string | null;
  sdJwtTrustFormat?: 'x5c' | 'federation' | null;
  updatedAt: string;
}

export interface ClaimProblem {
  path: string;
  message: string;
}

export interface CredentialConfigurations {
  list(tenantId: string): Promise<CredentialConfiguration[]>;
  /** Throws a 404 problem for an unknown id. */
  get(tenantId: string, id: string): Promise<CredentialConfiguration>;
  defaultClaims(config: CredentialConfiguration): Record<string, unknown>;
  validateClaims(config: CredentialConfiguration, claims: Record<string, unknown>): ClaimProblem[];
}

/** An HTTP endpoint of the tenant (attribute provider or webhook endpoint) with its auth headers. */
export interface ResolvedEndpoint {
  url: string;
  headers: Record<string, string>;
}

export interface EndpointResolver {
  /** Throws a 404 problem for an unknown id. */
  resolve(tenantId: string, id: string): Promise<ResolvedEndpoint>;
}
