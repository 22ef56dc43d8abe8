// A session's status as it changes, from the service's event stream (GET /api/session/{id}/events,
// authenticated by the token in the query, as EventSource cannot send headers).
import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/index.js';
import { api, result, session } from '../api.js';

export type SessionView = components['schemas']['Session'];
export const getSession = (id: string) => result(api.GET('/api/session/{id}', { params: { path: { id } } }));

export function useLiveStatus(sessionId: string | undefined, initial?: string) {
  const [status, setStatus] = useState(initial);
  useEffect(() => {
    setStatus(initial);
    const token = session()?.token;
    if (!sessionId || !token) return;
    const events = new EventSource(`/api/session/${encodeURIComponent(sessionId)}/events?token=${encodeURIComponent(token)}`);
    events.addEventListener('status', (event) => setStatus((JSON.parse((event as MessageEvent).data) as { status: string }).status));
    // The stream ends after a final status; the browser would reconnect, which is not wanted.
    events.onerror = () => events.close();
    return () => events.close();
  }, [sessionId, initial]);
  return status;
}

export function StatusBadge({ status }: { status?: string }) {
  return (
    <span class={`status status-${status ?? 'unknown'}`} aria-live="polite">
      {status ?? '…'}
    </span>
  );
}

/** The session as stored, fetched again whenever its status changes (claims arrive with completion). */
export function useSessionDetails(sessionId: string | undefined, status: string | undefined) {
  const [details, setDetails] = useState<SessionView>();
  useEffect(() => {
    if (!sessionId) return;
    // A reply to an earlier status may arrive after the latest one: only the latest is kept.
    let current = true;
    void getSession(sessionId).then(({ data }) => current && setDetails(data));
    return () => {
      current = false;
    };
  }, [sessionId, status]);
  return details;
}
