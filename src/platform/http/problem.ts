// RFC 9457 problem details: the error shape of the management API. Services throw these; the
// error handler turns them into responses (or into OAuth errors on the protocol surface).

export interface FieldError {
  field: string;
  message: string;
}

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail?: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail ?? title);
    this.name = 'Problem';
  }
}

/**
 * An OAuth 2.0 error (RFC 6749 section 5.2): sent as {error, error_description} wherever it is
 * thrown, because OAuth clients parse that shape, including at the management token endpoint.
 */
export class OAuthError extends Problem {
  constructor(
    status: number,
    readonly error: string,
    description: string,
    headers: Record<string, string> = {},
  ) {
    super(status, error, description, { error }, headers);
  }
}

export const badRequest = (detail: string, errors: FieldError[] = []) =>
  new Problem(400, 'Bad Request', detail, errors.length ? { errors } : {});
export const invalidFields = (errors: FieldError[]) => badRequest(errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);
export const forbidden = (detail: string, errors: FieldError[] = []) =>
  new Problem(403, 'Forbidden', detail, errors.length ? { errors } : {});
export const notFound = (what: string, id: string) => new Problem(404, 'Not Found', `${what} '${id}' does not exist`);
export const conflict = (detail: string) => new Problem(409, 'Conflict', detail);

/**
 * The lookup's value, or undefined when it answered 404. Any other failure (the database gone)
 * propagates and becomes a 500, instead of passing for "not there" and a 400.
 */
export async function unlessNotFound<T>(lookup: Promise<T>): Promise<T | undefined> {
  try {
    return await lookup;
  } catch (err) {
    if (err instanceof Problem && err.status === 404) return undefined;
    throw err;
  }
}
