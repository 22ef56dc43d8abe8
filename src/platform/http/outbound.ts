// Outgoing webhook calls: JSON POST with a bounded timeout and a few retries; the caller hears of
// every attempt (to log it), so a failure is never silent. A refused destination is not retried.
import { type OutboundClient, OutboundRefused } from './outbound-client.js';

export interface Attempt {
  attempt: number;
  /** Undefined when the endpoint answered 2xx. */
  failure?: string;
  /** True when no further attempt will follow. */
  final: boolean;
}

export async function postJsonWithRetries(
  client: OutboundClient,
  endpoint: { url: string; headers: Record<string, string> },
  payload: unknown,
  onAttempt: (attempt: Attempt) => Promise<void>,
  /** WEBHOOK_RETRY_DELAYS_MS: one retry after each delay. */
  retryDelaysMs: readonly number[],
): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const { failure, retry } = await post(client, endpoint, payload);
    const delay = retry ? retryDelaysMs[attempt - 1] : undefined;
    await onAttempt({ attempt, ...(failure && { failure }), final: !failure || delay === undefined });
    if (!failure) return true;
    if (delay === undefined) return false;
    await new Promise((resolve) => setTimeout(resolve, delay).unref());
  }
}

async function post(
  client: OutboundClient,
  endpoint: { url: string; headers: Record<string, string> },
  payload: unknown,
): Promise<{ failure?: string; retry: boolean }> {
  try {
    const response = await client.request(endpoint.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...endpoint.headers },
      body: JSON.stringify(payload),
    });
    return response.ok ? { retry: false } : { failure: `answered ${response.status}`, retry: true };
  } catch (err) {
    return { failure: err instanceof Error ? err.message : String(err), retry: !(err instanceof OutboundRefused) };
  }
}
