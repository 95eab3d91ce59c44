import type { BroadcastRefusal } from '../gateway.js';

/** What a node's answer to a broadcast says: `known` (it holds the transaction already) or a refusal. */
export type BroadcastAnswer = 'known' | BroadcastRefusal;

/** One row of a family's table: a node's answer (its code, or words where the node gives no code), how it is read, and why. */
export interface AnswerRow {
  /** matched against the answer's code or text */
  matches: RegExp;
  answer: BroadcastAnswer;
  why: string;
  /** an answer as a node sends it, for the table's tests */
  example: string;
}

/** The first row that matches, else `fallback`. */
export const classifyAnswer = (table: readonly AnswerRow[], text: string, fallback: BroadcastAnswer): BroadcastAnswer =>
  table.find((row) => row.matches.test(text))?.answer ?? fallback;
