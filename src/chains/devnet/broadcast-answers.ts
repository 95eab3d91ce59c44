import { classifyAnswer, type AnswerRow, type BroadcastAnswer } from '../transfers/refusals.js';

/** How the devnet's own refusals (broadcast.ts, mempool.ts, replacement.ts) are read: as a real node's of the same family would be. */
export const DEVNET_BROADCAST_ANSWERS: readonly AnswerRow[] = [
  { matches: /is already spent by|does not exist \(or is not confirmed/, answer: 'conflict', why: 'an input is spent or not known yet: the chain at depth tells by which', example: 'input ab12:0 is already spent by cd34' },
  { matches: /insufficient fee, rejecting replacement/, answer: 'conflict', why: 'a pending transaction spends the same inputs (BIP125)', example: 'insufficient fee, rejecting replacement ab12: it pays 1 sat' },
  { matches: /TRANSACTION_EXPIRATION_ERROR|tefMAX_LEDGER/, answer: 'conflict', why: 'past its validity window: final once a block at depth is past it', example: 'TRANSACTION_EXPIRATION_ERROR: expired at 2026-11-24T00:00:00.000Z' },
  { matches: /min relay fee not met|telINSUF_FEE_P|offers at most/, answer: 'transient', why: 'below the fee the devnet asks today', example: 'min relay fee not met: 100 < 141 sat' },
  { matches: /devnet fault: broadcast_error|insufficient funds/, answer: 'invalid', why: 'refused on its own merits (CONTRACT faults included)', example: 'the node rejected the transaction (devnet fault: broadcast_error)' },
];

const NONCE_REFUSAL = /(\d+) is not the account's next (?:nonce|sequence) \((\d+)\)/;

/** A used nonce or sequence is a conflict (mined: by this transaction or another); one ahead of the account waits for the ones before it. */
export const classifyDevnetAnswer = (message: string): BroadcastAnswer => {
  const nonce = NONCE_REFUSAL.exec(message);
  if (nonce) return BigInt(nonce[1]!) < BigInt(nonce[2]!) ? 'conflict' : 'transient';
  return classifyAnswer(DEVNET_BROADCAST_ANSWERS, message, 'invalid');
};
