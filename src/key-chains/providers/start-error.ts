/**
 * Why a key provider could not be started: `config` for what the operator wrote (a module that does
 * not load, a wrong PIN, a refused token or credentials), `unavailable` for what is not there now (a
 * token missing, a server that does not answer). The start stops with exit code 78 or 69.
 */
export class ProviderStartError extends Error {
  constructor(
    message: string,
    readonly kind: 'config' | 'unavailable',
  ) {
    super(message);
  }
}
