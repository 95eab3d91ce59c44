import { sql, type Transaction } from 'kysely';
import { sessionWrite } from '../db/session-transaction.js';
import { findToken, tokenSummaryOf } from '../catalog/tokens.js';
import type { Database } from '../db/database.js';
import { balanceUpdateReason, type LedgerEvent } from '../domain/ledger/ledger.js';
import { streamCategories } from '../domain/streams.js';
import type { EventBody } from '../eventstore/port.js';
import { webhookDedupeKey, type WebhookToEnqueue } from '../webhooks/outbox.js';
import { insertRows } from '../db/unnest-rows.js';
import { liveOutbox, type OutboxEffects, type Projection } from './projection.js';

export const BALANCES_PROJECTION = 'balances';

const webhookOf = (recorded: EventBody, event: LedgerEvent, chainId: string): WebhookToEnqueue => {
  const { orgId, tokenId, occurredAt, balancesAfter } = event.data;
  return {
    orgId,
    type: 'balance.updated',
    payload: { chainId, tokenId, available: balancesAfter.available, pending: balancesAfter.pending, reason: balanceUpdateReason(event), Token: tokenSummaryOf(tokenId) },
    timestamp: new Date(occurredAt),
    dedupeKey: webhookDedupeKey(orgId, 'balance.updated', recorded.id),
  };
};

/** A balance row's columns and their types (rows upserted with one parameter per column). */
const BALANCE_COLUMNS = [
  ['org_id', 'text'],
  ['token_id', 'text'],
  ['chain_id', 'text'],
  ['available', 'numeric'],
  ['pending', 'numeric'],
  ['held', 'numeric'],
  ['updated_at', 'timestamptz'],
] as const;

/**
 * One upsert and one outbox insert per batch: a row is the balances its ledger's last event in
 * the batch leaves (what successive upserts would have left), while every event still sends its
 * balance.updated.
 */
const handleBatch = async (trx: Transaction<Database>, batch: EventBody[], outbox: OutboxEffects = liveOutbox): Promise<void> => {
  const lastOfLedger = new Map<string, { orgId: string; tokenId: string; chainId: string; event: LedgerEvent }>();
  const webhooks: WebhookToEnqueue[] = [];
  for (const recorded of batch) {
    const event = { type: recorded.type, data: recorded.data } as LedgerEvent;
    const { orgId, tokenId } = event.data;
    const token = findToken(tokenId);
    if (!token) throw new Error(`ledger of token ${tokenId}, which the catalog does not have`);
    // the map keeps a key's first insertion order; the values are the last event's
    lastOfLedger.set(JSON.stringify([orgId, tokenId]), { orgId, tokenId, chainId: token.chainId, event });
    if (outbox.sends) webhooks.push(webhookOf(recorded, event, token.chainId));
  }
  const rows = [...lastOfLedger.values()].map(({ orgId, tokenId, chainId, event }) => ({
    org_id: orgId,
    token_id: tokenId,
    chain_id: chainId,
    ...event.data.balancesAfter,
    updated_at: new Date(event.data.occurredAt),
  }));
  if (rows.length > 0) {
    await sessionWrite(
      trx,
      sql`
      ${insertRows('balances', rows, BALANCE_COLUMNS)}
      on conflict (org_id, token_id) do update
      set available = excluded.available, pending = excluded.pending, held = excluded.held, updated_at = excluded.updated_at
    `,
    );
  }
  await outbox.enqueue(trx, webhooks);
};

/**
 * Balances per organization and token for GET /portfolio; sends balance.updated (CONTRACT §7) on
 * every ledger event. Each event states the balances it leaves (decided, and checked non-negative,
 * by the ledger's decider), so a row is that event's balances: no arithmetic here to disagree.
 */
export const balancesProjection: Projection = {
  name: BALANCES_PROJECTION,
  filter: { categories: [streamCategories.ledger] },
  tables: ['balances'],
  handle: (trx, recorded, outbox) => handleBatch(trx, [recorded], outbox),
  handleBatch,
};
