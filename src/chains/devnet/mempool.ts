import { sql } from 'kysely';
import type { ChainDefinition, DecodedTransfer } from '../../catalog/chain.js';
import { accountBalance, firstNonce, outputAt, spenderOf, usedNonces, type StateView } from './ledger.js';
import type { DevnetDb, DevnetTransactionKind } from './tables.js';

/** A transaction as the devnet keeps it, whether decoded from a broadcast or made by the devnet. */
export interface MempoolEntry {
  hash: string;
  kind: DevnetTransactionKind;
  raw: string | null;
  sender: string | null;
  nonce: number | null;
  /** what mining charges the sender (native base units) */
  fee: bigint;
  transfers: DecodedTransfer[];
  spends: { txHash: string; index: number }[];
  /** set when the transaction is admitted but will fail once mined (a revert fault, a missing destination tag) */
  error: string | null;
}

/** Adds a transaction to the mempool, or puts a dropped one back (a re-broadcast after a reorg). */
export const enqueue = async (trx: DevnetDb, chainId: string, entry: MempoolEntry, previouslyDropped: boolean): Promise<void> => {
  if (previouslyDropped) {
    await trx
      .updateTable('devnet_transactions')
      .set((eb) => ({ status: 'pending', block_number: null, error: entry.error, fee: entry.fee.toString(), seq: eb.fn('nextval', [eb.val('devnet_transaction_seq')]) }))
      .where('chain_id', '=', chainId)
      .where('hash', '=', entry.hash)
      .execute();
    return;
  }
  await enqueueNew(trx, chainId, [entry]);
};

/**
 * Adds new transactions to the mempool, in this order: one statement takes their places in the
 * mempool (`seq`, ascending in the order given), then one multi-row insert per table, whatever
 * their number.
 */
export const enqueueNew = async (trx: DevnetDb, chainId: string, entries: readonly MempoolEntry[]): Promise<void> => {
  if (entries.length === 0) return;
  const { rows } = await sql<{ seq: string }>`select nextval('devnet_transaction_seq')::text as seq from generate_series(1, ${entries.length})`.execute(trx);
  const seqs = rows.map((row) => BigInt(row.seq)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  await trx
    .insertInto('devnet_transactions')
    .values(
      entries.map((entry, position) => ({
        chain_id: chainId,
        hash: entry.hash,
        seq: seqs[position]!.toString(),
        kind: entry.kind,
        raw: entry.raw,
        status: 'pending' as const,
        block_number: null,
        sender: entry.sender,
        nonce: entry.nonce,
        fee: entry.fee.toString(),
        error: entry.error,
      })),
    )
    .execute();
  const transfers = entries.flatMap((entry) =>
    entry.transfers.map((transfer, position) => ({
      chain_id: chainId,
      tx_hash: entry.hash,
      position,
      transfer_index: transfer.index,
      from_address: transfer.from,
      to_address: transfer.to,
      asset: transfer.asset,
      amount: transfer.amount.toString(),
      destination_tag: transfer.destinationTag,
    })),
  );
  if (transfers.length > 0) await trx.insertInto('devnet_transfers').values(transfers).execute();
  const spends = entries.flatMap((entry) => entry.spends.map((spend) => ({ chain_id: chainId, tx_hash: entry.hash, output_tx_hash: spend.txHash, output_index: spend.index })));
  if (spends.length > 0) await trx.insertInto('devnet_spends').values(spends).execute();
};

/** What the sender must hold of each asset: the amounts it sends, and the fee in the native asset. */
const requiredFunds = (entry: MempoolEntry): Map<string, bigint> => {
  const required = new Map<string, bigint>([['native', entry.fee]]);
  for (const transfer of entry.transfers) {
    if (transfer.from === entry.sender) required.set(transfer.asset, (required.get(transfer.asset) ?? 0n) + transfer.amount);
  }
  return required;
};

/** What an account chain's check reads: nonces used and balances, as one view of the chain sees them. */
export interface AccountsInView {
  usedNonces(sender: string): Promise<number>;
  balance(address: string, asset: string): Promise<bigint>;
}

/** The view read from the devnet's tables, a statement a question. */
export const accountsInTables = (trx: DevnetDb, chainId: string, view: StateView): AccountsInView => ({
  usedNonces: (sender) => usedNonces(trx, chainId, sender, view),
  balance: (address, asset) => accountBalance(trx, chainId, address, asset, view),
});

/** Why an account chain (EVM, Tron, XRP) refuses a signed transaction in `accounts`' view: its nonce/sequence, then its funds. */
export const accountRefusal = async (chain: ChainDefinition, entry: MempoolEntry & { sender: string }, accounts: AccountsInView): Promise<string | null> => {
  if (chain.family === 'evm' || chain.family === 'xrp') {
    const expected = firstNonce(chain) + (await accounts.usedNonces(entry.sender));
    if (entry.nonce !== expected) {
      const word = chain.family === 'evm' ? 'nonce' : 'sequence';
      return `${word} ${entry.nonce} is not the account's next ${word} (${expected})`;
    }
  }
  for (const [asset, required] of requiredFunds(entry)) {
    const balance = await accounts.balance(entry.sender, asset);
    if (balance < required) return `insufficient funds: ${entry.sender} holds ${balance} of ${asset}, the transaction needs ${required}`;
  }
  return null;
};

/**
 * Why a node would refuse a signed transaction against the state in `view`, or null. The same
 * rules admit a broadcast (against the whole mempool) and re-check a pending transaction when it is
 * mined (against what is queued before it), which drops transactions a reorg made invalid.
 * `replacing`: the pending transactions a Bitcoin replacement evicts (replacement.ts).
 */
export const admissionRefusal = async (trx: DevnetDb, chain: ChainDefinition, entry: MempoolEntry, view: StateView, replacing: readonly string[] = []): Promise<string | null> => {
  if (entry.kind !== 'signed' || entry.sender === null) return null;
  if (chain.family === 'bitcoin') {
    for (const spend of entry.spends) {
      const output = await outputAt(trx, chain.id, spend.txHash, spend.index, view);
      if (!output) return `input ${spend.txHash}:${spend.index} does not exist (or is not confirmed before this transaction)`;
      // the pending transactions it replaces (BIP125) do not count as spenders
      const spender = await spenderOf(trx, chain.id, spend.txHash, spend.index, view, [entry.hash, ...replacing]);
      if (spender) return `input ${spend.txHash}:${spend.index} is already spent by ${spender}`;
    }
    return null;
  }
  return accountRefusal(chain, { ...entry, sender: entry.sender }, accountsInTables(trx, chain.id, view));
};
