import { z } from 'zod';

/** What a header value reads as in every response: the value is write-only. */
export const MASK = '****';

/** Headers the HTTP client sets itself; a configured header must not override them. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection']);

export const EndpointId = z.string().regex(/^[A-Za-z0-9._~-]{1,64}$/, 'must be 1-64 URL-safe characters');

const HeaderName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'must be an HTTP header name (RFC 9110 token)')
  .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), 'is set by the service itself');
const HeaderValue = z
  .string()
  .min(1)
  .max(4096)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  .regex(/^[^\u0000-\u0008\u000a-\u001f\u007f]+$/, 'must not contain control characters');

const EndpointUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
  .max(2048)
  .refine((url) => !/^[a-z]+:\/\/[^/?#]*@/i.test(url), 'must not carry credentials; put them in auth');

export const AuthInputSchema = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('none') }),
    z.strictObject({
      type: z.literal('header'),
      header: z.strictObject({
        name: HeaderName.describe('for example Authorization or X-Api-Key'),
        value: HeaderValue.describe('write-only: stored encrypted, answered as ****'),
      }),
    }),
  ])
  .describe('how the service authenticates to the endpoint: nothing, or one request header');

export const AuthViewSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('none') }),
    z.object({
      type: z.literal('header'),
      header: z.object({ name: z.string(), value: z.literal(MASK).describe('always ****: the value is never returned') }),
    }),
  ])
  .describe('the configured authentication; a header value is always masked as ****');

export type AuthInput = z.infer<typeof AuthInputSchema>;
export type AuthView = z.infer<typeof AuthViewSchema>;

const Fields = {
  name: z.string().min(1).max(200),
  description: z.string().max(1000).nullable().optional(),
  url: EndpointUrl,
  auth: AuthInputSchema,
};

export const CreateEndpointBody = z.strictObject({ id: EndpointId, ...Fields });
export const UpdateEndpointBody = z.strictObject({
  id: EndpointId.optional().describe('accepted only when equal to the id in the path'),
  name: Fields.name.optional(),
  description: Fields.description,
  url: Fields.url.optional(),
  auth: AuthInputSchema.optional().describe('replaces the stored authentication as a whole'),
});
export type CreateEndpoint = z.infer<typeof CreateEndpointBody>;
export type UpdateEndpoint = z.infer<typeof UpdateEndpointBody>;

const endpointSchema = (schemaId: string) =>
  z
    .object({
      id: z.string(),
      tenantId: z.string(),
      name: z.string(),
      description: z.string().nullable(),
      url: z.string(),
      auth: AuthViewSchema,
      createdAt: z.string(),
      updatedAt: z.string(),
    })
    .meta({ id: schemaId });
/** The response shapes: one shape, one named OpenAPI schema per kind. */
export const AttributeProviderSchema = endpointSchema('AttributeProvider');
export const WebhookEndpointSchema = endpointSchema('WebhookEndpoint');

const SigningSecret = z
  .string()
  .describe(
    'the Standard Webhooks signing secret (whsec_ and base64): shown this once, never again; verify the webhook-signature header with it',
  );
export const CreatedWebhookEndpointSchema = WebhookEndpointSchema.extend({ signingSecret: SigningSecret }).meta({
  id: 'CreatedWebhookEndpoint',
});
export const RotatedSecretSchema = z.object({ signingSecret: SigningSecret }).meta({ id: 'RotatedWebhookSecret' });

export interface HttpEndpoint {
  id: string;
  tenantId: string;
  name: string;
  description: string | null;
  url: string;
  auth: AuthView;
  createdAt: string;
  updatedAt: string;
}
