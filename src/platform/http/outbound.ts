// Outgoing webhook calls: JSON POST with a bounded timeout and a few retries; the caller hears of
// every attempt (to log it), so a failure is never silent.
const TIMEOUT_MS = 5_000;
export const RETRY_DELAYS_MS: readonly number[] = [1_000, 5_000, 15_000];

export interface Attempt {
  attempt: number;
  /** Undefined when the endpoint answered 2xx. */
  failure?: string;
  /** True when no further attempt will follow. */
  final: boolean;
}

export async function postJsonWithRetries(
  endpoint: { url: string; headers: Record<string, string> },
  payload: unknown,
  onAttempt: (attempt: Attempt) => Promise<void>,
  retryDelaysMs: readonly number[] = RETRY_DELAYS_MS,
): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const failure = await post(endpoint, payload);
    const delay = retryDelaysMs[attempt - 1];
    await onAttempt({ attempt, ...(failure && { failure }), final: !failure || delay === undefined });
    if (!failure) return true;
    if (delay === undefined) return false;
    await new Promise((resolve) => setTimeout(resolve, delay).unref());
  }
}

async function post(endpoint: { url: string; headers: Record<string, string> }, payload: unknown): Promise<string | undefined> {
  try {
    const response = await fetch(endpoint.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...endpoint.headers },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await response.body?.cancel();
    return response.ok ? undefined : `answered ${response.status}`;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
