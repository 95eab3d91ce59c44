import type { DepositOwner, ObservedTransfer } from '../../src/application/deposits.js';
import { LedgerBatcher } from '../../src/application/ledger-batches.js';
import { balancesProjection } from '../../src/projections/balances.js';
import { depositsProjection } from '../../src/projections/deposits.js';
import type { TestService } from './api-harness.js';

/** A transfer as a watcher reports it; the hash is unique per `n` unless given. */
export const observed = (n: number, overrides: Partial<ObservedTransfer> = {}): ObservedTransfer => ({
  chainId: 'eip155:1',
  txHash: `0x${n.toString(16).padStart(64, '0')}`,
  index: 0,
  blockNumber: 1000 + n,
  blockHash: `0xb${n.toString(16).padStart(63, '0')}`,
  from: '0x00000000000000000000000000000000000000f1',
  to: '0x00000000000000000000000000000000000000a1',
  asset: 'native',
  amount: 1_500_000_000_000_000_000n,
  destinationTag: null,
  ...overrides,
});

/** a ledger batcher of its own that counts the decisions it is given */
export const countingBatcher = () => {
  const batcher = new LedgerBatcher();
  const decide = batcher.decide.bind(batcher);
  let count = 0;
  batcher.decide = (...args) => {
    count++;
    return decide(...args);
  };
  return { batcher, decisions: () => count };
};

export const ownerOf = (orgId: string, externalUserId: string, accountChainId = 'eip155:1'): DepositOwner => ({ orgId, externalUserId, accountChainId });

/**
 * Waits until the deposits and balances read models hold every event of theirs appended so far. A
 * filtered projection's checkpoint stops at its own last event, so "caught up" means: no event of
 * its filter after its checkpoint.
 */
export const settleDeposits = async (service: TestService, timeoutMs = 60_000) => {
  const { store, db } = service.infrastructure;
  const deadline = Date.now() + timeoutMs;
  for (const projection of [depositsProjection, balancesProjection]) {
    for (;;) {
      const checkpoint = BigInt((await db.selectFrom('projection_checkpoints').select('position').where('name', '=', projection.name).executeTakeFirst())?.position ?? '0');
      if ((await store.readAll({ afterPosition: checkpoint, filter: projection.filter, maxCount: 1 })).length === 0) break;
      if (Date.now() > deadline) throw new Error(`projection ${projection.name} did not catch up`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
};

/** Webhook bodies of one organization and type, in the order the projections wrote them. */
export const webhooksOf = async (service: TestService, orgId: string, type: string) => {
  const rows = await service.infrastructure.db
    .selectFrom('webhook_deliveries')
    .select(['body', 'dedupe_key'])
    .where('org_id', '=', orgId)
    .where('event_type', '=', type)
    .orderBy('seq')
    .execute();
  return rows.map((row) => JSON.parse(row.body) as { type: string; timestamp: string; payload: Record<string, unknown> });
};
