import { classifyAnswer, type AnswerRow, type BroadcastAnswer } from '../transfers/refusals.js';

/**
 * How rippled's engine results to `submit` are read. A submit result is tentative: only a
 * validated ledger is final (tesSUCCESS paid, tec* failed with the fee claimed).
 */
export const XRP_BROADCAST_ANSWERS: readonly AnswerRow[] = [
  { matches: /^(tes|tec|terQUEUED|tefALREADY)/, answer: 'known', why: 'applied, queued or held: the ledger will say how it ended', example: 'tesSUCCESS' },
  { matches: /^tefPAST_SEQ|^tefMAX_LEDGER/, answer: 'conflict', why: 'the sequence is used (by this transaction or another) or its last ledger passed: the validated ledger tells', example: 'tefPAST_SEQ' },
  { matches: /^(ter|tel)/, answer: 'transient', why: 'retry or local: may be applied later, as it is', example: 'telINSUF_FEE_P' },
  { matches: /^(tem|tef)/, answer: 'invalid', why: 'malformed or failed on its own merits; it expires with its LastLedgerSequence', example: 'temBAD_AMOUNT' },
];

export const classifyXrpAnswer = (engineResult: string): BroadcastAnswer => classifyAnswer(XRP_BROADCAST_ANSWERS, engineResult, 'transient');
