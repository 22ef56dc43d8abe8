// The registrar's certificates as the management API offers them: an access certificate for a key
// chain (registrar:manage), and the registration certificate of a presentation configuration
// obtained again (presentation:manage).
import { z } from 'zod';
import { KeyChainSchema } from '../key-chains/routes.js';
import { contextOf, tenantOf } from '../platform/http/access.js';
import { withExample } from '../platform/http/examples.js';
import type { App } from '../platform/http/types.js';
import { PresentationConfigurationSchema } from '../presentation-configs/schemas.js';
import type { AccessCertificates } from './access-certificates.js';
import type { RegistrationCertificates } from './registration-certificates.js';

const AccessCertificateBody = z.strictObject({
  keyChainId: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe("a key chain of usage type access; default: the tenant's default access key chain"),
});

const ACCESS_CERTIFICATE = [
  "Registers the tenant's relying party at the registrar when it has none (the first one the registrar lists is used), asks the registrar",
  "for an access certificate for the key chain's active public key (SPKI PEM, with the host name of PUBLIC_URL as DNS name), checks that",
  "the certificate certifies that key and stores it as the key chain's certificate, as a PATCH of the key chain with `certificate` would:",
  'requests signed with the chain then carry it (x5c) and x509_hash client ids follow it. Answers the updated key chain.',
  '400 naming body.keyChainId for a chain that does not exist or is not an access chain; 409 when the tenant has no registrar configured;',
  "502 with the registrar's message when the registrar fails, and when its certificate does not certify the key.",
].join(' ');

const REISSUE = [
  'Obtains the registration certificate of the configuration from the registrar again, bypassing registrationCertCache, and answers',
  'the configuration with the new cache. 409 when registration_cert is not set or gives the certificate as jwt, or when the tenant has',
  "no registrar configured; 502 with the registrar's message when the registrar fails.",
].join(' ');

export function registrarCertificateRoutes(app: App, access: AccessCertificates, registration: RegistrationCertificates) {
  app.post(
    '/api/registrar/access-certificate',
    {
      config: { access: { roles: ['registrar:manage'], tenant: 'required' } },
      schema: {
        tags: ['registrar'],
        summary: 'Obtain an access certificate from the registrar for a key chain and store it there',
        description: ACCESS_CERTIFICATE,
        body: withExample(
          AccessCertificateBody.nullish().describe("optional: without a body the tenant's default access key chain is used"),
          { keyChainId: 'default-access' },
        ),
        response: { 200: KeyChainSchema },
      },
    },
    (request) => access.request(contextOf(request), tenantOf(request), request.body ?? {}),
  );
  app.post(
    '/api/verifier/config/:id/registration-cert/reissue',
    {
      config: { access: { roles: ['presentation:manage'], tenant: 'required' } },
      schema: {
        tags: ['presentation configurations'],
        summary: 'Obtain the registration certificate of a presentation configuration again',
        description: REISSUE,
        params: z.object({ id: z.string() }),
        response: { 200: PresentationConfigurationSchema },
      },
    },
    (request) => registration.reissue(contextOf(request), tenantOf(request), request.params.id),
  );
}
