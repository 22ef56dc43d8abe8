// Making the credentials of one request: the claims checked against the configuration, one
// credential per holder key (a batch) with a status list entry each when the configuration manages
// status, signed by the configuration's attestation key chain. Shared by the credential endpoint and
// the completion of deferred transactions.

import type { JWK } from 'jose';
import type { OperationNodeSource } from 'kysely';
import { type CredentialConfiguration, validateClaims } from '../../credential-configs/service.js';
import { formatOfConfiguration } from '../../formats/index.js';
import type { SigningService } from '../../key-chains/signing.js';
import type { Clock } from '../../platform/clock.js';
import type { Metrics } from '../../platform/observability/metrics.js';
import { credentialRequestDenied } from '../errors.js';
import { type IssuerUrls, vctOf } from '../urls.js';

/** The INSERT (with RETURNING) that writes allocated status entries' rows. */
export type StatusRecord = OperationNodeSource & { execute(): Promise<unknown[]> };

export interface StatusEntryAllocator {
  allocateUnrecorded(
    tenantId: string,
    request: { credentialConfigurationId: string; sessionId?: string | null; count?: number },
  ): Promise<{ entries: { idx: number; uri: string }[]; record: StatusRecord }>;
}

export interface MintRequest {
  urls: IssuerUrls;
  tenantId: string;
  config: CredentialConfiguration;
  claims: Record<string, unknown>;
  holderJwks: JWK[];
  sessionId?: string;
  /**
   * The issuer's OpenID Federation entity identifier when the settings name one other than the
   * credential issuer: the iss of credentials with federation trust, from which verifiers resolve the chain.
   */
  federationEntityId?: string;
}

export class CredentialMinter {
  constructor(
    private readonly signing: SigningService,
    private readonly metrics: Pick<Metrics, 'credentialsIssued'>,
    private readonly clock: Clock,
    /** Absent: no status list entries are given. */
    private readonly statusEntries?: StatusEntryAllocator,
  ) {}

  /** The credentials, their status entries recorded. */
  async mint(request: MintRequest): Promise<string[]> {
    const { credentials, statusRecord } = await this.mintUnrecorded(request);
    await statusRecord?.execute();
    return credentials;
  }

  /**
   * The credentials, and `statusRecord`, the statement that records their status entries (when they
   * have any), for the caller to send before it hands them out: with its own (one round trip less).
   */
  async mintUnrecorded({
    urls,
    tenantId,
    config,
    claims,
    holderJwks,
    sessionId,
    federationEntityId,
  }: MintRequest): Promise<{ credentials: string[]; statusRecord?: StatusRecord }> {
    const problems = validateClaims(config, claims);
    if (problems.length) {
      const described = problems.map((p) => `${p.path.join('.')}: ${p.message}`).join('; ');
      throw credentialRequestDenied(`the claims do not satisfy the configuration: ${described}`);
    }
    const format = formatOfConfiguration(config);
    const signer = await this.signing.signer(tenantId, { keyChainId: config.keyChainId, usageType: 'attestation' });
    const keys: (JWK | undefined)[] = config.keyBinding === false || holderJwks.length === 0 ? [undefined] : holderJwks;
    // One status list entry per credential: `status` in the SD-JWT VC payload or in the mdoc MSO.
    const allocated =
      config.statusManagement && this.statusEntries
        ? await this.statusEntries.allocateUnrecorded(tenantId, { credentialConfigurationId: config.id, sessionId, count: keys.length })
        : undefined;
    const statuses = allocated?.entries;
    const issuedAt = this.clock.now();
    const credentials = await Promise.all(
      keys.map(async (holderJwk, i) => {
        const entry = statuses?.[i];
        const status = entry && { status_list: { idx: entry.idx, uri: entry.uri } };
        return format.issue(
          { config, claims, holderJwk, status, issuer: urls.issuer, federationEntityId, vct: vctOf(config, urls), issuedAt },
          signer,
        );
      }),
    );
    this.metrics.credentialsIssued(tenantId, config.config.format, credentials.length);
    return { credentials, statusRecord: allocated?.record };
  }
}
