// The list of trusted entities (LoTE) of ETSI TS 119 602 V1.1.1, JSON binding: field names, URIs and
// the document built from a trust list's entities. Pure functions; signing happens in the service.

/** Clause 6.3.1: incremented only when the parsing rules of the format change; 1 for V1.1.1. */
export const LOTE_VERSION_IDENTIFIER = 1;

/**
 * The default LoTEType. The entities a tenant lists are attestation issuers and status list signers,
 * which is what the EAA providers profile lists (service types EAA/Issuance and EAA/Revocation).
 * A tenant states another type (and the explicit scheme fields) through `data`.
 */
export const DEFAULT_LOTE_TYPE = 'http://uri.etsi.org/19602/LoTEType/EUEAAProvidersList';

/** Service type identifiers of the annexes of TS 119 602 (EAA, PID and wallet provider profiles). */
export const SERVICE_TYPES = {
  issuance: 'http://uri.etsi.org/19602/SvcType/EAA/Issuance',
  revocation: 'http://uri.etsi.org/19602/SvcType/EAA/Revocation',
  pidIssuance: 'http://uri.etsi.org/19602/SvcType/PID/Issuance',
  pidRevocation: 'http://uri.etsi.org/19602/SvcType/PID/Revocation',
  walletIssuance: 'http://uri.etsi.org/19602/SvcType/WalletSolution/Issuance',
  walletRevocation: 'http://uri.etsi.org/19602/SvcType/WalletSolution/Revocation',
} as const;
export type ServiceType = keyof typeof SERVICE_TYPES;
export const SERVICE_TYPE_NAMES = Object.keys(SERVICE_TYPES) as [ServiceType, ...ServiceType[]];

/**
 * What a listed entity is trusted for. Wallet providers sign wallet (client) and key attestations,
 * which the issuer checks; the others sign credentials and status lists, which the verifier checks.
 * Neither is trusted for the other's documents.
 */
export type TrustPurpose = 'credentials' | 'walletAttestations';
export const purposeOf = (type: ServiceType): TrustPurpose => (type.startsWith('wallet') ? 'walletAttestations' : 'credentials');

const SERVICE_NAMES: Record<ServiceType, string> = {
  issuance: 'Attestation issuance',
  revocation: 'Attestation revocation (status lists)',
  pidIssuance: 'PID issuance',
  pidRevocation: 'PID revocation (status lists)',
  walletIssuance: 'Wallet solution issuance (wallet and key attestations)',
  walletRevocation: 'Wallet solution revocation',
};

/** ListAndSchemeInformation fields the service sets on every signing; a caller cannot supply them. */
export const MANAGED_SCHEME_FIELDS = ['LoTEVersionIdentifier', 'LoTESequenceNumber', 'ListIssueDateTime', 'NextUpdate'] as const;

const LANG = 'en';

/** One trusted entity with one service, as generated from an internal or external entity input. */
export interface ResolvedEntity {
  name: string;
  serviceType: ServiceType;
  /** DER certificates in base64, the service digital identity. */
  certificates: string[];
  informationUri?: string;
  /** Extra TrustedEntityInformation fields given by the caller (TEAddress, TETradeName, ...). */
  information?: Record<string, unknown>;
}

export interface ListMeta {
  sequenceNumber: number;
  issuedAt: Date;
  nextUpdate: Date;
  operatorName: string;
  territory: string;
  distributionPoint: string;
  /** The caller's extra ListAndSchemeInformation fields; they override the defaults above. */
  scheme: Record<string, unknown>;
}

/** LoTE date-times: ISO 8601 in UTC, whole seconds. */
export const loteDateTime = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

export function trustedEntity(entity: ResolvedEntity) {
  return {
    TrustedEntityInformation: {
      TEName: [{ lang: LANG, value: entity.name }],
      ...(entity.informationUri && { TEInformationURI: [{ lang: LANG, uriValue: entity.informationUri }] }),
      ...entity.information,
    },
    TrustedEntityServices: [
      {
        ServiceInformation: {
          ServiceTypeIdentifier: SERVICE_TYPES[entity.serviceType],
          ServiceName: [{ lang: LANG, value: SERVICE_NAMES[entity.serviceType] }],
          ServiceDigitalIdentity: { X509Certificates: entity.certificates.map((val) => ({ val })) },
        },
      },
    ],
  };
}

export type TrustedEntity = ReturnType<typeof trustedEntity>;

/**
 * The LoTE document: `{"LoTE": {ListAndSchemeInformation, TrustedEntitiesList}}`. Clause 6.4.0: the
 * TrustedEntitiesList is absent when no entity is listed.
 */
export function buildLote(meta: ListMeta, entities: TrustedEntity[]) {
  return {
    LoTE: {
      ListAndSchemeInformation: {
        LoTEVersionIdentifier: LOTE_VERSION_IDENTIFIER,
        LoTESequenceNumber: meta.sequenceNumber,
        LoTEType: DEFAULT_LOTE_TYPE,
        SchemeOperatorName: [{ lang: LANG, value: meta.operatorName }],
        SchemeTerritory: meta.territory,
        DistributionPoints: [meta.distributionPoint],
        ...meta.scheme,
        ListIssueDateTime: loteDateTime(meta.issuedAt),
        NextUpdate: loteDateTime(meta.nextUpdate),
      },
      ...(entities.length > 0 && { TrustedEntitiesList: entities }),
    },
  };
}

export type LoteDocument = ReturnType<typeof buildLote>;
