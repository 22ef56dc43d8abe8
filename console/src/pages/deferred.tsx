// The deferred credentials of an issuance session: each transaction the credential endpoint opened
// (the session log names it with its status: the API has no list of transactions) and, while it
// waits for its claims, the completion with claims as a form (JSON one click away) or the failure, each confirmed
// first and sent through the typed client.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/index.js';
import { api, asBody, type Problem, result } from '../api.js';
import { ProblemView, useConfirm } from '../components.js';
import { FLOW_FORMS } from '../forms.js';
import { RequestForm } from './request-form.js';

type LogEntry = components['schemas']['SessionLogEntry'];
type TransactionState = 'pending' | 'ready' | 'failed' | 'retrieved';
interface Transaction {
  id: string;
  configurationId?: string;
  state: TransactionState;
}

const STATES: readonly string[] = ['pending', 'ready', 'failed', 'retrieved'] satisfies TransactionState[];

/**
 * The deferred transactions the log names, each in the state of its latest move (the log is oldest
 * first): the service writes each move of a transaction with its transactionId and transactionStatus.
 */
export function deferredTransactions(log: LogEntry[]): Transaction[] {
  const found = new Map<string, Transaction>();
  for (const entry of log) {
    const { transactionId: id, transactionStatus: state, credentialConfigurationId: configurationId } = entry.details ?? {};
    if (typeof id !== 'string' || typeof state !== 'string' || !STATES.includes(state)) continue;
    found.set(id, {
      id,
      state: state as TransactionState,
      configurationId: typeof configurationId === 'string' ? configurationId : found.get(id)?.configurationId,
    });
  }
  return [...found.values()];
}

/** The claims a completion starts with, valid for a configuration with these fields (a browser test submits it unedited). */
const TEMPLATE = JSON.stringify({ claims: { given_name: 'Erika', family_name: 'Mustermann' } }, null, 2);

export function DeferredTransactions({ sessionId, onChange }: { sessionId: string; onChange: () => void }) {
  const [transactions, setTransactions] = useState<Transaction[]>();
  const [problem, setProblem] = useState<Problem>();
  const [notice, setNotice] = useState<string>();
  // One completion form at a time (its fields have ids of their own): the first pending, or the one chosen.
  const [chosen, setChosen] = useState<string>();
  const load = useCallback(async () => {
    const reply = await result(api.GET('/api/session/{id}/logs', { params: { path: { id: sessionId } } }));
    if (reply.problem) setProblem(reply.problem);
    setTransactions(deferredTransactions(reply.data ?? []));
  }, [sessionId]);
  useEffect(() => {
    void load();
  }, [load]);

  if (!transactions || transactions.length === 0) return null;
  const moved = async (message: string) => {
    setNotice(message);
    await load();
    onChange();
  };
  const open = transactions.find((t) => t.state === 'pending' && t.id === chosen) ?? transactions.find((t) => t.state === 'pending');
  return (
    <section class="card" aria-label="deferred credentials">
      <h3>Deferred credentials</h3>
      <ProblemView problem={problem} />
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {transactions.map((t) => (
        <div key={t.id} class="deferred">
          <p>
            Transaction <code>{t.id}</code>
            {t.configurationId && <> of {t.configurationId}</>}: <strong data-testid="transaction-state">{t.state}</strong>
          </p>
          {t === open && <Completion key={t.id} transaction={t} onMoved={moved} />}
          {t.state === 'pending' && t !== open && (
            <button type="button" class="secondary" onClick={() => setChosen(t.id)}>
              Complete or fail {t.id}
            </button>
          )}
        </div>
      ))}
    </section>
  );
}

function Completion({ transaction, onMoved }: { transaction: Transaction; onMoved: (message: string) => Promise<void> }) {
  const [body, setBody] = useState(TEMPLATE);
  const [problem, setProblem] = useState<Problem>();
  const { confirm, dialog } = useConfirm();
  const path = { params: { path: { transactionId: transaction.id } } };
  const of = transaction.configurationId ? ` of ${transaction.configurationId}` : '';

  const complete = async (value: unknown) => {
    if (!(await confirm(`Complete the deferred credential${of} with these claims? The wallet can then fetch it.`, 'Complete'))) return;
    const reply = await result(
      api.POST('/api/issuer/deferred/{transactionId}/complete', {
        ...path,
        body: asBody('/api/issuer/deferred/{transactionId}/complete', 'post', value),
      }),
    );
    setProblem(reply.problem);
    if (reply.data) await onMoved(`Completed: the credential${of} is ${reply.data.status}`);
  };
  const fail = async () => {
    if (!(await confirm(`Fail the deferred credential${of}? The wallet gets invalid_transaction_id and the session fails.`, 'Fail')))
      return;
    const reply = await result(api.POST('/api/issuer/deferred/{transactionId}/fail', path));
    setProblem(reply.problem);
    if (reply.data) await onMoved(`Failed: the credential${of} is ${reply.data.status}`);
  };
  return (
    <>
      <RequestForm
        fields={FLOW_FORMS.deferredCompletion.fields}
        body={body}
        onBody={setBody}
        problem={problem}
        submitLabel="Complete"
        onSubmit={complete}
        extra={
          <button type="button" class="danger" onClick={fail}>
            Fail
          </button>
        }
      />
      {dialog}
    </>
  );
}
