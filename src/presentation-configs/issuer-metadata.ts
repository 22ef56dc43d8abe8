// Credential issuer metadata of another issuer (OpenID4VCI 1.0 section 12.2), fetched server-side so
// that a verifier can build a DCQL query for what that issuer issues: the metadata as published, and
// per credential configuration its format, type (vct or doctype) and claim paths as a ready DCQL
// credential query. Fetched through the outbound client, whose address policy applies.
import { z } from 'zod';
import { allFormats, type CredentialFormat } from '../formats/index.js';
import { invalidFields, Problem } from '../platform/http/problem.js';
import { webUrl } from '../platform/http/web-urls.js';
import { isJsonObject } from '../platform/json.js';
import { jsonOf, type OutboundClient, OutboundRefused } from '../platform/outbound/client.js';

const FIELD = 'body.credentialIssuer';

export const ResolveIssuerMetadataBody = z.strictObject({
  credentialIssuer: webUrl()
    .refine((value) => !value.includes('?') && !value.includes('#'), 'a credential issuer identifier has no query or fragment')
    .describe('the credential issuer identifier: https (http outside production), without query or fragment'),
});

const ClaimPath = z.array(z.union([z.string(), z.number(), z.null()]));
const CredentialSummary = z.object({
  id: z.string().describe('the key in credential_configurations_supported'),
  format: z.string(),
  vct: z.string().optional().describe('dc+sd-jwt'),
  doctype: z.string().optional().describe('mso_mdoc'),
  claims: z.array(z.object({ path: ClaimPath })),
  dcql: z.record(z.string(), z.unknown()).describe('a DCQL credential query asking for this credential configuration and all its claims'),
});

export const ResolvedIssuerMetadata = z.object({
  metadata: z.record(z.string(), z.unknown()).describe('the credential issuer metadata as published'),
  credentialConfigurations: z.array(CredentialSummary),
});

type Summary = z.infer<typeof CredentialSummary>;
type Resolved = z.infer<typeof ResolvedIssuerMetadata>;
type Json = Record<string, unknown>;

const badGateway = (detail: string) => new Problem(502, 'Bad Gateway', detail);

/** Section 12.2.2: the well-known segment goes between the host and the path of the identifier. */
export function metadataUrl(credentialIssuer: string): string {
  const url = new URL(credentialIssuer);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}/.well-known/openid-credential-issuer${path}`;
}

export class IssuerMetadataResolver {
  constructor(private readonly outbound: OutboundClient) {}

  async resolve(credentialIssuer: string): Promise<Resolved> {
    const metadata = await this.fetch(credentialIssuer);
    if (metadata.credential_issuer !== credentialIssuer)
      throw badGateway(`the metadata names credential_issuer ${JSON.stringify(metadata.credential_issuer)}, not ${credentialIssuer}`);
    const configurations = metadata.credential_configurations_supported;
    if (!isJsonObject(configurations)) throw badGateway('the metadata has no credential_configurations_supported object');
    return {
      metadata,
      credentialConfigurations: Object.entries(configurations).flatMap(([id, configuration]) =>
        isJsonObject(configuration) && typeof configuration.format === 'string' ? [summaryOf(id, configuration)] : [],
      ),
    };
  }

  private async fetch(credentialIssuer: string): Promise<Json> {
    const url = metadataUrl(credentialIssuer);
    let reply: Awaited<ReturnType<OutboundClient['request']>>;
    try {
      reply = await this.outbound.request(url, { headers: { accept: 'application/json' } });
    } catch (err) {
      if (err instanceof OutboundRefused) throw invalidFields([{ field: FIELD, message: err.message }]);
      throw badGateway(`the credential issuer could not be reached at ${url}: ${(err as Error).message}`);
    }
    if (!reply.ok) throw badGateway(`the credential issuer answered ${reply.status} at ${url}`);
    const body = jsonOf(reply);
    if (body === undefined) throw badGateway(`the credential issuer answered ${url} with something other than JSON`);
    if (!isJsonObject(body)) throw badGateway(`the credential issuer answered ${url} with JSON that is not an object`);
    return body;
  }
}

/** Members of a draft-era claim description, not nested claims. */
const DESCRIPTIVE = new Set(['mandatory', 'value_type', 'display']);

/**
 * The types a configuration names, by each format's member (vct, doctype), in registry order. Every
 * format's member is read whatever the configuration's format: an issuer's metadata is taken as published.
 */
function typesNamed(configuration: Json): { format: CredentialFormat; type: string }[] {
  return allFormats().flatMap((format) => {
    const type = Object.hasOwn(configuration, format.type.member) ? configuration[format.type.member] : undefined;
    return typeof type === 'string' && type ? [{ format, type }] : [];
  });
}

function summaryOf(id: string, configuration: Json): Summary {
  const format = configuration.format as string;
  const types = typesNamed(configuration);
  // 1.0 puts claims under credential_metadata; drafts had them on the configuration itself.
  const declared = isJsonObject(configuration.credential_metadata) ? configuration.credential_metadata.claims : configuration.claims;
  const claims = claimPaths(declared).map((path) => ({ path }));
  const [first] = types;
  const meta = first ? first.format.type.dcqlMeta(first.type) : {};
  return {
    id,
    format,
    ...Object.fromEntries(types.map(({ format, type }) => [format.type.member, type])),
    claims,
    dcql: { id, format, meta, ...(claims.length && { claims }) },
  };
}

/** Claim paths from a 1.0 claims array ([{path}]), or from the nested objects of older drafts (mdoc: namespace, then claim). */
function claimPaths(declared: unknown, prefix: string[] = []): (string | number | null)[][] {
  if (Array.isArray(declared)) {
    return declared.flatMap((claim) => {
      const path = isJsonObject(claim) ? claim.path : undefined;
      return Array.isArray(path) && path.length > 0 && ClaimPath.safeParse(path).success ? [path as (string | number | null)[]] : [];
    });
  }
  if (!isJsonObject(declared)) return [];
  return Object.entries(declared).flatMap(([key, value]) => {
    const nested = isJsonObject(value)
      ? claimPaths(Object.fromEntries(Object.entries(value).filter(([k]) => !DESCRIPTIVE.has(k))), [...prefix, key])
      : [];
    return nested.length ? nested : [[...prefix, key]];
  });
}
