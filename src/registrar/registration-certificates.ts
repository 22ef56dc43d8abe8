// Registration certificates (EUDI): the registrar's signed statement of what a relying party may ask
// wallets for, and why. A presentation configuration with registration_cert sends one with every
// request (OpenID4VP verifier_info). It is obtained from the registrar once and cached on the
// configuration until shortly before it expires or until registration_cert or dcql_query changes;
// reissue() obtains it again regardless.
import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { AuditService } from '../audit/service.js';
import type { RequestContext } from '../platform/auth/principal.js';
import type { Clock } from '../platform/clock.js';
import { conflict, Problem } from '../platform/http/problem.js';
import type { RegistrationCertCache } from '../presentation-configs/schemas.js';
import type { PresentationConfigService, PresentationConfiguration } from '../presentation-configs/service.js';
import { relyingPartyId } from './relying-party.js';
import type { RegistrarService } from './service.js';

/** A cached certificate is replaced this long before it expires, so no request goes out with one about to lapse. */
const RENEW_BEFORE_EXPIRY_MS = 60_000;

type Configuration = Pick<PresentationConfiguration, 'id' | 'description' | 'dcql_query' | 'registration_cert' | 'registrationCertCache'>;

export class RegistrationCertificates {
  constructor(
    private readonly registrar: RegistrarService,
    private readonly configs: PresentationConfigService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  /** The certificate (a compact JWT) for a request made from `config`; undefined when it asks for none. */
  async forRequest(tenantId: string, config: Configuration): Promise<string | undefined> {
    const request = config.registration_cert;
    if (!request) return undefined;
    const now = this.clock.now();
    if (request.jwt) return current(request.jwt, config.id, now);
    const cached = config.registrationCertCache;
    if (cached?.fingerprint === fingerprintOf(config) && stillValid(cached.expiresAt ?? null, now)) return cached.jwt;
    return (await this.obtain(tenantId, config)).jwt;
  }

  /** Obtains the configuration's certificate from the registrar again, bypassing the cache. */
  async reissue(ctx: RequestContext, tenantId: string, id: string): Promise<PresentationConfiguration> {
    const config = await this.configs.get(tenantId, id);
    if (!config.registration_cert)
      throw conflict(`presentation configuration '${id}' asks for no registration certificate (registration_cert is not set)`);
    if (config.registration_cert.jwt)
      throw conflict(`presentation configuration '${id}' gives its registration certificate as registration_cert.jwt; it is sent as given`);
    const before = config.registrationCertCache;
    const after = await this.obtain(tenantId, config);
    await this.audit.record(ctx, {
      tenantId,
      actionType: 'presentation_config.registration_cert_reissued',
      before: { id, registrationCertId: before?.id ?? null, expiresAt: before?.expiresAt ?? null },
      after: { id, registrationCertId: after.id, expiresAt: after.expiresAt },
    });
    return this.configs.get(tenantId, id);
  }

  /**
   * From the registrar: the listed certificate registration_cert.id names, else a new one made from
   * registration_cert.body. A registrar failure is a 502 naming the configuration and the registrar's
   * message: a configuration that asks for a certificate never sends a request without one.
   */
  private async obtain(tenantId: string, config: Configuration): Promise<RegistrationCertCache> {
    if (!(await this.registrar.configured(tenantId)))
      throw conflict(
        `presentation configuration '${config.id}' asks for a registration certificate from the registrar, and the tenant has no registrar configured`,
      );
    try {
      const rpId = await relyingPartyId(this.registrar, tenantId);
      const obtained =
        (config.registration_cert?.id && (await this.listed(tenantId, rpId, config))) || (await this.create(tenantId, rpId, config));
      const cache = cacheOf(obtained, fingerprintOf(config), this.clock.now());
      await this.configs.storeRegistrationCertCache(tenantId, config.id, config.registration_cert ?? null, cache);
      return cache;
    } catch (err) {
      if (err instanceof Problem && err.status === 502)
        throw new Problem(502, 'Bad Gateway', `no registration certificate for presentation configuration '${config.id}': ${err.detail}`);
      throw err;
    }
  }

  /** The active certificate of that id among the relying party's; without a match, body is used when given. */
  private async listed(tenantId: string, rpId: string, config: Configuration): Promise<Obtained | undefined> {
    const id = config.registration_cert?.id as string;
    const listed = await this.registrar.call(tenantId, 'GET', `/registration-certificates?rp=${encodeURIComponent(rpId)}`, { auth: false });
    if (!Array.isArray(listed))
      throw new Problem(502, 'Bad Gateway', 'the registrar answered its registration certificates with something other than a list');
    const match = listed.find((entry) => (entry as { id?: unknown })?.id === id && !(entry as { revoked?: unknown }).revoked);
    if (match) return obtainedFrom(match);
    if (config.registration_cert?.body) return undefined;
    throw conflict(
      `registration_cert.id: the registrar lists no active registration certificate '${id}' of the tenant's relying party, and registration_cert.body is not given to request a new one`,
    );
  }

  private async create(tenantId: string, rpId: string, config: Configuration): Promise<Obtained> {
    const defaults = (await this.registrar.get(tenantId)).registrationCertificateDefaults ?? {};
    const given = config.registration_cert?.body ?? {};
    const body: Record<string, unknown> = { ...defaults, ...given, rpId, credentials: credentialsOf(config) };
    if (body.purpose === undefined && config.description) body.purpose = [{ lang: 'en', content: config.description.slice(0, 500) }];
    const missing = ['privacy_policy', 'support_uri'].filter((field) => typeof body[field] !== 'string');
    if (missing.length)
      throw conflict(
        `the registration certificate request of presentation configuration '${config.id}' lacks ${missing.join(' and ')}: set it in registration_cert.body or in the registrar configuration's registrationCertificateDefaults`,
      );
    return obtainedFrom(await this.registrar.call(tenantId, 'POST', '/registration-certificates', { body }));
  }
}

interface Obtained {
  id: string | null;
  jwt: string;
}

function obtainedFrom(answer: unknown): Obtained {
  const { id, jwt } = (answer ?? {}) as { id?: unknown; jwt?: unknown };
  if (typeof jwt !== 'string' || jwt.length === 0)
    throw new Problem(502, 'Bad Gateway', 'the registrar answered without a registration certificate (jwt)');
  return { id: typeof id === 'string' ? id : null, jwt };
}

function cacheOf(obtained: Obtained, fingerprint: string, now: Date): RegistrationCertCache {
  let claims: { iat?: number; exp?: number };
  try {
    claims = decodeJwt(obtained.jwt);
  } catch {
    throw new Problem(502, 'Bad Gateway', 'the registration certificate the registrar answered is not a JWT');
  }
  const time = (seconds: number | undefined) => (typeof seconds === 'number' ? new Date(seconds * 1000).toISOString() : null);
  const expiresAt = time(claims.exp);
  if (!stillValid(expiresAt, now))
    throw new Problem(502, 'Bad Gateway', `the registration certificate the registrar answered expires at ${expiresAt}`);
  return { jwt: obtained.jwt, id: obtained.id, issuedAt: time(claims.iat), expiresAt, obtainedAt: now.toISOString(), fingerprint };
}

/** A certificate given as registration_cert.jwt, checked on save, may have expired since. */
function current(jwt: string, configId: string, now: Date): string {
  let exp: number | undefined;
  try {
    exp = decodeJwt(jwt).exp;
  } catch {
    return jwt; // its form was checked on save; a payload without a readable exp has no expiry to enforce here
  }
  if (typeof exp === 'number' && exp * 1000 <= now.getTime())
    throw conflict(
      `the registration certificate of presentation configuration '${configId}' (registration_cert.jwt) expired at ${new Date(exp * 1000).toISOString()}`,
    );
  return jwt;
}

const stillValid = (expiresAt: string | null, now: Date) =>
  expiresAt === null || Date.parse(expiresAt) - RENEW_BEFORE_EXPIRY_MS > now.getTime();

/** What the certificate was obtained for: another request or another DCQL query needs another certificate. */
const fingerprintOf = (config: Configuration) =>
  createHash('sha256')
    .update(JSON.stringify([config.registration_cert, config.dcql_query]))
    .digest('base64url');

/**
 * One CredentialDef per DCQL credential query: its format, meta and claim paths (ids, values and the
 * rest are the query's own). An mdoc claim in the older namespace/claim_name form becomes its path.
 */
function credentialsOf(config: Configuration) {
  return config.dcql_query.credentials.map((credential) => ({
    format: credential.format,
    meta: (credential as { meta?: unknown }).meta ?? {},
    ...(credential.claims && {
      claims: credential.claims.map((claim) => ({ path: 'path' in claim ? claim.path : [claim.namespace, claim.claim_name] })),
    }),
  }));
}
