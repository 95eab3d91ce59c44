import { classifyAnswer, type AnswerRow, type BroadcastAnswer } from '../transfers/refusals.js';

/** How java-tron's `broadcasttransaction` codes are read. */
export const TRON_BROADCAST_ANSWERS: readonly AnswerRow[] = [
  { matches: /^DUP_TRANSACTION_ERROR/, answer: 'known', why: 'the node holds this transaction already', example: 'DUP_TRANSACTION_ERROR' },
  { matches: /^TRANSACTION_EXPIRATION_ERROR/, answer: 'conflict', why: 'past its expiration for this node: it is final once a solid block past it holds it nowhere', example: 'TRANSACTION_EXPIRATION_ERROR' },
  { matches: /^(SERVER_BUSY|NOT_ENOUGH_EFFECTIVE_CONNECTION|NO_CONNECTION|BLOCK_UNSOLIDIFIED)/, answer: 'transient', why: 'the node cannot take it now', example: 'SERVER_BUSY' },
  { matches: /^(SIGERROR|CONTRACT_VALIDATE_ERROR|CONTRACT_EXE_ERROR|BANDWITH_ERROR|TAPOS_ERROR|TOO_BIG_TRANSACTION_ERROR|OTHER_ERROR)/, answer: 'invalid', why: 'refused on its own merits; it expires by itself', example: 'CONTRACT_VALIDATE_ERROR' },
];

export const classifyTronAnswer = (code: string): BroadcastAnswer => classifyAnswer(TRON_BROADCAST_ANSWERS, code, 'invalid');
