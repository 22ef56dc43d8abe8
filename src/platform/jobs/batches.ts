// Clean-up jobs delete in batches: each statement deletes at most `size` rows (a short transaction
// holding few row locks, so flows writing the same tables are not kept waiting), and a run stops
// after `maxBatches` statements, so that one run takes bounded time and a large backlog (a year's
// expired sessions) is worked off over several runs.

export interface BatchLimits {
  /** Rows per statement. */
  size: number;
  /** Statements per run. */
  maxBatches: number;
}

export const CLEANUP_BATCHES: BatchLimits = { size: 1000, maxBatches: 100 };

/**
 * Calls `deleteBatch(size)` (which deletes at most `size` rows and answers how many it did) until a
 * batch comes back short or the run's cap is reached; answers the rows deleted in all.
 */
export async function deleteInBatches(
  deleteBatch: (size: number) => Promise<number>,
  limits: BatchLimits = CLEANUP_BATCHES,
): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < limits.maxBatches; batch++) {
    const count = await deleteBatch(limits.size);
    deleted += count;
    if (count < limits.size) break;
  }
  return deleted;
}
