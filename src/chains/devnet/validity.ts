import { decode } from 'xrpl';
import type { ChainDefinition } from '../../catalog/chain.js';

/** Tron's expiration (ms) and XRP's LastLedgerSequence of a signed transaction; null where the family has none. */
export const validityLimitOf = (chain: ChainDefinition, raw: string): { kind: 'expiration'; atMs: number } | { kind: 'lastLedger'; sequence: number } | null => {
  try {
    if (chain.family === 'tron') {
      const expiration = (JSON.parse(raw) as { raw_data?: { expiration?: unknown } }).raw_data?.expiration;
      return typeof expiration === 'number' ? { kind: 'expiration', atMs: expiration } : null;
    }
    if (chain.family === 'xrp') {
      const last = (decode(raw.toUpperCase()) as { LastLedgerSequence?: number }).LastLedgerSequence;
      return last === undefined ? null : { kind: 'lastLedger', sequence: last };
    }
  } catch {
    return null; // malformed: the codec refuses it elsewhere
  }
  return null;
};
