// The one check, for values parsed from JSON, that a value is an object with members (not null, not an array).

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
