// Metadata policies (OpenID Federation 1.0 section 6.1): the superiors of a chain each may constrain
// the leaf's metadata. Their policies are combined from the trust anchor down (a subordinate may only
// narrow what its superior set), then applied to the leaf's metadata operator by operator in the
// order the spec fixes. A conflict in the combination, or metadata the policy does not allow, refuses.
// Entity types, parameters and operators are member names a statement chooses: every record indexed
// by them here has no prototype, so that no name (toString, __proto__) finds anything but what the
// policies put there (readEntityStatement refuses __proto__, constructor and prototype before).
import { isDeepStrictEqual } from 'node:util';
import { isJsonObject, nullRecord } from '../../platform/json.js';
import { FederationRefused } from './entity-statement.js';

/** The standard operators, in the order they are applied (section 6.1.3.1). */
export const POLICY_OPERATORS = ['value', 'add', 'default', 'one_of', 'subset_of', 'superset_of', 'essential'] as const;
type Operator = (typeof POLICY_OPERATORS)[number];
type ParameterPolicy = Partial<Record<Operator, unknown>>;
/** entity type -> metadata parameter -> operators. */
export type MetadataPolicy = Record<string, Record<string, ParameterPolicy>>;
export type Metadata = Record<string, Record<string, unknown>>;

const STEP = 'metadata policy';
const refuse = (reason: string) => new FederationRefused(STEP, reason);
const KNOWN = new Set<string>(POLICY_OPERATORS);

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
const contains = (list: unknown[], item: unknown) => list.some((entry) => isDeepStrictEqual(entry, item));
const intersection = (a: unknown[], b: unknown[]) => a.filter((item) => contains(b, item));
const union = (a: unknown[], b: unknown[]) => [...a, ...b.filter((item) => !contains(a, item))];

/**
 * The operators of one statement's policy this service applies. An operator it does not know is
 * refused when the statement lists it in metadata_policy_crit, and otherwise left out (section 6.1.4.2).
 */
function knownOperators(policy: unknown, crit: string[], where: string): ParameterPolicy {
  if (!isJsonObject(policy)) throw refuse(`${where} is not an object of operators`);
  const known: ParameterPolicy = nullRecord();
  for (const [operator, value] of Object.entries(policy)) {
    if (KNOWN.has(operator)) known[operator as Operator] = value;
    else if (crit.includes(operator))
      throw refuse(`${where} uses the critical operator ${operator}, which this service does not understand`);
  }
  for (const operator of ['one_of', 'subset_of', 'superset_of', 'add'] as const) {
    if (operator in known && !Array.isArray(known[operator])) throw refuse(`${where}.${operator} is not an array`);
  }
  if ('essential' in known && typeof known.essential !== 'boolean') throw refuse(`${where}.essential is not a boolean`);
  return known;
}

/** Two policies for one parameter as one: the superior's, narrowed by the subordinate's (section 6.1.4.1). */
function combineParameter(upper: ParameterPolicy, lower: ParameterPolicy, where: string): ParameterPolicy {
  const combined: ParameterPolicy = Object.assign(nullRecord(), upper);
  for (const [operator, value] of Object.entries(lower) as [Operator, unknown][]) {
    if (!(operator in combined)) {
      combined[operator] = value;
      continue;
    }
    const current = combined[operator];
    switch (operator) {
      case 'value':
      case 'default':
        if (!isDeepStrictEqual(current, value)) throw refuse(`${where}: the superiors set different ${operator}s`);
        break;
      case 'add':
      case 'superset_of':
        combined[operator] = union(current as unknown[], value as unknown[]);
        break;
      case 'one_of': {
        const both = intersection(current as unknown[], value as unknown[]);
        if (both.length === 0) throw refuse(`${where}: the superiors' one_of have no value in common`);
        combined.one_of = both;
        break;
      }
      case 'subset_of':
        combined.subset_of = intersection(current as unknown[], value as unknown[]);
        break;
      case 'essential':
        combined.essential = current === true || value === true;
        break;
    }
  }
  return combined;
}

/** Combinations that can never hold (section 6.1.3.1: each operator's "combination" rules). */
function checkConsistent(policy: ParameterPolicy, where: string) {
  // add and default apply after value: beside value null they would let a subordinate bring back a
  // parameter its superior removes (section 6.1.3.1.1: add must be a subset of value, default needs a non-null value).
  if ('value' in policy && policy.value === null && ('add' in policy || 'default' in policy))
    throw refuse(`${where}: value null removes the parameter, which add or default would set again`);
  if ('value' in policy && policy.value !== null) {
    const value = policy.value;
    if ('one_of' in policy && !contains(policy.one_of as unknown[], value)) throw refuse(`${where}: value is not one of one_of`);
    if ('subset_of' in policy && !asArray(value).every((v) => contains(policy.subset_of as unknown[], v)))
      throw refuse(`${where}: value is not a subset of subset_of`);
    if ('superset_of' in policy && !(policy.superset_of as unknown[]).every((v) => contains(asArray(value), v)))
      throw refuse(`${where}: value is not a superset of superset_of`);
    if ('add' in policy && !(policy.add as unknown[]).every((v) => contains(asArray(value), v)))
      throw refuse(`${where}: add is not a subset of value`);
  }
  if ('add' in policy && 'subset_of' in policy && !(policy.add as unknown[]).every((v) => contains(policy.subset_of as unknown[], v)))
    throw refuse(`${where}: add is not a subset of subset_of`);
}

/** The statements' policies, trust anchor's first, as one policy. */
export function combinePolicies(policies: { policy: unknown; crit: string[] }[]): MetadataPolicy {
  const combined: MetadataPolicy = nullRecord();
  for (const { policy, crit } of policies) {
    if (policy === undefined) continue;
    if (!isJsonObject(policy)) throw refuse('metadata_policy is not an object');
    for (const [entityType, parameters] of Object.entries(policy)) {
      if (!isJsonObject(parameters)) throw refuse(`${entityType} is not an object of parameters`);
      combined[entityType] ??= nullRecord();
      const forType = combined[entityType];
      for (const [parameter, operators] of Object.entries(parameters)) {
        const where = `${entityType}.${parameter}`;
        const lower = knownOperators(operators, crit, where);
        forType[parameter] = parameter in forType ? combineParameter(forType[parameter] as ParameterPolicy, lower, where) : lower;
        checkConsistent(forType[parameter] as ParameterPolicy, where);
      }
    }
  }
  return combined;
}

/** One parameter's value after its policy; undefined: the parameter is absent. */
function applyParameter(value: unknown, policy: ParameterPolicy, where: string): unknown {
  let result = value;
  if ('value' in policy) result = policy.value === null ? undefined : policy.value;
  if ('add' in policy) result = union(result === undefined ? [] : asArray(result), policy.add as unknown[]);
  if ('default' in policy && result === undefined) result = policy.default;
  if ('one_of' in policy && result !== undefined && !contains(policy.one_of as unknown[], result))
    throw refuse(`${where} is ${JSON.stringify(result)}, not one of those the policy allows`);
  if ('subset_of' in policy && result !== undefined) result = intersection(asArray(result), policy.subset_of as unknown[]);
  if ('superset_of' in policy && result !== undefined && !(policy.superset_of as unknown[]).every((v) => contains(asArray(result), v)))
    throw refuse(`${where} lacks values the policy requires (superset_of)`);
  const absent = result === undefined || (Array.isArray(result) && result.length === 0 && 'subset_of' in policy);
  if (policy.essential === true && absent) throw refuse(`${where} is essential and absent`);
  return result;
}

/** The leaf's metadata with the combined policy applied. */
export function applyPolicy(metadata: Metadata, policy: MetadataPolicy): Metadata {
  const resolved: Metadata = structuredClone(metadata);
  for (const [entityType, parameters] of Object.entries(policy)) {
    const forType = Object.hasOwn(resolved, entityType) ? resolved[entityType] : undefined;
    // A policy for an entity type the leaf does not have leaves nothing to constrain (section 6.1.4.2).
    if (!forType) continue;
    for (const [parameter, operators] of Object.entries(parameters)) {
      const current = Object.hasOwn(forType, parameter) ? forType[parameter] : undefined;
      const value = applyParameter(current, operators, `${entityType}.${parameter}`);
      if (value === undefined) delete forType[parameter];
      else forType[parameter] = value;
    }
  }
  return resolved;
}

/** The leaf's metadata with the parameters its immediate superior sets in `metadata` of its subordinate statement (section 3.1.1). */
export function withSuperiorMetadata(metadata: Metadata, superior: Metadata | undefined): Metadata {
  if (!superior) return metadata;
  const merged: Metadata = structuredClone(metadata);
  for (const [entityType, parameters] of Object.entries(superior)) {
    if (isJsonObject(parameters)) merged[entityType] = { ...(Object.hasOwn(merged, entityType) ? merged[entityType] : {}), ...parameters };
  }
  return merged;
}
