// The example of a request body: what the API explorer's "Try it out" starts with, checked against
// the body's type here, and sent to a running service by test/openapi/request-examples.test.ts. The
// schema is copied with the example (zod's meta returns a new schema), so a schema shared with the
// configuration files keeps its own metadata.
import type { z } from 'zod';

export const withExample = <T extends z.ZodType>(schema: T, example: z.input<T>): T => schema.meta({ examples: [example] }) as T;

/**
 * The OpenAPI transform of a route, keeping the example of a body whose schema the document names
 * (a $ref to a component schema): the document writer drops the examples beside a reference, so the
 * reference is wrapped (allOf of the one schema, the same type) and the examples put beside it.
 */
export function keepBodyExample<O extends { schema?: unknown }>(output: O): O {
  const body = (output.schema as { body?: Record<string, unknown> } | undefined)?.body;
  if (!body || !('$ref' in body) || !('examples' in body)) return output;
  const { $ref, examples, ...rest } = body;
  return { ...output, schema: { ...(output.schema as object), body: { ...rest, allOf: [{ $ref }], examples } } };
}
