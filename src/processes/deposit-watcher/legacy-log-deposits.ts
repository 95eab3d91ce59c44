import type { ChainFamily } from '../../catalog/chain.js';
import { findToken, tokenOfAsset } from '../../catalog/tokens.js';
import type { BlockTransfer } from '../../chains/gateway.js';
import type { DepositDetails } from '../../domain/deposit/deposit.js';

/** The index a transfer is recorded under, or why it is not recorded. */
export type TransferKey = { index: number; logIndexInTransaction?: true } | { refused: string };

/** An EVM token deposit keyed by its log's index in the block: its transaction (lower case), that index, what it moved. */
export interface LegacyLogDeposit {
  txHash: string;
  index: number;
  content: string;
}

type Noted = Pick<DepositDetails, 'txHash' | 'index' | 'tokenId' | 'senderAddress' | 'toAddress' | 'amount' | 'logIndexInTransaction'>;

/** What tells one transfer of a transaction from another wherever it is mined: token, sender, recipient, amount. */
const contentOf = (tokenId: string, from: string, to: string, amount: string) => JSON.stringify([tokenId, from.toLowerCase(), to.toLowerCase(), amount]);

/**
 * EVM token deposits are keyed by transaction hash and the log's index WITHIN the transaction,
 * which a reorg that mines the transaction again elsewhere does not change. Deposits recorded
 * before that (their DepositDetected has no `logIndexInTransaction`) are keyed by the log's index
 * in its BLOCK, which such a reorg does change. This remembers those, per transaction (they are a
 * closed set: nothing is recorded that way any more), and keys a transfer of such a transaction
 * by the old deposit it matches: the same content, paired in order when a transaction has several
 * alike. So a transfer detected before the upgrade is recognised, whatever index it is mined at
 * now, and never credited a second time under the new key. A transfer of such a transaction that
 * matches none gets the new key, unless an old deposit of another transfer holds that key: then it
 * is refused (logged for an operator) rather than taken for that other transfer.
 */
export class LegacyLogDeposits {
  /** transaction hash (lower case) → its deposits keyed the old way, by index */
  private readonly byTransaction = new Map<string, { index: number; content: string }[]>();

  constructor(
    private readonly chainId: string,
    private readonly family: ChainFamily,
  ) {}

  /** a DepositDetected of the chain; answers the deposit when it is one keyed the old way, seen for the first time */
  note(detected: Noted): LegacyLogDeposit | null {
    if (this.family !== 'evm' || detected.logIndexInTransaction || findToken(detected.tokenId)?.kind === 'native') return null;
    const deposit = { txHash: detected.txHash.toLowerCase(), index: detected.index, content: contentOf(detected.tokenId, detected.senderAddress, detected.toAddress, detected.amount) };
    return this.remember(deposit) ? deposit : null;
  }

  /** deposits noted before (a watcher's checkpoint kept them) */
  restore(deposits: Iterable<LegacyLogDeposit>): void {
    for (const deposit of deposits) this.remember(deposit);
  }

  private remember({ txHash, index, content }: LegacyLogDeposit): boolean {
    const known = this.byTransaction.get(txHash) ?? [];
    // detected again after a revert: the same deposit
    if (known.some((deposit) => deposit.index === index)) return false;
    known.push({ index, content });
    known.sort((a, b) => a.index - b.index);
    this.byTransaction.set(txHash, known);
    return true;
  }

  /** the key of each of a block's transfers, in their order */
  keyAll(transfers: readonly BlockTransfer[]): TransferKey[] {
    const keys: TransferKey[] = transfers.map((transfer) => ({ index: transfer.index }));
    if (this.family !== 'evm') return keys;
    const tokenTransfersByTransaction = new Map<string, number[]>();
    transfers.forEach((transfer, position) => {
      if (transfer.asset === 'native') return;
      const txHash = transfer.txHash.toLowerCase();
      tokenTransfersByTransaction.set(txHash, [...(tokenTransfersByTransaction.get(txHash) ?? []), position]);
    });
    for (const [txHash, positions] of tokenTransfersByTransaction) {
      const legacy = this.byTransaction.get(txHash) ?? [];
      const unmatched = new Map<string, number[]>();
      for (const deposit of legacy) unmatched.set(deposit.content, [...(unmatched.get(deposit.content) ?? []), deposit.index]);
      for (const position of [...positions].sort((a, b) => transfers[a]!.index - transfers[b]!.index)) {
        const transfer = transfers[position]!;
        const tokenId = tokenOfAsset(this.chainId, transfer.asset)?.id ?? transfer.asset;
        const match = unmatched.get(contentOf(tokenId, transfer.from, transfer.to, transfer.amount.toString()))?.shift();
        if (match !== undefined) keys[position] = { index: match };
        else if (legacy.some((deposit) => deposit.index === transfer.index))
          keys[position] = { refused: `log ${transfer.index} of ${transfer.txHash} matches no deposit recorded before logs were keyed within their transaction, and one of those holds its key` };
        else keys[position] = { index: transfer.index, logIndexInTransaction: true };
      }
    }
    return keys;
  }
}
