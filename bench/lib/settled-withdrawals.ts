import { mapConcurrently, pollUntil, type ApiClient } from './api.js';
import type { WithdrawalTemplate } from './load.js';

export interface SettledWithdrawals {
  completed: number;
  /** the distinct transactions that paid the completed ones */
  transactions: number;
  failed: string[];
  /** from the first request to the last withdrawal settled (Completed or Failed) */
  ms: number;
}

/** Creates `count` withdrawals from the template (8 requests at a time), each with its own reference; answers their ids. */
export const requestWithdrawals = async (api: ApiClient, template: WithdrawalTemplate, count: number, referencePrefix: string): Promise<string[]> =>
  mapConcurrently(Array.from({ length: count }, (_, n) => n), 8, async (n) => {
    const { withdrawal } = await api.expect<{ withdrawal: { id: string } }>(201, 'POST', '/withdrawals', { ...template, reference: `${referencePrefix}-${n}` });
    return withdrawal.id;
  });

/**
 * `count` withdrawals requested and followed (GET /withdrawals/{id}) until every one is Completed
 * or Failed: the whole of a withdrawal's life, the processors' and the chain's part included.
 */
export const settleWithdrawals = async (api: ApiClient, template: WithdrawalTemplate, count: number, options: { referencePrefix: string; timeoutMs: number; signal: AbortSignal }): Promise<SettledWithdrawals> => {
  const started = performance.now();
  const open = new Set(await requestWithdrawals(api, template, count, options.referencePrefix));
  const settled: SettledWithdrawals = { completed: 0, transactions: 0, failed: [], ms: 0 };
  const transactions = new Set<string>();
  await pollUntil(
    `${count} withdrawals to complete`,
    async () => {
      for (const id of [...open]) {
        const { status, txnHash, txnError } = await api.expect<{ status: string; txnHash: string | null; txnError: string | null }>(200, 'GET', `/withdrawals/${id}`);
        if (status !== 'Completed' && status !== 'Failed') continue;
        open.delete(id);
        if (status === 'Failed') settled.failed.push(txnError ?? 'failed');
        else {
          settled.completed++;
          if (txnHash) transactions.add(txnHash);
        }
      }
      return open.size === 0;
    },
    { timeoutMs: options.timeoutMs, intervalMs: 100, signal: options.signal },
  );
  return { ...settled, transactions: transactions.size, ms: performance.now() - started };
};
