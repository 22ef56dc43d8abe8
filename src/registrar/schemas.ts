import { z } from 'zod';

const Url = z.url({ protocol: /^https?$/ }).max(2048);
const Defaults = z
  .record(z.string(), z.unknown())
  .nullable()
  .describe('merged into registration certificate requests (for example a privacy policy and a support URI)');

export const RegistrarConfigBody = z.strictObject({
  registrarUrl: Url.describe('base URL of the registrar API'),
  oidcUrl: Url.describe('issuer URL of the identity provider the registrar login uses (a Keycloak realm)'),
  clientId: z.string().min(1).max(256),
  clientSecret: z.string().min(1).max(1024).optional().describe('write-only; for a confidential client; stored encrypted'),
  username: z.string().min(1).max(256),
  password: z.string().min(1).max(1024).describe('write-only; stored encrypted, never returned'),
  registrationCertificateDefaults: Defaults.optional(),
});

export const RegistrarConfigPatch = z.strictObject({
  registrarUrl: Url.optional(),
  oidcUrl: Url.optional(),
  clientId: z.string().min(1).max(256).optional(),
  clientSecret: z.string().min(1).max(1024).nullable().optional().describe('null removes it (a public client)'),
  username: z.string().min(1).max(256).optional(),
  password: z.string().min(1).max(1024).optional(),
  registrationCertificateDefaults: Defaults.optional(),
});

export const RegistrarConfigView = z
  .object({
    registrarUrl: z.string(),
    oidcUrl: z.string(),
    clientId: z.string(),
    username: z.string(),
    registrationCertificateDefaults: z.record(z.string(), z.unknown()).nullable(),
    hasPassword: z.boolean(),
    hasClientSecret: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'RegistrarConfig' });

export type RegistrarConfigInput = z.infer<typeof RegistrarConfigBody>;
export type RegistrarConfigChanges = z.infer<typeof RegistrarConfigPatch>;
export type RegistrarConfig = z.infer<typeof RegistrarConfigView>;
