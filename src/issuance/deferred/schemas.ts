// The deferred credential request (OpenID4VCI 1.0 section 9.1) and the management answers about a
// deferred transaction.
import { z } from 'zod';
import { invalidCredentialRequest } from '../errors.js';

const DeferredRequest = z.object({ transaction_id: z.string().min(1) });

export function parseDeferredRequest(body: Record<string, unknown>): { transactionId: string } {
  const parsed = DeferredRequest.safeParse(body);
  if (!parsed.success) throw invalidCredentialRequest('transaction_id is required');
  return { transactionId: parsed.data.transaction_id };
}

export const DeferredResult = z
  .object({
    transactionId: z.string(),
    status: z.enum(['pending', 'ready', 'retrieved', 'expired', 'failed']),
    message: z.string().optional(),
  })
  .meta({ id: 'DeferredTransactionResult' });
export const TransactionParams = z.object({ transactionId: z.string() });
export const CompleteBody = z.strictObject({ claims: z.record(z.string(), z.unknown()) });
