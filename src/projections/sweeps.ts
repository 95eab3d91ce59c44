import type { Transaction } from 'kysely';
import type { Database } from '../db/database.js';
import type { SweepsTable } from '../db/tables/sweeps.js';
import type { DepositRef } from '../domain/deposit/deposit.js';
import type { SweepEvent } from '../domain/sweep/sweep.js';
import { streamCategories } from '../domain/streams.js';
import type { Projection } from './projection.js';

export const SWEEPS_PROJECTION = 'sweeps';

type SweepChange = Partial<Omit<SweepsTable, 'chain_id' | 'tx_hash' | 'output_index' | 'created_at' | 'updated_at'>>;

const update = (trx: Transaction<Database>, { chainId, txHash, index }: DepositRef, change: SweepChange, at: Date) =>
  trx
    .updateTable('sweeps')
    .set({ ...change, updated_at: at })
    .where('chain_id', '=', chainId)
    .where('tx_hash', '=', txHash)
    .where('output_index', '=', index)
    .execute();

/**
 * The `sweeps` read model: one row per sweep with its status and, while it waits or after it
 * failed, why. Gas a token sweep spends comes from the gas wallet, outside the ledger: the row
 * keeps it (`gas_spent` = top-up + the top-up's fee) so an operator can account for it.
 */
export const sweepsProjection: Projection = {
  name: SWEEPS_PROJECTION,
  filter: { categories: [streamCategories.sweep] },
  tables: ['sweeps'],
  handle: async (trx, recorded) => {
    const event = { type: recorded.type, data: recorded.data } as SweepEvent;
    const ref: DepositRef = { chainId: event.data.chainId, txHash: event.data.txHash, index: event.data.index };
    switch (event.type) {
      case 'SweepScheduled': {
        const plan = event.data;
        const at = new Date(plan.scheduledAt);
        await trx
          .insertInto('sweeps')
          .values({
            chain_id: plan.chainId,
            tx_hash: plan.txHash,
            output_index: plan.index,
            org_id: plan.orgId,
            token_id: plan.tokenId,
            kind: plan.kind,
            amount: plan.amount,
            deposit_address: plan.depositAddress,
            settlement_address: plan.settlementAddress,
            gas_wallet_address: plan.gasWalletAddress,
            status: 'Scheduled',
            reason: null,
            top_up_tx_hash: null,
            top_up_amount: null,
            gas_spent: null,
            sweep_tx_hash: null,
            swept_amount: null,
            fee: null,
            fee_charged: null,
            created_at: at,
            updated_at: at,
          })
          .execute();
        return;
      }
      case 'SweepSkipped':
        await update(trx, ref, { status: 'Skipped', reason: event.data.reason }, new Date(event.data.skippedAt));
        return;
      case 'SweepWaitingForGas': {
        const reason = `waiting for gas: the gas wallet holds ${event.data.available}, the top-up and its fee need ${event.data.required}`;
        await update(trx, ref, { status: 'WaitingForGas', reason }, new Date(event.data.since));
        return;
      }
      case 'GasTopUpSigned':
        await update(trx, ref, { status: 'TopUpSigned', reason: null, top_up_tx_hash: event.data.step.txHash, top_up_amount: event.data.step.amount }, new Date(event.data.signedAt));
        return;
      case 'GasTopUpBroadcast':
        await update(trx, ref, { status: 'TopUpBroadcast' }, new Date(event.data.broadcastAt));
        return;
      case 'GasTopUpConfirmed':
        await trx
          .updateTable('sweeps')
          .set((eb) => ({ status: 'TopUpConfirmed', gas_spent: eb('top_up_amount', '+', event.data.fee), updated_at: new Date(event.data.confirmedAt) }))
          .where('chain_id', '=', ref.chainId)
          .where('tx_hash', '=', ref.txHash)
          .where('output_index', '=', ref.index)
          .execute();
        return;
      case 'SweepSigned':
        await update(trx, ref, { status: 'SweepSigned', reason: null, sweep_tx_hash: event.data.step.txHash, swept_amount: event.data.step.amount }, new Date(event.data.signedAt));
        return;
      case 'SweepBroadcast':
        await update(trx, ref, { status: 'SweepBroadcast' }, new Date(event.data.broadcastAt));
        return;
      case 'SweepConfirmed':
        await update(trx, ref, { status: 'Confirmed', fee: event.data.fee, fee_charged: event.data.feeCharged }, new Date(event.data.confirmedAt));
        return;
      case 'SweepFailed':
        await update(trx, ref, { status: 'Failed', reason: `${event.data.step}: ${event.data.error}` }, new Date(event.data.failedAt));
        return;
      default: {
        const _never: never = event;
      }
    }
  },
};
