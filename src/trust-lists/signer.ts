// Building and signing a list: the LoTE of a prepared input at a sequence number, issued now, signed
// as a JWS with the tenant's trustList key chain, and the times at which it must be signed again.
import type { SigningService } from '../key-chains/signing.js';
import type { Clock } from '../platform/clock.js';
import type { Prepared } from './entities.js';
import { buildLote, type LoteDocument, loteDateTime, trustedEntity } from './lote.js';

/** How long a signed list is valid: NextUpdate = ListIssueDateTime + this. */
export const TRUST_LIST_VALIDITY_SECONDS = 24 * 3600;
/** The scheduled job re-signs a list this long before its NextUpdate. */
export const TRUST_LIST_RESIGN_MARGIN_SECONDS = 6 * 3600;
/** The JOSE typ of a signed list, as the @owf/eudi-lote signer and its consumers use it. */
export const TRUST_LIST_JWT_TYPE = 'trustlist+jwt';

export interface TrustListSignerDeps {
  signing: SigningService;
  publicUrl: string;
  /** SchemeTerritory unless the list's data says otherwise. */
  country: string;
  /** SchemeOperatorName unless the list's data says otherwise. */
  tenantName(tenantId: string): Promise<string>;
  validitySeconds?: number;
  resignMarginSeconds?: number;
  /** ListIssueDateTime is its time, in whole seconds. */
  clock: Clock;
}

export interface Built {
  data: LoteDocument;
  issuedAt: Date;
  nextUpdate: Date;
}

export interface Signed {
  data: LoteDocument;
  jwt: string;
  issuedAt: string;
  nextUpdate: string;
  resignAt: string;
}

/** The content of a list, without the times that change on every signing. */
export function contentOf(data: LoteDocument): string {
  const { ListIssueDateTime: _i, NextUpdate: _n, ...scheme } = data.LoTE.ListAndSchemeInformation;
  return JSON.stringify({ ...data.LoTE, ListAndSchemeInformation: scheme });
}

export class TrustListSigner {
  private readonly validityMs: number;
  private readonly marginMs: number;

  constructor(private readonly deps: TrustListSignerDeps) {
    this.validityMs = (deps.validitySeconds ?? TRUST_LIST_VALIDITY_SECONDS) * 1000;
    this.marginMs = Math.min(deps.resignMarginSeconds ?? TRUST_LIST_RESIGN_MARGIN_SECONDS, (this.validityMs / 1000) * 0.5) * 1000;
  }

  /** Where the signed list is served. */
  publicUrl(tenantId: string, id: string) {
    return `${this.deps.publicUrl}/issuers/${encodeURIComponent(tenantId)}/trust-lists/${encodeURIComponent(id)}`;
  }

  /** TEInformationURI of the tenant's own (internal) entities. */
  tenantUrl(tenantId: string) {
    return `${this.deps.publicUrl}/issuers/${encodeURIComponent(tenantId)}`;
  }

  /** The LoTE of a prepared input at a sequence number, issued now. */
  async build(tenantId: string, id: string, prepared: Prepared, sequenceNumber: number): Promise<Built> {
    const issuedAt = new Date(Math.floor(this.deps.clock.now().getTime() / 1000) * 1000);
    const nextUpdate = new Date(issuedAt.getTime() + this.validityMs);
    const data = buildLote(
      {
        sequenceNumber,
        issuedAt,
        nextUpdate,
        operatorName: await this.deps.tenantName(tenantId),
        territory: this.deps.country,
        distributionPoint: this.publicUrl(tenantId, id),
        scheme: prepared.scheme,
      },
      prepared.entities.map(trustedEntity),
    );
    return { data, issuedAt, nextUpdate };
  }

  /** Signs a built LoTE: the document is the JWS payload, with iat and exp (= NextUpdate) beside it. */
  async sign(tenantId: string, prepared: Prepared, built: Built): Promise<Signed> {
    const { data, issuedAt, nextUpdate } = built;
    const claims = { ...data, iat: issuedAt.getTime() / 1000, exp: nextUpdate.getTime() / 1000 };
    const jwt = await this.deps.signing.signJwt(
      tenantId,
      { usageType: 'trustList', keyChainId: prepared.keyChainId },
      { typ: TRUST_LIST_JWT_TYPE },
      claims,
    );
    return {
      data,
      jwt,
      issuedAt: loteDateTime(issuedAt),
      nextUpdate: loteDateTime(nextUpdate),
      resignAt: loteDateTime(new Date(nextUpdate.getTime() - this.marginMs)),
    };
  }

  /** Builds and signs in one step, for a list whose sequence number is known beforehand. */
  async issue(tenantId: string, id: string, prepared: Prepared, sequenceNumber: number): Promise<Signed> {
    return this.sign(tenantId, prepared, await this.build(tenantId, id, prepared, sequenceNumber));
  }
}
