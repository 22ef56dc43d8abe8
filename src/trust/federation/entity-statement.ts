// Entity statements (OpenID Federation 1.0 section 3): signed JWTs of typ entity-statement+jwt. An
// entity configuration is one an entity makes about itself (iss = sub, signed by a key of its own
// jwks); a subordinate statement is one a superior makes about an entity below it (signed by a key of
// the superior's jwks, and its jwks are the subject's keys as the superior vouches for them).
import type { JWK } from 'jose';
import { decodeJws, ecPublicKey, verifyEcJws } from '../../platform/crypto/ec-jws.js';
import { isJsonObject, PROTOTYPE_MEMBER_RULE, prototypeMemberPath } from '../../platform/json.js';

export const ENTITY_STATEMENT_TYP = 'entity-statement+jwt';
export const ENTITY_STATEMENT_MEDIA_TYPE = 'application/entity-statement+jwt';
export const FEDERATION_WELL_KNOWN = '/.well-known/openid-federation';
/** Clock skew allowed on iat and exp. */
export const CLOCK_SKEW_SECONDS = 60;

/** Where an entity publishes its entity configuration (section 9): the well-known suffix after its identifier's path. */
export const entityConfigurationUrl = (entityId: string) => `${entityId.replace(/\/$/, '')}${FEDERATION_WELL_KNOWN}`;

/** A step of trust resolution that did not hold: `step` names it for the session log. */
export class FederationRefused extends Error {
  override name = 'FederationRefused';
  constructor(
    readonly step: string,
    reason: string,
  ) {
    super(`${step}: ${reason}`);
  }
}

export interface EntityStatement {
  iss: string;
  sub: string;
  iat: number;
  exp: number;
  jwks: { keys: JWK[] };
  authority_hints?: string[];
  metadata?: Record<string, Record<string, unknown>>;
  metadata_policy?: Record<string, Record<string, Record<string, unknown>>>;
  metadata_policy_crit?: string[];
  constraints?: { max_path_length?: number };
  /** Every claim, as signed. */
  claims: Record<string, unknown>;
  /** The kid of the key that signed it. */
  kid: string;
  jwt: string;
}

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');

/** The statement's claims read and checked for shape and time; its signature is checked by `verifyStatementSignature`. */
export function readEntityStatement(jwt: string, step: string, now: number): EntityStatement {
  const refuse = (reason: string) => new FederationRefused(step, reason);
  const decoded = decodeJws(jwt);
  if (!decoded) throw refuse('not a compact JWS');
  const { header, payload } = decoded;
  // Its metadata and policies are combined by member name: a name that reaches Object.prototype refuses the statement.
  const forbidden = prototypeMemberPath(header, 'header') ?? prototypeMemberPath(payload, '');
  if (forbidden) throw refuse(`${forbidden} ${PROTOTYPE_MEMBER_RULE}`);
  if (header.typ !== ENTITY_STATEMENT_TYP) throw refuse(`typ is not ${ENTITY_STATEMENT_TYP}`);
  if (typeof header.kid !== 'string') throw refuse('the header names no kid');
  if (header.crit !== undefined) throw refuse('the header has crit parameters this service does not understand');
  const { iss, sub, iat, exp, jwks } = payload;
  if (typeof iss !== 'string' || typeof sub !== 'string') throw refuse('iss or sub is missing');
  if (typeof iat !== 'number' || typeof exp !== 'number') throw refuse('iat or exp is missing');
  if (iat > now + CLOCK_SKEW_SECONDS) throw refuse('iat is in the future');
  if (exp <= now - CLOCK_SKEW_SECONDS) throw refuse('the statement has expired (exp)');
  if (!isJsonObject(jwks) || !Array.isArray(jwks.keys) || !jwks.keys.every(isJsonObject)) throw refuse('jwks is missing or not a JWK set');
  // crit (section 3.1.1): claims that must be understood; this service understands none beyond the standard ones.
  if (payload.crit !== undefined) throw refuse(`crit names claims this service does not understand: ${JSON.stringify(payload.crit)}`);
  if (payload.authority_hints !== undefined && !isStringArray(payload.authority_hints))
    throw refuse('authority_hints is not a list of entity identifiers');
  if (payload.metadata !== undefined && !isJsonObject(payload.metadata)) throw refuse('metadata is not an object');
  if (payload.metadata_policy !== undefined && !isJsonObject(payload.metadata_policy)) throw refuse('metadata_policy is not an object');
  if (payload.metadata_policy_crit !== undefined && !isStringArray(payload.metadata_policy_crit))
    throw refuse('metadata_policy_crit is not a list of operator names');
  return {
    ...(payload as Omit<EntityStatement, 'claims' | 'kid' | 'jwt'>),
    jwks: jwks as { keys: JWK[] },
    claims: payload,
    kid: header.kid,
    jwt,
  };
}

/** The statement is signed by the key of `jwks` its kid names (an EC key, ES256/384/512), and current at `now` (seconds since the epoch). */
export function verifyStatementSignature(statement: EntityStatement, jwks: { keys: JWK[] }, step: string, signerName: string, now: number) {
  const jwk = jwks.keys.find((key) => key.kid === statement.kid);
  if (!jwk) throw new FederationRefused(step, `signed with key ${statement.kid}, which is not among the keys of ${signerName}`);
  const alg = decodeJws(statement.jwt)?.header.alg;
  const key = typeof alg === 'string' ? ecPublicKey(jwk as Record<string, unknown>, alg) : undefined;
  if (!key || !verifyEcJws(statement.jwt, key, CLOCK_SKEW_SECONDS, now))
    throw new FederationRefused(step, `the signature does not verify with the key of ${signerName}`);
}
