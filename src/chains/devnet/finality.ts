import { InvalidTransactionError, type ChainDefinition } from '../../catalog/chain.js';
import { decodeSigned } from './broadcast.js';
import type { DevnetDb } from './tables.js';
import { validityLimitOf } from './validity.js';

const minedStatuses = ['mined', 'failed'] as const;

/**
 * The devnet's answer to "can this signed transaction still be mined?", as a real chain's would be:
 * its nonce or sequence used by another transaction, an input spent by another one, or its validity
 * window passed, each at the chain's depth. null: it can still happen.
 */
export const devnetProvablyNever = async (db: DevnetDb, chain: ChainDefinition, raw: string, headNumber: number): Promise<string | null> => {
  let decoded;
  try {
    decoded = await decodeSigned(db, chain, raw);
  } catch (error) {
    if (error instanceof InvalidTransactionError) return null;
    throw error;
  }
  const depthBlock = headNumber - chain.properties.confirmations + 1;
  if (depthBlock < 0) return null;
  const ours = await db.selectFrom('devnet_transactions').select('status').where('chain_id', '=', chain.id).where('hash', '=', decoded.hash).executeTakeFirst();
  if (ours && ours.status !== 'dropped') return null;

  if (decoded.nonce !== null) {
    const rival = await db
      .selectFrom('devnet_transactions')
      .select('hash')
      .where('chain_id', '=', chain.id)
      .where('sender', '=', decoded.from)
      .where('nonce', '=', decoded.nonce)
      .where('hash', '<>', decoded.hash)
      .where('status', 'in', minedStatuses)
      .where('block_number', '<=', depthBlock)
      .executeTakeFirst();
    if (rival) return `${chain.family === 'evm' ? 'nonce' : 'sequence'} ${decoded.nonce} of ${decoded.from} was taken by ${rival.hash}, ${chain.properties.confirmations} blocks deep`;
  }
  for (const spend of decoded.spends) {
    const rival = await db
      .selectFrom('devnet_spends as s')
      .innerJoin('devnet_transactions as x', (join) => join.onRef('x.chain_id', '=', 's.chain_id').onRef('x.hash', '=', 's.tx_hash'))
      .select('x.hash')
      .where('s.chain_id', '=', chain.id)
      .where('s.output_tx_hash', '=', spend.txHash)
      .where('s.output_index', '=', spend.index)
      .where('x.hash', '<>', decoded.hash)
      .where('x.status', 'in', minedStatuses)
      .where('x.block_number', '<=', depthBlock)
      .executeTakeFirst();
    if (rival) return `its input ${spend.txHash}:${spend.index} was spent by ${rival.hash}, ${chain.properties.confirmations} blocks deep`;
  }
  const limit = validityLimitOf(chain, raw);
  if (limit?.kind === 'lastLedger' && depthBlock > limit.sequence) return `ledger ${depthBlock} is past its LastLedgerSequence ${limit.sequence}`;
  if (limit?.kind === 'expiration') {
    const block = await db.selectFrom('devnet_blocks').select('timestamp').where('chain_id', '=', chain.id).where('number', '=', depthBlock).executeTakeFirst();
    if (block && block.timestamp.getTime() > limit.atMs) return `it expired at ${new Date(limit.atMs).toISOString()}, before a block ${chain.properties.confirmations} deep`;
  }
  return null;
};
