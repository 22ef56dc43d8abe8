// Heavy protocol libraries (mdoc, SD-JWT, DCQL, the PostgreSQL driver) are loaded by the first
// request that needs them, not at start-up: the compiled service keeps them in separate chunks, so
// the process starts sooner and an instance that never verifies an mdoc never holds that code.

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
