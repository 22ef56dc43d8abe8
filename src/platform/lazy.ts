// Heavy protocol libraries (mdoc, SD-JWT, DCQL, the PostgreSQL driver) are loaded by the first
// request that needs them, not at start-up: the compiled service keeps them in separate chunks, so
// the process starts sooner and an instance that never verifies an mdoc never holds that code.
import { createRequire } from 'node:module';

/** A module loaded once, on first use; a failed load is tried again on the next call. */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((err) => {
      loading = undefined;
      throw err;
    });
    return loading;
  };
}

/**
 * A package (or one of Node's own modules) required at its first use, synchronously. The build
 * leaves a require of this module's own to run time, so the compiled service reads the package from
 * node_modules then, and never at start.
 */
export function requireOnFirstUse<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= createRequire(import.meta.url)(specifier) as T;
    return loaded;
  };
}
