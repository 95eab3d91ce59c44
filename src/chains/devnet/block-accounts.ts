import type { AccountsInView, MempoolEntry } from './mempool.js';
import type { DevnetDb } from './tables.js';

const key = (address: string, asset: string) => `${address}\u0000${asset}`;

/**
 * The accounts of the senders of a block being mined (account chains), in memory: their confirmed
 * running totals read once, then each transaction the block includes counted as the view of the
 * next one counts a pending transaction queued before it (ledger.ts): a pending credit's incoming
 * funds, a signed transaction's transfers unless it will fail, its fee and its nonce. A transaction
 * the block drops is never counted. So re-checking a block's transactions costs two statements,
 * not several per transaction over each sender's history.
 */
export class BlockAccounts implements AccountsInView {
  private readonly balances = new Map<string, bigint>();
  private readonly nonces = new Map<string, number>();

  private constructor(private readonly senders: ReadonlySet<string>) {}

  /** the confirmed totals of every sender of `entries` */
  static async load(trx: DevnetDb, chainId: string, entries: readonly MempoolEntry[]): Promise<BlockAccounts> {
    const senders = new Set(entries.flatMap((entry) => (entry.kind === 'signed' && entry.sender !== null ? [entry.sender] : [])));
    const accounts = new BlockAccounts(senders);
    if (senders.size === 0) return accounts;
    const addresses = [...senders];
    const balances = await trx.selectFrom('devnet_balances').select(['address', 'asset', 'amount']).where('chain_id', '=', chainId).where('address', 'in', addresses).execute();
    for (const row of balances) accounts.balances.set(key(row.address, row.asset), BigInt(row.amount));
    const nonces = await trx.selectFrom('devnet_nonces').select(['address', 'used']).where('chain_id', '=', chainId).where('address', 'in', addresses).execute();
    for (const row of nonces) accounts.nonces.set(row.address, row.used);
    return accounts;
  }

  private known(address: string): void {
    if (!this.senders.has(address)) throw new Error(`the block's accounts hold no totals for ${address}, which sends none of its transactions`);
  }

  usedNonces(sender: string): Promise<number> {
    this.known(sender);
    return Promise.resolve(this.nonces.get(sender) ?? 0);
  }

  balance(address: string, asset: string): Promise<bigint> {
    this.known(address);
    return Promise.resolve(this.balances.get(key(address, asset)) ?? 0n);
  }

  private add(address: string, asset: string, amount: bigint): void {
    this.balances.set(key(address, asset), (this.balances.get(key(address, asset)) ?? 0n) + amount);
  }

  /** the block includes `entry`: the transactions after it see it as pending before them */
  include(entry: MempoolEntry): void {
    if (entry.kind === 'credit') {
      for (const transfer of entry.transfers) this.add(transfer.to, transfer.asset, transfer.amount);
      return;
    }
    if (entry.kind !== 'signed' || entry.sender === null) return;
    if (entry.error === null) for (const transfer of entry.transfers) this.add(transfer.from, transfer.asset, -transfer.amount);
    this.add(entry.sender, 'native', -entry.fee);
    this.nonces.set(entry.sender, (this.nonces.get(entry.sender) ?? 0) + 1);
  }
}
