import { z } from 'zod';
import { SIGNING_ALGORITHMS } from '../platform/crypto/algorithms.js';
import { parsePemChain, toPem } from '../platform/crypto/x509.js';
import { contextOf, tenantOf } from '../platform/http/access.js';
import { withExample } from '../platform/http/examples.js';
import type { App } from '../platform/http/types.js';
import { USAGE_TYPES } from './model.js';
import { KEY_NAME } from './providers/key-names.js';
import type { KeyChainService } from './service.js';
import type { SigningService } from './signing.js';

const PublicJwk = z
  .object({
    kty: z.string().optional(),
    crv: z.string().optional(),
    x: z.string().optional(),
    y: z.string().optional(),
    kid: z.string().optional(),
  })
  .loose();
const SubjectInput = z.strictObject({
  commonName: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      "at most 64 characters (RFC 5280), 61 for an internalChain (its root CA is named '{commonName} CA'); default '{tenant} {usageType}'",
    ),
  organization: z.string().min(1).max(64).optional(),
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code such as DE')
    .optional(),
});

export const KeyChainSchema = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    description: z.string().nullable(),
    usageType: z.enum(USAGE_TYPES),
    usage: z.enum(['sign', 'encrypt']),
    type: z.enum(['standalone', 'internalChain', 'imported']),
    default: z.boolean().describe("whether this is the tenant's default key chain of its usage type"),
    algorithm: z.enum(SIGNING_ALGORITHMS),
    kmsProvider: z.string(),
    externalKeyId: z.string().nullable(),
    subject: z.object({ commonName: z.string(), organization: z.string().optional(), country: z.string() }),
    rootJwk: PublicJwk.nullable().describe('public key of the root CA (internal chains)'),
    rootCertificate: z.string().nullable(),
    activeJwk: PublicJwk.describe('public key in use; private keys never leave the service'),
    activeCertificate: z.string().describe('PEM: leaf, then intermediates'),
    previousJwk: PublicJwk.nullable(),
    previousCertificate: z.string().nullable(),
    previousKeyExpiry: z.string().nullable().describe('until then the previous key is still published'),
    rotationEnabled: z.boolean(),
    rotationIntervalDays: z.number(),
    certValidityDays: z.number(),
    lastRotatedAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'KeyChain' });

const Id = z.string().regex(/^[A-Za-z0-9._~-]{1,64}$/, 'must be 1-64 URL-safe characters');
const Settings = {
  description: z.string().max(1000).nullable().optional(),
  rotationEnabled: z.boolean().optional().describe('default false'),
  rotationIntervalDays: z.number().int().min(1).max(3650).optional().describe('default 90'),
  certValidityDays: z.number().int().min(1).max(457).optional().describe('leaf validity, default 365 (ISO 18013-5 allows up to 457)'),
  default: z.boolean().optional().describe('make this the default of its usage type (the first of a type always is)'),
};
export const CreateBody = z.strictObject({
  id: Id.optional().describe('generated (UUID) when absent'),
  usageType: z.enum(USAGE_TYPES),
  type: z
    .enum(['standalone', 'internalChain', 'imported'])
    .describe(
      "standalone: self-signed (HAIP 1.0 forbids it where a wallet sees the certificate); internalChain: a root CA of the tenant signs the leaf, and only the leaf goes into x5c (the tenant's default key chains are internal chains); imported: the key and the certificate chain the provider issued for it, for (and only for) a provider of type csc, whose QTSP holds both (externalKeyId names the credential)",
    ),
  algorithm: z.enum(SIGNING_ALGORITHMS).optional().describe('default ES256'),
  subject: SubjectInput.optional(),
  kmsProvider: z
    .string()
    .min(1)
    .optional()
    .describe(
      "where the private keys live: db (sealed in the database) or a provider of GET /api/key-chain/providers; default: KMS_PROVIDERS' defaultProvider (db without it; always db for usage type encrypt)",
    ),
  externalKeyId: z
    .string()
    .min(1)
    .nullable()
    .optional()
    .describe(
      "the tenant's name for the key (1-100 letters, digits, _ or -), in the provider svc.<tenant>.<instance>.<externalKeyId> (AWS KMS: alias/svc/<tenant>/<instance>/<externalKeyId>; <instance> tells the tenant from a deleted one of the same id) unless KMS_PROVIDERS lets the tenant adopt an existing key of that very name: the key is used if it exists, else made there; an internal chain's root is <externalKeyId>-root, a rotated key <externalKeyId>-<UTC time>. Required when kmsProvider is given and not db; for the default provider it defaults to the key chain id",
    ),
  ...Settings,
});
// Ten certificates of several kilobytes each fit easily; the cap keeps parsing bounded.
const PemChain = z.string().max(65_536);
export const ImportBody = z.strictObject({
  id: Id.optional(),
  usageType: z.enum(USAGE_TYPES),
  privateJwk: z.record(z.string(), z.unknown()).describe('EC private key (P-256, P-384 or P-521)'),
  certificateChain: PemChain.optional().describe('PEM, leaf first; a self-signed certificate is made when absent'),
  subject: SubjectInput.optional(),
  ...Settings,
});
export const UpdateBody = z.strictObject({
  ...Settings,
  certificate: PemChain.optional().describe('a new PEM chain (leaf first) for the same active key, e.g. issued by a registrar'),
  externalKeyId: z
    .string()
    .regex(KEY_NAME, 'must be 1-100 letters, digits, _ or -')
    .optional()
    .describe(
      'key chains of a csc provider only: the QTSP credential to sign with from now on, with the certificates it has there (how such a chain is renewed: it is not rotated); a new key becomes the active one and the one it replaces stays published until its certificate expires; the same credentialID again takes its renewed certificates',
    ),
});
const Params = z.object({ id: z.string() });
const ProviderSchema = z
  .object({
    id: z.string().describe('the value of kmsProvider: db, or an id of KMS_PROVIDERS'),
    type: z.enum(['db', 'pkcs11', 'vault', 'aws-kms', 'azure-keyvault', 'gcp-kms', 'csc']),
    default: z.boolean().describe('key chains created without kmsProvider use this one'),
    capabilities: z.object({
      generate: z.boolean().describe('makes a key when the externalKeyId names none yet'),
      import: z.boolean().describe('takes private keys from outside (POST /api/key-chain/import)'),
      algorithms: z.array(z.enum(SIGNING_ALGORITHMS)),
      decrypt: z.boolean().describe('decrypts ECDH-ES (key chains of usage type encrypt)'),
    }),
  })
  .meta({ id: 'KeyProvider' });
const Jwks = z.object({ keys: z.array(PublicJwk) });
const MoveToCaSchema = z
  .object({
    moved: z.array(KeyChainSchema).describe('the key chains now issued by a root CA of their own (type internalChain)'),
    skipped: z
      .array(z.object({ id: z.string(), reason: z.string() }))
      .describe('self-signed key chains left as they were, each with why (imported, or a common name too long for its root CA)'),
  })
  .meta({ id: 'KeyChainsMovedToCa' });

const access = { roles: ['issuance:manage', 'presentation:manage'], tenant: 'required' } as const;
const tags = ['key chains'];

export function keyChainRoutes(app: App, keyChains: KeyChainService, signing: SigningService) {
  app.get(
    '/api/key-chain',
    {
      config: { access },
      schema: {
        tags,
        summary: "List the tenant's key chains",
        querystring: z.strictObject({ usageType: z.enum(USAGE_TYPES).optional() }),
        response: { 200: z.array(KeyChainSchema) },
      },
    },
    (request) => keyChains.list(tenantOf(request), request.query.usageType),
  );

  app.get(
    '/api/key-chain/providers',
    {
      config: { access },
      schema: {
        tags,
        summary: 'The key providers configured (KMS_PROVIDERS) and what each can do',
        response: { 200: z.array(ProviderSchema) },
      },
    },
    () => keyChains.providerList() as z.infer<typeof ProviderSchema>[],
  );

  app.post(
    '/api/key-chain',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Create a key and its certificate(s)',
        description:
          'With a kmsProvider of type csc (a QTSP), no key is made: type imported takes the credential externalKeyId names, with the certificate chain the QTSP issued for it. A credential that needs a person to authorize its signatures (oauth2code) is a 400 naming externalKeyId; a QTSP that does not answer is a 503 naming the provider.',
        body: withExample(CreateBody, { id: 'signer', usageType: 'attestation', type: 'internalChain', description: 'signs the PID' }),
        response: { 201: KeyChainSchema },
      },
    },
    async (request, reply) => reply.code(201).send(await keyChains.create(contextOf(request), tenantOf(request), request.body)),
  );

  app.post(
    '/api/key-chain/import',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Import a private key with an optional certificate chain',
        body: withExample(ImportBody, {
          id: 'imported',
          usageType: 'access',
          description: 'an example key, known to everyone who reads this: import your own',
          privateJwk: {
            kty: 'EC',
            crv: 'P-256',
            x: 'dIvNjPH_eG3dkhE5tIIcLrGw1ADfxDjbZqeK1EcmS4U',
            y: 'lGseV9ZnWdkdRQ2iRegpTckKeopcxDlGdfYIhclNeYw',
            d: 'MzGAP24g3qfZS8cg46Ahb-yq4pH1H-YG8VmEQ-4Xn0c',
          },
        }),
        response: { 201: KeyChainSchema },
      },
    },
    async (request, reply) => reply.code(201).send(await keyChains.import(contextOf(request), tenantOf(request), request.body)),
  );

  app.post(
    '/api/key-chain/move-to-ca',
    {
      config: { access },
      schema: {
        tags,
        summary: "Move the tenant's self-signed key chains under a root CA (HAIP 1.0: no self-signed certificate in x5c)",
        description:
          'For a tenant made before its default key chains were CA-issued: every key chain whose active certificate is ' +
          'self-signed (standalone) gets a root CA of its own and a certificate for the same key signed by it, and becomes ' +
          'an internalChain. The key and its kid stay, so whatever it signed stays valid; status lists and trust lists are ' +
          'signed again with the new chain, and a request signed with an access key chain now has another x509_hash ' +
          'client_id (the hash of the new certificate). Chains under a CA already are left alone and not listed; imported ' +
          'self-signed chains are listed under skipped, since their certificates come from outside. Calling it again moves nothing more.',
        response: { 200: MoveToCaSchema },
      },
    },
    (request) => keyChains.moveToCa(contextOf(request), tenantOf(request)),
  );

  app.get(
    '/api/key-chain/:id',
    {
      config: { access },
      schema: { tags, summary: 'Get a key chain', params: Params, response: { 200: KeyChainSchema } },
    },
    (request) => keyChains.get(tenantOf(request), request.params.id),
  );

  app.patch(
    '/api/key-chain/:id',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Change settings, make default, or replace the certificate of the same key',
        description: 'A key chain of a csc provider is renewed here: externalKeyId points it at another credential of the QTSP.',
        params: Params,
        body: withExample(UpdateBody, {
          description: 'signs the PID',
          rotationEnabled: true,
          rotationIntervalDays: 90,
          certValidityDays: 365,
        }),
        response: { 200: KeyChainSchema },
      },
    },
    (request) => keyChains.update(contextOf(request), tenantOf(request), request.params.id, request.body),
  );

  app.post(
    '/api/key-chain/:id/rotate',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Rotate now: a new active key; the previous one stays published until its certificate expires',
        description:
          'A 400 for a key chain of a csc provider, which makes no keys (PATCH externalKeyId instead); a 409 for another imported key chain.',
        params: Params,
        response: { 200: KeyChainSchema },
      },
    },
    (request) => keyChains.rotate(contextOf(request), tenantOf(request), request.params.id),
  );

  app.delete(
    '/api/key-chain/:id',
    {
      config: { access },
      schema: { tags, summary: 'Delete a key chain (409 while it is the default or in use)', params: Params, response: { 204: z.null() } },
    },
    async (request, reply) => {
      await keyChains.remove(contextOf(request), tenantOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/key-chain/:id/certificate',
    {
      config: { access },
      schema: {
        tags,
        summary: 'The certificate chain as PEM, leaf first, root last',
        params: Params,
        produces: ['application/pem-certificate-chain'],
      },
    },
    async (request, reply) => {
      const chain = await keyChains.get(tenantOf(request), request.params.id);
      const pem = toPem([...parsePemChain(chain.activeCertificate), ...parsePemChain(chain.rootCertificate ?? '')]);
      return reply.type('application/pem-certificate-chain').send(`${pem}\n`);
    },
  );

  app.get(
    '/api/key-chain/:id/public-key',
    {
      config: { access },
      schema: { tags, summary: 'The public keys (active, and previous while valid) as a JWK set', params: Params, response: { 200: Jwks } },
    },
    async (request) => {
      const chain = await keyChains.get(tenantOf(request), request.params.id);
      return { keys: [chain.activeJwk, ...(chain.previousJwk ? [chain.previousJwk] : [])] };
    },
  );

  // Public: where verifiers look for this tenant's keys and for the CRL named in its certificates.
  app.get(
    '/issuers/:tenantId/jwks.json',
    {
      schema: {
        tags: ['public keys'],
        summary: "The tenant's public keys (current and still-valid previous)",
        params: z.object({ tenantId: z.string() }),
        response: { 200: Jwks },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return signing.jwks(request.params.tenantId);
    },
  );

  app.get(
    '/issuers/:tenantId/key-chains/:id/crl',
    {
      schema: {
        tags: ['public keys'],
        summary: "The CRL of the key chain's CA (DER)",
        params: z.object({ tenantId: z.string(), id: z.string() }),
        produces: ['application/pkix-crl'],
      },
    },
    async (request, reply) => {
      const crl = await keyChains.crl(request.params.tenantId, request.params.id);
      return reply.type('application/pkix-crl').header('cache-control', 'public, max-age=3600').send(Buffer.from(crl));
    },
  );
}
