import { findToken, tokenSummaryOf } from '../chains/tokens.js';
import { balanceUpdateReason, type LedgerEvent } from '../domain/ledger/ledger.js';
import { streamCategories } from '../domain/streams.js';
import { enqueueWebhook, webhookDedupeKey } from '../webhooks/outbox.js';
import type { Projection } from './projection.js';

export const BALANCES_PROJECTION = 'balances';

/**
 * Balances per organization and token for GET /portfolio; sends balance.updated (CONTRACT §7) on
 * every ledger event. Each event states the balances it leaves (decided, and checked non-negative,
 * by the ledger's decider), so a row is that event's balances: no arithmetic here to disagree.
 */
export const balancesProjection: Projection = {
  name: BALANCES_PROJECTION,
  filter: { categories: [streamCategories.ledger] },
  tables: ['balances'],
  handle: async (trx, recorded) => {
    const event = { type: recorded.type, data: recorded.data } as LedgerEvent;
    const { orgId, tokenId, occurredAt } = event.data;
    const token = findToken(tokenId);
    if (!token) throw new Error(`ledger of token ${tokenId}, which the catalog does not have`);
    const at = new Date(occurredAt);
    const values = { ...event.data.balancesAfter, updated_at: at };
    await trx
      .insertInto('balances')
      .values({ org_id: orgId, token_id: tokenId, chain_id: token.chainId, ...values })
      .onConflict((conflict) => conflict.columns(['org_id', 'token_id']).doUpdateSet(values))
      .execute();
    await enqueueWebhook(trx, {
      orgId,
      type: 'balance.updated',
      payload: { chainId: token.chainId, tokenId, available: values.available, pending: values.pending, reason: balanceUpdateReason(event), Token: tokenSummaryOf(tokenId) },
      timestamp: at,
      dedupeKey: webhookDedupeKey(orgId, 'balance.updated', recorded.id),
    });
  },
};
