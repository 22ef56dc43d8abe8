// Form and query parameters of the OAuth endpoints, parsed by a zod schema: the first fault is an
// invalid_request naming the parameter, as RFC 6749 section 5.2 asks.
import type { z } from 'zod';
import { invalidRequest } from './errors.js';

export function parseOAuthParams<T extends z.ZodType>(schema: T, params: unknown): z.output<T> {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.join('.') || 'request';
  throw invalidRequest(
    issue?.code === 'invalid_type' && issue.input === undefined ? `${field} is required` : `${field}: ${issue?.message}`,
  );
}
