// The verifier's import of schema metadata: from a URL (fetched through the outbound client, under
// its address policy) or from the signed JWT itself. The JWT is verified (jws.ts), its per-format
// schemas are read (inline, or fetched and checked against their integrity), and a DCQL query that
// asks for every claim they name is built, ready for a presentation configuration.
//
// Trust: the signature must verify with the x5c leaf and the chain must hold together and be valid,
// else 400. Whether the chain leads to a certificate of the tenant's trust lists is reported
// (signer.trusted), not required: the metadata describes a credential type, it issues nothing, and
// the operator importing it decides. The presentations made with the query are verified in full.

import { createHash, type X509Certificate } from 'node:crypto';
import { knownFormat } from '../formats/index.js';
import type { Clock } from '../platform/clock.js';
import { chainsToTrusted } from '../platform/crypto/certificate-chains.js';
import { invalidFields, Problem } from '../platform/http/problem.js';
import { jsonOf, type OutboundClient, OutboundRefused } from '../platform/outbound/client.js';
import { dcqlQueryOf, type FormatCredential } from './dcql.js';
import { SchemaJwtError, type VerifiedPayload, verifySchemaJwt } from './jws.js';
import type { ResolvedSchemaMetadata } from './schemas.js';

export interface ResolverDeps {
  outbound: OutboundClient;
  /** PEM certificates of the tenant's trust lists. */
  trustedCertificates: (tenantId: string) => Promise<string[]>;
  /** What time a signed schema (and its chain) is judged at. */
  clock: Clock;
}

type SchemaEntry = VerifiedPayload['schemaURIs'][number];
const MAX_SCHEMA_BYTES = 256 * 1024;

/** A 400 naming the field the unusable input came in. */
const unusable = (field: string, message: string) => invalidFields([{ field, message }]);

export class SchemaMetadataResolver {
  constructor(private readonly deps: ResolverDeps) {}

  async fromUrl(tenantId: string, url: string): Promise<ResolvedSchemaMetadata> {
    const field = 'body.schemaMetadataUrl';
    const document = await this.fetchJson(url, field, 'the document');
    const signedJwt = (document as { signedJwt?: unknown } | null)?.signedJwt;
    if (typeof signedJwt !== 'string' || signedJwt.length === 0) throw unusable(field, 'the document it names holds no signedJwt');
    return this.fromJwt(tenantId, signedJwt, field, 'its signedJwt: ');
  }

  async fromJwt(tenantId: string, jwt: string, field = 'body.signedJwt', prefix = ''): Promise<ResolvedSchemaMetadata> {
    let verified: Awaited<ReturnType<typeof verifySchemaJwt>>;
    try {
      verified = await verifySchemaJwt(jwt, this.deps.clock.now());
    } catch (err) {
      if (err instanceof SchemaJwtError) throw unusable(field, `${prefix}${err.message}`);
      throw err;
    }
    const { payload, x5c, leaf } = verified;
    const credentials = await this.credentialsOf(payload, field, prefix);
    const trusted = await this.deps.trustedCertificates(tenantId);
    return {
      id: payload.id,
      version: payload.version,
      attestationLoS: payload.attestationLoS,
      bindingType: payload.bindingType,
      rulebookURI: payload.rulebookURI ?? null,
      rulebookIntegrity: payload.rulebookIntegrity ?? null,
      issuedAt: payload.iat === undefined ? null : new Date(payload.iat * 1000).toISOString(),
      supportedFormats: credentials.map((c) => c.format),
      trustedAuthorities: payload.trustedAuthorities ?? [],
      signer: { ...describeCertificate(leaf), trusted: trusted.length ? chainsToTrusted(x5c, trusted, this.deps.clock.now()) : null },
      credentials: credentials.map(described),
      dcql_query: dcqlQueryOf(credentials),
    };
  }

  /** One credential per format (its first schema entry), with the claims its schema names. */
  private async credentialsOf(payload: VerifiedPayload, field: string, prefix: string): Promise<FormatCredential[]> {
    const credentials: FormatCredential[] = [];
    for (const [i, entry] of payload.schemaURIs.entries()) {
      if (credentials.some((c) => c.format === entry.formatIdentifier)) continue;
      const at = `${prefix}schemaURIs.${i}`;
      const schema = await this.schemaOf(entry, field, at);
      try {
        credentials.push(typed(entry, schema));
      } catch (err) {
        throw unusable(field, `${at}: ${(err as Error).message}`);
      }
    }
    return credentials;
  }

  private async schemaOf(entry: SchemaEntry, field: string, at: string): Promise<Record<string, unknown>> {
    if (entry.schemaContent) return entry.schemaContent;
    if (!entry.uri) throw unusable(field, `${at} has neither uri nor schemaContent`);
    const schema = await this.fetchJson(entry.uri, field, `${at}.uri`, entry.integrity);
    if (!schema || typeof schema !== 'object' || Array.isArray(schema))
      throw unusable(field, `${at}.uri: the document is not a JSON Schema object`);
    return schema as Record<string, unknown>;
  }

  /** GET a JSON document; a refused or unusable answer is a 400 naming `field`, an unreachable server a 502. */
  private async fetchJson(url: string, field: string, what: string, integrity?: string): Promise<unknown> {
    if (!URL.canParse(url)) throw unusable(field, `${what}: ${url.slice(0, 100)} is not a URL`);
    let reply: Awaited<ReturnType<OutboundClient['request']>>;
    try {
      reply = await this.deps.outbound.request(url, { headers: { accept: 'application/json' }, maxBytes: MAX_SCHEMA_BYTES });
    } catch (err) {
      if (err instanceof OutboundRefused) throw unusable(field, `${what}: ${err.message}`);
      throw new Problem(502, 'Bad Gateway', `${what} could not be fetched from ${url}: ${(err as Error).message}`);
    }
    if (!reply.ok) throw unusable(field, `${what}: ${url} answered HTTP ${reply.status}`);
    if (integrity && !integrityHolds(reply.body, integrity))
      throw unusable(field, `${what}: the document does not match its integrity ${integrity}`);
    const body = jsonOf(reply);
    if (body === undefined) throw unusable(field, `${what}: ${url} did not answer JSON`);
    return body;
  }
}

/** The format's type from the entry's meta, and the claims of its schema. */
function typed(entry: SchemaEntry, schema: Record<string, unknown>): FormatCredential {
  const { type: names, claimsOfSchema } = knownFormat(entry.formatIdentifier);
  const type = firstString(...names.schemaMetaCandidates(entry.meta ?? {}));
  if (!type) throw new Error(`meta names no ${names.schemaMetaMember}`);
  return { format: entry.formatIdentifier, type, claims: claimsOfSchema(schema) };
}

/** A credential as the answer describes it: its type under the member its format names it by (vct, doctype). */
function described({ format, type, claims }: FormatCredential): ResolvedSchemaMetadata['credentials'][number] {
  return { format, [knownFormat(format).type.member]: type, claims };
}

const firstString = (...values: unknown[]) => values.find((v): v is string => typeof v === 'string' && v.length > 0 && v.length <= 2048);

/** Subresource integrity (sha256-, sha384-, sha512- with base64): any one listed hash that matches. */
function integrityHolds(body: Buffer, integrity: string): boolean {
  return integrity.split(/\s+/).some((item) => {
    const match = /^sha(256|384|512)-([A-Za-z0-9+/]+={0,2})$/.exec(item);
    return match !== null && createHash(`sha${match[1]}`).update(body).digest('base64') === match[2];
  });
}

function describeCertificate(cert: X509Certificate) {
  return {
    subject: cert.subject.split('\n').join(', '),
    issuer: cert.issuer.split('\n').join(', '),
    serialNumber: cert.serialNumber,
    notBefore: new Date(cert.validFrom).toISOString(),
    notAfter: new Date(cert.validTo).toISOString(),
  };
}
