import { Transaction } from 'bitcoinjs-lib';
import type { Kysely } from 'kysely';
import { findChain } from '../catalog/registry.js';
import { addressOfOutputScript } from '../chains/bitcoin/address.js';
import type { OwnOutputs } from '../chains/bitcoin/core-rpc-gateway.js';
import type { Database } from '../db/database.js';

/**
 * The outputs the service knows were paid to its Bitcoin addresses, from its own history (the
 * read models of its events): every deposit it detected, and every output of its own signed
 * withdrawal transactions (their change, replacements included). Those a completed withdrawal
 * spent are left out (its transaction is at depth); of the rest the node's UTXO set says which
 * are still unspent (the Bitcoin Core gateway asks `gettxout` of each).
 */
export const bitcoinOwnOutputs =
  (db: Kysely<Database>): OwnOutputs =>
  async (chainId, addresses) => {
    const chain = findChain(chainId);
    if (!chain || addresses.length === 0) return [];
    const wanted = new Set(addresses);
    const deposits = await db.selectFrom('deposits').select(['tx_hash', 'output_index']).where('chain_id', '=', chainId).where('to_address', 'in', [...wanted]).execute();
    const outputs = deposits.map((row) => ({ txHash: row.tx_hash, index: row.output_index }));
    const withdrawals = await db.selectFrom('withdrawals').select(['status', 'state']).where('chain_id', '=', chainId).where('status', 'in', ['Processing', 'Completed', 'Failed']).execute();
    // a replacement spends the same inputs as what it replaced: the signed transaction's are the completed one's
    const spent = new Set(withdrawals.flatMap(({ status, state }) => (status === 'Completed' ? (state.signedTransaction?.inputs ?? []).map((input) => `${input.txHash}:${input.index}`) : [])));
    for (const { status, state } of withdrawals) {
      for (const transaction of [state.signedTransaction, ...(state.replacedTransactions ?? [])]) {
        // of a completed withdrawal, only the transaction that was mined made outputs
        if (!transaction || (status === 'Completed' && transaction.txHash !== state.txnHash)) continue;
        const tx = Transaction.fromHex(transaction.raw);
        tx.outs.forEach((output, index) => {
          const paidTo = addressOfOutputScript(output.script, chain.network);
          if (paidTo !== undefined && wanted.has(paidTo)) outputs.push({ txHash: tx.getId(), index });
        });
      }
    }
    return outputs.filter((output) => !spent.has(`${output.txHash}:${output.index}`));
  };
