// Rules a configuration obeys beyond the shape its schema describes: the DCQL query as the dcql
// library reads it, the formats we verify, and the credential query ids that other fields refer to.
// Errors name fields as the request does (body.dcql_query.credentials.0.format), also on PATCH,
// where they may come from stored values.
import { isDeepStrictEqual } from 'node:util';
import { DcqlCredentialSetError, DcqlError, DcqlNonUniqueCredentialQueryIdsError, DcqlQuery } from 'dcql';
import type { FieldError } from '../platform/http/problem.js';
import { isPrototypeMemberName, PROTOTYPE_MEMBER_RULE } from '../platform/json.js';
import { type PresentationDocument, SUPPORTED_FORMATS } from './schemas.js';

/** A valibot issue, as the dcql library's parse errors (ValiError) carry them. */
interface Issue {
  message: string;
  path?: { key: unknown }[];
  issues?: Issue[];
}

const QUERY = 'body.dcql_query';
const at = (...segments: unknown[]) => [QUERY, ...segments.map(String)].join('.');
const keysOf = (issue: Issue) => (issue.path ?? []).map((item) => item.key);

/** A union's own message says little ("Expected Object but received Object"); its branches say what is missing. */
function messageOf(issue: Issue): string {
  const nested = (issue.issues ?? []).filter((n) => n.path?.length);
  if (!nested.length) return issue.message;
  return `${issue.message}: ${nested.map((n) => `${keysOf(n).join('.')}: ${n.message}`).join('; ')}`;
}

function parse(query: unknown): { query?: DcqlQuery; errors: FieldError[] } {
  try {
    return { query: DcqlQuery.parse(query as DcqlQuery.Input), errors: [] };
  } catch (err) {
    const issues = (err as { issues?: Issue[] }).issues;
    if (!Array.isArray(issues)) throw err;
    return { errors: issues.map((issue) => ({ field: at(...keysOf(issue)), message: messageOf(issue) })) };
  }
}

/** Formats the library knows but we do not verify; a format the library refuses is reported by parse(). */
function formatErrors(query: unknown, reported: FieldError[]): FieldError[] {
  const credentials = (query as { credentials?: unknown }).credentials;
  if (!Array.isArray(credentials)) return [];
  return credentials.flatMap((credential, i) => {
    const format = (credential as { format?: unknown } | null)?.format;
    const field = at('credentials', i, 'format');
    if (typeof format !== 'string' || (SUPPORTED_FORMATS as readonly string[]).includes(format)) return [];
    if (reported.some((e) => e.field === field)) return [];
    return [{ field, message: `'${format}' is not verified here; supported formats: ${SUPPORTED_FORMATS.join(', ')}` }];
  });
}

/** The library's checks across the query (unique ids, defined claim and credential set ids), placed where they apply. */
function consistencyErrors(query: DcqlQuery): FieldError[] {
  try {
    DcqlQuery.validate(query);
    return [];
  } catch (err) {
    if (!(err instanceof DcqlError)) throw err;
    if (err instanceof DcqlNonUniqueCredentialQueryIdsError) {
      const ids = query.credentials.map((c) => c.id);
      return [
        {
          field: at(
            'credentials',
            ids.findIndex((id, i) => ids.indexOf(id) !== i),
            'id',
          ),
          message: err.message,
        },
      ];
    }
    if (err instanceof DcqlCredentialSetError) return [{ field: at('credential_sets'), message: err.message }];
    // The remaining check is per credential query: claim_sets naming claim ids (the library's message calls them credential ids).
    const errors = query.credentials.flatMap((credential, i) => {
      const known = new Set(credential.claims?.map((claim) => claim.id));
      const unknown = (credential.claim_sets ?? []).flat().filter((id) => !known.has(id));
      return unknown.length
        ? [{ field: at('credentials', i, 'claim_sets'), message: `names ids that no claim of the query has: ${unknown.join(', ')}` }]
        : [];
    });
    return errors.length ? errors : [{ field: QUERY, message: err.message }];
  }
}

/**
 * Credential query ids, claim ids and claim path segments become member names: of the vp_token, of
 * the claims looked up in a presentation, of an Annex C DeviceRequest's namespaces and elements.
 */
function prototypeNameErrors(query: DcqlQuery): FieldError[] {
  const names: [string, unknown][] = query.credentials.flatMap((credential, i) => [
    [at('credentials', i, 'id'), credential.id] as [string, unknown],
    ...(credential.claims ?? []).flatMap((claim, j) => [
      [at('credentials', i, 'claims', j, 'id'), claim.id] as [string, unknown],
      ...('path' in claim
        ? claim.path.map((segment: unknown, k: number) => [at('credentials', i, 'claims', j, 'path', k), segment] as [string, unknown])
        : [
            [at('credentials', i, 'claims', j, 'namespace'), claim.namespace] as [string, unknown],
            [at('credentials', i, 'claims', j, 'claim_name'), claim.claim_name] as [string, unknown],
          ]),
    ]),
  ]);
  return names.filter(([, name]) => isPrototypeMemberName(name)).map(([field]) => ({ field, message: PROTOTYPE_MEMBER_RULE }));
}

/** Each credential id must name a credential query of the DCQL query. */
function referenceErrors(field: string, items: { credential_ids?: string[] }[] | null, queryIds: Set<string>): FieldError[] {
  return (items ?? []).flatMap((item, i) =>
    (item.credential_ids ?? []).flatMap((id, j) =>
      queryIds.has(id)
        ? []
        : [{ field: `body.${field}.${i}.credential_ids.${j}`, message: `'${id}' is not the id of a credential query in dcql_query` }],
    ),
  );
}

/** `now` judges a given registration certificate's exp (the service's clock). */
export function checkDocument(doc: PresentationDocument, now: Date): FieldError[] {
  const parsed = parse(doc.dcql_query);
  const errors = [...parsed.errors, ...formatErrors(doc.dcql_query, parsed.errors)];
  if (!parsed.query) return errors;
  errors.push(...prototypeNameErrors(parsed.query), ...consistencyErrors(parsed.query));
  const queryIds = new Set(parsed.query.credentials.map((c) => c.id));
  errors.push(
    ...referenceErrors('transaction_data', doc.transaction_data, queryIds),
    ...referenceErrors('attached', doc.attached, queryIds),
    ...givenRegistrationCertErrors(doc.registration_cert?.jwt, parsed.query, now),
  );
  return errors;
}

/** Where the query names trusted authorities of type openid_federation: body.dcql_query.credentials.{i}.trusted_authorities.{j}.type. */
export function federationAuthorityFields(query: unknown): string[] {
  const credentials = (query as { credentials?: unknown } | null)?.credentials;
  if (!Array.isArray(credentials)) return [];
  return credentials.flatMap((credential, i) => {
    const authorities = (credential as { trusted_authorities?: unknown } | null)?.trusted_authorities;
    if (!Array.isArray(authorities)) return [];
    return authorities.flatMap((authority, j) =>
      (authority as { type?: unknown } | null)?.type === 'openid_federation'
        ? [at('credentials', i, 'trusted_authorities', j, 'type')]
        : [],
    );
  });
}

/** The trusted list URLs the query names (trusted_authorities of type etsi_tl), with the field of each. */
export function trustedListUrls(query: unknown): { field: string; url: string }[] {
  const credentials = (query as { credentials?: unknown } | null)?.credentials;
  if (!Array.isArray(credentials)) return [];
  return credentials.flatMap((credential, i) => {
    const authorities = (credential as { trusted_authorities?: unknown } | null)?.trusted_authorities;
    if (!Array.isArray(authorities)) return [];
    return authorities.flatMap((authority, j) => {
      const { type, values } = (authority ?? {}) as { type?: unknown; values?: unknown };
      if (type !== 'etsi_tl' || !Array.isArray(values)) return [];
      return values.flatMap((url, k) =>
        typeof url === 'string' ? [{ field: at('credentials', i, 'trusted_authorities', j, 'values', k), url }] : [],
      );
    });
  });
}

interface CertifiedCredential {
  format?: unknown;
  meta?: unknown;
  claims?: { path?: unknown }[];
}

/**
 * A registration certificate given as a JWT must be current and allow what the query asks for: a
 * wallet refuses a request that asks for more than the certificate registers (overasking). Each
 * credential query needs a credential of the certificate with its format and meta, and every claim
 * path it asks for among that credential's claims (a credential without claims allows all).
 */
function givenRegistrationCertErrors(jwt: string | undefined, query: DcqlQuery, now: Date): FieldError[] {
  if (jwt === undefined) return [];
  const field = 'body.registration_cert.jwt';
  const payload = jwtPayload(jwt);
  if (!payload) return [{ field, message: 'its payload is not a JSON object' }];
  if (typeof payload.exp === 'number' && payload.exp * 1000 <= now.getTime())
    return [{ field, message: `expired at ${new Date(payload.exp * 1000).toISOString()}` }];
  const certified = payload.credentials;
  if (!Array.isArray(certified) || certified.length === 0)
    return [{ field, message: 'has no credentials claim: a registration certificate names the credentials that may be requested' }];
  return query.credentials.flatMap((credential, i) =>
    certified.some((c: CertifiedCredential) => allows(c, credential))
      ? []
      : [
          {
            field,
            message: `does not register what dcql_query.credentials.${i} ('${credential.id}') asks for (format, meta and claim paths)`,
          },
        ],
  );
}

function jwtPayload(jwt: string): Record<string, unknown> | undefined {
  try {
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return payload && typeof payload === 'object' && !Array.isArray(payload) ? payload : undefined;
  } catch {
    return undefined;
  }
}

function allows(certified: CertifiedCredential, asked: DcqlQuery['credentials'][number]): boolean {
  if (certified.format !== asked.format || !isDeepStrictEqual(certified.meta ?? {}, asked.meta ?? {})) return false;
  if (!Array.isArray(certified.claims)) return true;
  const registered = new Set(certified.claims.map((claim) => JSON.stringify(claim?.path)));
  return (asked.claims ?? []).every((claim) =>
    registered.has(JSON.stringify('path' in claim ? claim.path : [claim.namespace, claim.claim_name])),
  );
}
