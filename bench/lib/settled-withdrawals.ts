import { mapConcurrently, pollUntil, type ApiClient } from './api.js';
import type { WithdrawalTemplate } from './load.js';

export interface SettledWithdrawals {
  completed: number;
  /** the txnError of each that failed or was cancelled */
  failed: string[];
  /** the distinct transactions that paid the completed ones */
  transactions: number;
  /** from the first request to the first withdrawal settled (Completed or Failed) */
  firstMs: number;
  /** from the first request to the last withdrawal settled */
  ms: number;
  /** from the first request to each withdrawal settled, as the polls saw them (every 250 ms), in order */
  settledAtMs: number[];
  /** polls the service answered with a 5xx or a reset connection (asked again) */
  serverErrors: number;
}

interface Listed {
  id: string;
  status: string;
  txnHash: string | null;
  txnError: string | null;
}

/**
 * The organization's withdrawals by id (GET /withdrawals, every page: one request for many, however
 * many are followed); null when the service answered 5xx (counted by the caller, asked again).
 */
const withdrawalsById = async (api: ApiClient): Promise<Map<string, Listed> | null> => {
  const found = new Map<string, Listed>();
  let cursor: string | null = null;
  do {
    const query: URLSearchParams = new URLSearchParams({ limit: '1000', ...(cursor ? { cursor } : {}) });
    const answer: { status: number; body: { withdrawals: Listed[]; nextCursor: string | null } } = await api.call<{ withdrawals: Listed[]; nextCursor: string | null }>('GET', `/withdrawals?${query}`);
    if (answer.status >= 500) return null;
    if (answer.status !== 200) throw new Error(`GET /withdrawals answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    for (const withdrawal of answer.body.withdrawals) found.set(withdrawal.id, withdrawal);
    cursor = answer.body.nextCursor;
  } while (cursor);
  return found;
};

/**
 * `count` withdrawals requested at once (16 requests at a time, each with its own reference) and
 * followed until every one is Completed, Failed or Cancelled: the whole of a withdrawal's life, the
 * processors' and the chain's part included.
 */
export const settleWithdrawals = async (api: ApiClient, template: WithdrawalTemplate, count: number, options: { referencePrefix: string; timeoutMs: number; signal: AbortSignal }): Promise<SettledWithdrawals> => {
  const started = performance.now();
  const ids = await mapConcurrently(Array.from({ length: count }, (_, n) => n), 16, async (n) => {
    const { withdrawal } = await api.expect<{ withdrawal: { id: string } }>(201, 'POST', '/withdrawals', { ...template, reference: `${options.referencePrefix}-${n}` });
    return withdrawal.id;
  });
  const open = new Set(ids);
  const settledAt: number[] = [];
  const failed: string[] = [];
  const transactions = new Set<string>();
  let serverErrors = 0;
  await pollUntil(
    `${count} withdrawals to complete`,
    async () => {
      const now = performance.now() - started;
      // a kept-alive connection the service closed meanwhile, or a 5xx, is asked again at the next poll (and counted)
      const listed = await withdrawalsById(api).catch((error: unknown) => {
        if (error instanceof TypeError && error.message === 'fetch failed') return null;
        throw error;
      });
      if (!listed) {
        serverErrors++;
        return false;
      }
      for (const id of [...open]) {
        const withdrawal = listed.get(id);
        if (!withdrawal || !['Completed', 'Failed', 'Cancelled'].includes(withdrawal.status)) continue;
        open.delete(id);
        settledAt.push(now);
        if (withdrawal.status !== 'Completed') failed.push(`${withdrawal.status}: ${withdrawal.txnError ?? ''}`);
        else if (withdrawal.txnHash) transactions.add(withdrawal.txnHash);
      }
      return open.size === 0;
    },
    { timeoutMs: options.timeoutMs, intervalMs: 250, signal: options.signal },
  );
  return { completed: count - failed.length, failed, transactions: transactions.size, firstMs: Math.min(...settledAt), ms: Math.max(...settledAt), settledAtMs: settledAt, serverErrors };
};
