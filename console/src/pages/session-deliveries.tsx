// A session's webhook deliveries (GET /api/webhook-deliveries?sessionId=): each event, where it went,
// how it stands, and a Retry on those the API sends again (failed, and delivered: the same webhook-id,
// which receivers that deduplicate ignore). The API shows a caller the deliveries of the kinds its
// roles manage, so the section is shown to those roles only.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/index.js';
import { api, holds, type Problem, type Role, result, session } from '../api.js';
import { formatDate, ProblemView, Table } from '../components.js';

type Delivery = components['schemas']['WebhookDelivery'];

/** The roles that see a session's deliveries (as GET /api/webhook-deliveries requires). */
export const DELIVERY_READERS: Role[] = ['issuance:manage', 'presentation:manage'];
const RETRIABLE = new Set<Delivery['state']>(['failed', 'delivered']);

export function SessionDeliveries({ sessionId }: { sessionId: string }) {
  const [deliveries, setDeliveries] = useState<Delivery[]>();
  const [problem, setProblem] = useState<Problem>();
  const [notice, setNotice] = useState<string>();

  const load = useCallback(async () => {
    const reply = await result(api.GET('/api/webhook-deliveries', { params: { query: { sessionId, pageSize: 100 } } }));
    setDeliveries(reply.data?.items);
    if (reply.problem) setProblem(reply.problem);
  }, [sessionId]);
  useEffect(() => {
    if (holds(session(), DELIVERY_READERS)) void load();
  }, [load]);

  const retry = async (delivery: Delivery) => {
    const reply = await result(api.POST('/api/webhook-deliveries/{id}/retry', { params: { path: { id: delivery.id } } }));
    setProblem(reply.problem);
    setNotice(reply.problem ? undefined : `Delivery of ${delivery.type} to ${delivery.endpoint} queued again`);
    await load();
  };

  if (!holds(session(), DELIVERY_READERS)) return null;
  return (
    <section class="card" aria-label="webhook deliveries">
      <h3>Webhook deliveries</h3>
      <ProblemView problem={problem} />
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <Table
        label="delivery attempts"
        rows={deliveries ?? []}
        empty="No webhook events for this session."
        columns={[
          { title: 'Event', cell: (d) => d.type },
          { title: 'Endpoint', cell: (d) => <code>{d.endpoint}</code> },
          { title: 'State', cell: (d) => <span class={`delivery-${d.state}`}>{d.state}</span> },
          { title: 'Attempts', cell: (d) => d.attempts },
          { title: 'Last error', cell: (d) => [d.lastStatus, d.lastError].filter((part) => part !== null).join(': ') },
          { title: 'Next attempt', cell: (d) => formatDate(d.nextAttemptAt) },
          {
            title: 'Actions',
            actions: true,
            cell: (d) =>
              RETRIABLE.has(d.state) && (
                <button type="button" class="secondary" aria-label={`Retry ${d.type} to ${d.endpoint}`} onClick={() => retry(d)}>
                  Retry
                </button>
              ),
          },
        ]}
      />
    </section>
  );
}
