// The token request (RFC 6749 section 4.1.3 form body; OpenID4VCI 1.0 section 6.1 for the
// pre-authorized code grant). Parsed here so each grant reads typed fields.
import { z } from 'zod';
import { PRE_AUTHORIZED_GRANT } from '../credential-offer/schemas.js';
import { invalidRequest, unsupportedGrantType } from '../errors.js';

const PreAuthorizedCodeRequest = z.object({
  grant_type: z.literal(PRE_AUTHORIZED_GRANT),
  'pre-authorized_code': z.string().min(1, 'pre-authorized_code is required'),
  tx_code: z.string().optional(),
});
export type PreAuthorizedCodeRequest = z.infer<typeof PreAuthorizedCodeRequest>;

export const GRANT_TYPES = [PRE_AUTHORIZED_GRANT] as const;

/** The grant the body asks for, typed; unsupported_grant_type or invalid_request naming the field otherwise. */
export function parseTokenRequest(body: Record<string, unknown>): PreAuthorizedCodeRequest {
  if (body.grant_type !== PRE_AUTHORIZED_GRANT) throw unsupportedGrantType(`grant_type must be one of ${GRANT_TYPES.join(', ')}`);
  const parsed = PreAuthorizedCodeRequest.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.join('.') || 'body';
  throw invalidRequest(
    issue?.code === 'invalid_type' && issue.input === undefined ? `${field} is required` : `${field}: ${issue?.message}`,
  );
}
