// An input checked against the tenant's key chains: its signer and its entities resolved to what the
// LoTE lists. Errors name the field: body.keyChainId, body.entities.N.keyChainId, body.entities.N.certificates.M.
import type { X509Certificate } from 'node:crypto';
import type { KeyChain } from '../key-chains/model.js';
import type { KeyChainService } from '../key-chains/service.js';
import { toX5c } from '../platform/crypto/x509.js';
import { conflict, type FieldError, invalidFields } from '../platform/http/problem.js';
import { anchorsOf, parseCertificate } from './certificates.js';
import type { ResolvedEntity, ServiceType } from './lote.js';
import type { EntityInput, SchemeData, TrustListInput } from './schemas.js';

/** What an input resolves to before it is signed. */
export interface Prepared {
  keyChainId: string;
  scheme: SchemeData;
  entityConfig: EntityInput[];
  entities: ResolvedEntity[];
  entityKeyChains: string[];
}

/**
 * Resolves an input against the tenant's key chains. Without keyChainId the list keeps
 * `currentKeyChainId`, or (new) takes the tenant's default trustList key chain. `informationUri` is
 * the TEInformationURI of the tenant's own entities.
 */
export async function prepare(
  keyChains: KeyChainService,
  tenantId: string,
  informationUri: string,
  input: TrustListInput,
  currentKeyChainId?: string,
): Promise<Prepared> {
  const chains = new Map((await keyChains.list(tenantId)).map((chain) => [chain.id, chain]));
  const errors: FieldError[] = [];
  const signerId = input.keyChainId ?? currentKeyChainId;
  const signer = signerId ? chains.get(signerId) : [...chains.values()].find((chain) => chain.usageType === 'trustList' && chain.default);
  if (!signerId && !signer) throw conflict('the tenant has no default trustList key chain; name one in keyChainId');
  if (!signer) errors.push({ field: 'body.keyChainId', message: `key chain '${signerId}' does not exist` });
  else if (signer.usageType !== 'trustList') {
    errors.push({
      field: 'body.keyChainId',
      message: `key chain '${signer.id}' has usage type ${signer.usageType}; trust lists are signed with trustList key chains`,
    });
  }
  const entities: ResolvedEntity[] = [];
  input.entities.forEach((entity, i) => {
    const resolved = entity.type === 'internal' ? internalEntity(entity, chains, informationUri) : externalEntity(entity);
    if (Array.isArray(resolved)) errors.push(...resolved.map((e) => ({ ...e, field: `body.entities.${i}.${e.field}` })));
    else entities.push(resolved);
  });
  if (errors.length) throw invalidFields(errors);
  const internal = input.entities.flatMap((e) => (e.type === 'internal' ? [e.keyChainId] : []));
  return {
    keyChainId: (signer as KeyChain).id,
    scheme: input.data ?? {},
    entityConfig: input.entities,
    entities,
    entityKeyChains: [...new Set(internal)].sort(),
  };
}

function internalEntity(
  entity: Extract<EntityInput, { type: 'internal' }>,
  chains: Map<string, KeyChain>,
  informationUri: string,
): ResolvedEntity | FieldError[] {
  const chain = chains.get(entity.keyChainId);
  if (!chain) return [{ field: 'keyChainId', message: `key chain '${entity.keyChainId}' does not exist` }];
  if (chain.usage !== 'sign')
    return [{ field: 'keyChainId', message: `key chain '${chain.id}' is an encryption key; only signing keys can be listed` }];
  const serviceType: ServiceType = entity.serviceType ?? (chain.usageType === 'statusList' ? 'revocation' : 'issuance');
  return {
    name: entity.name ?? chain.subject.organization ?? chain.subject.commonName,
    serviceType,
    certificates: toX5c(anchorsOf(chain)),
    informationUri,
    ...(entity.information && { information: entity.information }),
  };
}

function externalEntity(entity: Extract<EntityInput, { type: 'external' }>): ResolvedEntity | FieldError[] {
  const errors: FieldError[] = [];
  const certificates: X509Certificate[] = [];
  entity.certificates.forEach((pem, j) => {
    const parsed = parseCertificate(pem);
    if (typeof parsed === 'string') errors.push({ field: `certificates.${j}`, message: parsed });
    else certificates.push(parsed);
  });
  if (errors.length) return errors;
  return {
    name: entity.name,
    serviceType: entity.serviceType ?? 'issuance',
    certificates: toX5c(certificates),
    ...(entity.information && { information: entity.information }),
  };
}
