import type { ChainDefinition } from '../../catalog/chain.js';
import type { BlockHeader } from '../gateway.js';
import { parseXrpRecipient } from '../xrp/address.js';
import { admitSigned } from './broadcast.js';
import { headBlock, nextSyntheticNumbers, withLockedChain, type ChainState } from './chain-state.js';
import { signFaucetTransfer } from './faucet.js';
import { faucetKey } from './faucet-keys.js';
import { canonicalAddress, canonicalAsset, syntheticTransactionHash } from './hashes.js';
import { enqueueNew, type MempoolEntry } from './mempool.js';
import { Coalescer } from '../../db/coalescer.js';
import { mineBlock as mineWith, reorganize, type MiningPolicy } from './mining.js';
import type { DevnetDb } from './tables.js';

export type DevnetFault = 'broadcast_error' | 'revert';

export interface DevnetDeposit {
  toAddress: string;
  /** 'native' or the token contract */
  asset: string;
  amount: bigint;
  destinationTag?: number | null;
  /** absent: the faucet signs it; present: an external transfer from that address (the devnet holds no key for it) */
  fromAddress?: string | null;
}

/** What only a devnet can do (CONTRACT §8): its endpoints and the block producer drive a chain through this. */
export interface DevnetControls {
  readonly chain: ChainDefinition;
  /** the address the devnet's own deposits come from */
  readonly faucetAddress: string;
  /** an incoming transfer, mined right away in a new block (with the rest of the mempool) */
  deposit(deposit: DevnetDeposit): Promise<{ txHash: string; blockNumber: number }>;
  /**
   * The same inside a transaction that holds this chain's lock (withLockedChains): every deposit
   * queued, then one block mined for all of them. It throws DepositRefusedError naming the deposit's
   * place in `deposits` when one cannot be made; the caller's transaction then rolls back.
   */
  depositAllLocked(trx: DevnetDb, state: ChainState, deposits: readonly { index: number; deposit: DevnetDeposit }[]): Promise<{ index: number; txHash: string; blockNumber: number }[]>;
  /** mines `count` blocks now; returns the new head */
  mine(count?: number): Promise<BlockHeader>;
  /** mines a block when the head is at least `blockTimeMs` old (by the devnet's clock); null when it is not due */
  mineIfDue(blockTimeMs: number): Promise<BlockHeader | null>;
  /** the same inside a transaction that holds this chain's lock (withLockedChains), as the block producer mines every due chain in one */
  mineIfDueLocked(trx: DevnetDb, state: ChainState, blockTimeMs: number): Promise<BlockHeader | null>;
  /** replaces the last `depth` blocks with empty ones; returns the new head */
  reorg(depth: number): Promise<BlockHeader>;
  /** the next `count` withdrawal transactions broadcast on this chain fail that way (count 0 clears it); sweeps and gas top-ups never meet a fault */
  setFault(fault: DevnetFault, count: number): Promise<void>;
  /**
   * Test-only (no endpoint): Bitcoin blocks leave out transactions paying less than `satPerVbyte`
   * (null: every one is mined), so a withdrawal can stay unconfirmed while blocks go by, as when
   * the fee market rises. Held in this process's memory.
   */
  setMinimumMinedFeeRate(satPerVbyte: bigint | null): void;
  /** XRP: the account requires a destination tag from now on (RequireDest) */
  requireDestinationTag(address: string): Promise<void>;
}

export interface DevnetDependencies {
  db: DevnetDb;
  clock: () => Date;
}

/** A head mined less than `blockTimeMs` before `now` (by the devnet's clock): no block is due on its chain. */
export const headIsYoung = (headAt: Date, now: Date, blockTimeMs: number): boolean => now.getTime() - headAt.getTime() < blockTimeMs;

/** The most blocks one request mines. */
export const MAX_BLOCKS_PER_REQUEST = 1000;

/**
 * Deposits from addresses the devnet holds no key for: each recorded as an external transaction
 * of its sender (no signature, no fee, nothing debited from it), the way a watcher sees a transfer
 * made elsewhere. One counter update and one insert per table for all of them.
 */
const enqueueExternal = async (trx: DevnetDb, state: ChainState, deposits: readonly (CheckedDeposit & { fromAddress: string })[]): Promise<string[]> => {
  const { chain } = state;
  const numbers = await nextSyntheticNumbers(trx, chain.id, deposits.length);
  const entries = deposits.map((deposit, position): MempoolEntry => {
    const from = canonicalAddress(chain.family, deposit.fromAddress);
    const transfer = { index: 0, from, to: deposit.to, asset: deposit.asset, amount: deposit.amount, destinationTag: deposit.destinationTag };
    const hash = syntheticTransactionHash(chain, 'external', numbers[position]!);
    return { hash, kind: 'external', raw: null, sender: from, nonce: null, fee: 0n, spends: [], error: null, transfers: [transfer] };
  });
  await enqueueNew(trx, chain.id, entries);
  return entries.map((entry) => entry.hash);
};

type CheckedDeposit = DevnetDeposit & { to: string; destinationTag: number | null };

/** A deposit of a batch that cannot be made (an amount the chain cannot carry…): `index` names it. */
export class DepositRefusedError extends Error {
  constructor(
    readonly index: number,
    readonly reason: Error,
  ) {
    super(reason.message);
    this.name = 'DepositRefusedError';
  }
}

export const createDevnetControls = (chain: ChainDefinition, { db, clock }: DevnetDependencies): DevnetControls => {
  const policy: MiningPolicy = { minimumFeeRate: null };
  const mineBlock = (trx: DevnetDb, state: ChainState, now: Date) => mineWith(trx, state, now, policy);

  /** a transfer signed by the faucet, admitted like any broadcast (decoded, verified, checked), without faults */
  const enqueueFaucetDeposit = async (trx: DevnetDb, state: ChainState, request: CheckedDeposit): Promise<string> => {
    const raw = await signFaucetTransfer(trx, state, { to: request.to, asset: request.asset, amount: request.amount, destinationTag: request.destinationTag }, clock());
    const admission = await admitSigned(trx, state, raw, { withFaults: false });
    if ('refused' in admission) throw new Error(`the devnet refused its own faucet transaction: ${admission.refused}`);
    return admission.txHash;
  };

  /**
   * The transfers queued in the mempool in the order given: a run of external senders' in one go,
   * the faucet's one by one. A transfer the family's builder refuses (a RangeError: an amount the
   * chain cannot carry) is passed to `refused` with its place, which says what to throw.
   */
  const enqueueDeposits = async (trx: DevnetDb, state: ChainState, requests: readonly CheckedDeposit[], refused: (position: number, reason: RangeError) => Error): Promise<string[]> => {
    const hashes: string[] = [];
    let external: (CheckedDeposit & { fromAddress: string })[] = [];
    const flushExternal = async () => {
      hashes.push(...(await enqueueExternal(trx, state, external)));
      external = [];
    };
    for (const [position, request] of requests.entries()) {
      if (request.fromAddress) {
        external.push({ ...request, fromAddress: request.fromAddress });
        continue;
      }
      await flushExternal();
      try {
        hashes.push(await enqueueFaucetDeposit(trx, state, request));
      } catch (error) {
        throw error instanceof RangeError ? refused(position, error) : error;
      }
    }
    await flushExternal();
    return hashes;
  };

  // Deposits that arrive while a block is being mined go into the next one together: one chain
  // lock and one block for all of them (a block per request capped injection near 80/s).
  const checkedDeposit = (deposit: DevnetDeposit): CheckedDeposit => {
    if (deposit.amount <= 0n) throw new RangeError('a deposit moves a positive amount');
    // an X-address carries its own tag; an explicit destinationTag wins
    const destinationTag = deposit.destinationTag ?? (chain.family === 'xrp' ? parseXrpRecipient(deposit.toAddress, chain.network).tag : null);
    return { ...deposit, to: canonicalAddress(chain.family, deposit.toAddress), asset: canonicalAsset(chain.family, deposit.asset), destinationTag };
  };
  const deposits = new Coalescer<CheckedDeposit, { txHash: string; blockNumber: number }>((batch) =>
    withLockedChain(db, chain, async (trx, state) => {
      const hashes = await enqueueDeposits(trx, state, batch, (_position, reason) => reason);
      const block = await mineBlock(trx, state, clock());
      return hashes.map((txHash) => ({ txHash, blockNumber: block.number }));
    }),
  );
  const mineIfDueLocked = async (trx: DevnetDb, state: ChainState, blockTimeMs: number) => {
    const now = clock();
    return headIsYoung(new Date(state.head.timestamp), now, blockTimeMs) ? null : mineBlock(trx, state, now);
  };
  return {
    chain,
    faucetAddress: faucetKey(chain).address,

    deposit: (deposit) => {
      try {
        return deposits.add(checkedDeposit(deposit));
      } catch (error) {
        return Promise.reject(error);
      }
    },

    depositAllLocked: async (trx, state, batch) => {
      const checked = batch.map(({ index, deposit }) => {
        try {
          return checkedDeposit(deposit);
        } catch (error) {
          if (error instanceof RangeError) throw new DepositRefusedError(index, error);
          throw error;
        }
      });
      const hashes = await enqueueDeposits(trx, state, checked, (position, reason) => new DepositRefusedError(batch[position]!.index, reason));
      const block = await mineBlock(trx, state, clock());
      return hashes.map((txHash, position) => ({ index: batch[position]!.index, txHash, blockNumber: block.number }));
    },

    mine: (count = 1) => {
      if (!Number.isInteger(count) || count < 1 || count > MAX_BLOCKS_PER_REQUEST) throw new RangeError(`mine 1..${MAX_BLOCKS_PER_REQUEST} blocks at a time`);
      return withLockedChain(db, chain, async (trx, state) => {
        let head = state.head;
        for (let mined = 0; mined < count; mined++) head = await mineBlock(trx, state, clock());
        return head;
      });
    },

    mineIfDue: async (blockTimeMs) => {
      // most looks find the head young: a read without the lock says so, with no transaction and no wait
      const head = await headBlock(db, chain);
      if (head && headIsYoung(head.timestamp, clock(), blockTimeMs)) return null;
      return withLockedChain(db, chain, (trx, state) => mineIfDueLocked(trx, state, blockTimeMs));
    },

    mineIfDueLocked,

    reorg: (depth) => withLockedChain(db, chain, (trx, state) => reorganize(trx, state, depth)),

    setFault: (fault, count) =>
      withLockedChain(db, chain, async (trx) => {
        await trx
          .updateTable('devnet_chains')
          .set({ fault: count > 0 ? fault : null, fault_remaining: count })
          .where('chain_id', '=', chain.id)
          .execute();
      }),

    requireDestinationTag: (address) => {
      if (chain.family !== 'xrp') throw new RangeError(`${chain.id} has no destination tags`);
      return withLockedChain(db, chain, async (trx) => {
        await trx
          .insertInto('devnet_accounts')
          .values({ chain_id: chain.id, address: canonicalAddress('xrp', address), requires_destination_tag: true })
          .onConflict((conflict) => conflict.columns(['chain_id', 'address']).doUpdateSet({ requires_destination_tag: true }))
          .execute();
      });
    },

    setMinimumMinedFeeRate: (satPerVbyte) => {
      if (satPerVbyte !== null && satPerVbyte < 0n) throw new RangeError('a fee rate is not negative');
      policy.minimumFeeRate = satPerVbyte;
    },
  };
};
