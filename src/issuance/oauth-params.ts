// Form and query parameters of the OAuth endpoints, parsed by a zod schema: the first fault is an
// invalid_request naming the parameter, as RFC 6749 section 5.2 asks.
import type { z } from 'zod';
import { invalidRequest } from './errors.js';

export function parseOAuthParams<T extends z.ZodType>(schema: T, params: unknown): z.output<T> {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.join('.') || 'request';
  // A repeated form parameter arrives as an array: that is malformed, not missing.
  const missing = issue?.code === 'invalid_type' && issue.path.length === 1 && valueAt(params, issue.path[0]) === undefined;
  throw invalidRequest(missing ? `${field} is required` : `${field}: ${issue?.message}`);
}

const valueAt = (params: unknown, key: PropertyKey | undefined) =>
  typeof params === 'object' && params !== null && typeof key === 'string' && Object.hasOwn(params, key)
    ? (params as Record<string, unknown>)[key]
    : undefined;
