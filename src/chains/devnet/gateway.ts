import { BroadcastRejectedError, type BlockTransfer, type BroadcastRefusal, type ChainGateway } from '../gateway.js';
import type { ChainDefinition } from '../../catalog/chain.js';
import { admitSigned } from './broadcast.js';
import { classifyDevnetAnswer } from './broadcast-answers.js';
import { devnetProvablyNever } from './finality.js';
import { ensureChain, headBlock, toHeader, withLockedChain } from './chain-state.js';
import { estimateTransferFee } from './fees.js';
import { addressMatchKey, canonicalAddress, canonicalAsset, canonicalTransactionHash } from './hashes.js';
import { accountBalance, bitcoinBalance, CONFIRMED, firstNonce, requiresDestinationTag, unspentOutputsOf, usedNonces, WHOLE_MEMPOOL } from './ledger.js';
import type { DevnetDependencies } from './controls.js';

/**
 * The devnet as a ChainGateway: the same questions a real node gateway answers, over the devnet's
 * tables. Only canonical blocks are visible (a reorg deletes the replaced ones).
 */
/** The devnet answers a transaction it holds with its hash, so a refusal is never `known`. */
const refusalOf = (message: string): BroadcastRefusal => {
  const answer = classifyDevnetAnswer(message);
  return answer === 'known' ? 'transient' : answer;
};

export const createDevnetGateway = (chain: ChainDefinition, { db }: DevnetDependencies): ChainGateway => {
  let created = false;
  const ready = async () => {
    if (!created) await ensureChain(db, chain);
    created = true;
  };
  const address = (value: string) => canonicalAddress(chain.family, value);
  const headNumber = async () => {
    await ready();
    const row = await db.selectFrom('devnet_chains').select('head_number').where('chain_id', '=', chain.id).executeTakeFirstOrThrow();
    return row.head_number;
  };
  const blockRow = (number: number) => db.selectFrom('devnet_blocks').selectAll().where('chain_id', '=', chain.id).where('number', '=', number).executeTakeFirst();

  return {
    chain,

    head: async () => {
      await ready();
      const head = await headBlock(db, chain);
      if (!head) throw new Error(`the devnet chain ${chain.id} has no head block`);
      return toHeader(head);
    },

    block: async (number) => {
      await ready();
      const row = await blockRow(number);
      return row ? toHeader(row) : null;
    },

    transfersInBlock: async (number, toAddresses) => {
      await ready();
      // the block's hash read with its transfers, in one statement (one snapshot): a block without transfers costs no read of its own
      const rows = await db
        .selectFrom('devnet_transfers as t')
        .innerJoin('devnet_transactions as x', (join) => join.onRef('x.chain_id', '=', 't.chain_id').onRef('x.hash', '=', 't.tx_hash'))
        .innerJoin('devnet_blocks as b', (join) => join.onRef('b.chain_id', '=', 'x.chain_id').onRef('b.number', '=', 'x.block_number'))
        .select(['b.hash as block_hash', 't.tx_hash', 't.transfer_index', 't.from_address', 't.to_address', 't.asset', 't.amount', 't.destination_tag'])
        .where('t.chain_id', '=', chain.id)
        .where('x.block_number', '=', number)
        .where('x.status', '=', 'mined')
        .orderBy('x.seq')
        .orderBy('t.position')
        .execute();
      // most blocks pay nobody: the watched addresses (every one ever handed out on the chain) are not gone through for them
      if (rows.length === 0) return [];
      const matchKey = (value: string) => addressMatchKey(chain.family, value);
      const wanted = toAddresses ? new Set([...toAddresses].map(matchKey)) : null;
      return rows
        .filter((row) => wanted === null || wanted.has(matchKey(row.to_address)))
        .map(
          (row): BlockTransfer => ({
            txHash: row.tx_hash,
            blockNumber: number,
            blockHash: row.block_hash,
            index: row.transfer_index,
            from: row.from_address,
            to: row.to_address,
            asset: row.asset,
            amount: BigInt(row.amount),
            destinationTag: row.destination_tag === null ? null : Number(row.destination_tag),
          }),
        );
    },

    balance: async (owner, asset) => {
      await ready();
      if (chain.family === 'bitcoin') return asset === 'native' ? bitcoinBalance(db, chain.id, address(owner)) : 0n;
      return accountBalance(db, chain.id, address(owner), canonicalAsset(chain.family, asset), CONFIRMED);
    },

    nextNonce: async (owner) => {
      if (chain.family !== 'evm' && chain.family !== 'xrp') return 0;
      await ready();
      return firstNonce(chain) + (await usedNonces(db, chain.id, address(owner), WHOLE_MEMPOOL));
    },

    unspentOutputs: async (addresses) => {
      if (chain.family !== 'bitcoin') return [];
      const head = await headNumber();
      const outputs = await unspentOutputsOf(db, chain.id, addresses.map(address), WHOLE_MEMPOOL);
      return outputs.map(({ blockNumber, ...output }) => ({ ...output, confirmations: blockNumber === null ? 0 : head - blockNumber + 1 }));
    },

    requiresDestinationTag: async (owner) => chain.family === 'xrp' && requiresDestinationTag(db, chain.id, address(owner)),

    estimateFee: async ({ asset }) => estimateTransferFee(chain.family, canonicalAsset(chain.family, asset)),

    broadcast: async (raw, options) => {
      // CONTRACT §8's faults are for withdrawals: a sweep or a gas top-up never meets one
      const withFaults = options?.purpose === 'withdrawal';
      const admission = await withLockedChain(db, chain, (trx, state) => admitSigned(trx, state, raw, { withFaults }));
      if ('refused' in admission) throw new BroadcastRejectedError(admission.refused, refusalOf(admission.refused));
      return admission;
    },

    transactionStatus: async (txHash) => {
      await ready();
      // the head and the transaction in one statement (one round trip a look, and one snapshot: its depth never counts a head older than its block)
      const row = await db
        .selectFrom('devnet_chains as c')
        .leftJoin('devnet_transactions as x', (join) => join.onRef('x.chain_id', '=', 'c.chain_id').on('x.hash', '=', canonicalTransactionHash(chain.family, txHash)))
        .leftJoin('devnet_blocks as b', (join) => join.onRef('b.chain_id', '=', 'x.chain_id').onRef('b.number', '=', 'x.block_number'))
        .select(['c.head_number', 'x.status', 'x.block_number', 'x.fee', 'x.error', 'b.hash as block_hash'])
        .where('c.chain_id', '=', chain.id)
        .executeTakeFirstOrThrow();
      const head = row.head_number;
      if (row.status === null || row.status === 'dropped') return { status: 'not_found' };
      if (row.status === 'pending') return { status: 'pending' };
      if (row.status === 'failed') {
        return { status: 'failed', blockNumber: row.block_number, error: row.error ?? 'failed', fee: BigInt(row.fee!), confirmations: row.block_number === null ? 0 : head - row.block_number + 1 };
      }
      return { status: 'confirmed', blockNumber: row.block_number!, blockHash: row.block_hash!, confirmations: head - row.block_number! + 1, fee: BigInt(row.fee!) };
    },

    provablyNever: async (raw) => devnetProvablyNever(db, chain, raw, await headNumber()),
  };
};
