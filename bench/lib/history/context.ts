import { randomBytes } from 'node:crypto';
import type { CommandMetadata, DecidedAppend } from '../../../src/application/command-handler.js';
import type { DepositAddressBook } from '../../../src/chains/address-book.js';
import type { Signer } from '../../../src/chains/signer/signer.js';
import type { ChainDefinition } from '../../../src/catalog/chain.js';
import type { Keyring } from '../../../src/security/keyring.js';
import type { HistoryBook } from './book.js';

/** One atomic append as the service would make it: who asked, and each stream at the revision decided on. */
export interface HistoryStep {
  metadata: CommandMetadata;
  appends: DecidedAppend[];
}

/** Steps yielded one at a time, each decided when it is asked for (in the fill's global order), then a result. */
export type Steps<Result = void> = Generator<HistoryStep, Result, void>;

export interface HistoryContext {
  book: HistoryBook;
  /** the simulated time of the steps being decided (the fill moves it forward round by round) */
  clock: { now: Date };
  /** once set, organizations finish the activity they are in and start no other */
  stopping: boolean;
  signer: Pick<Signer, 'addressOf'>;
  addresses: DepositAddressBook;
  keyring: Keyring;
  /** one scrypt hash for every user of the history: scrypt costs ~50 ms, and nobody logs in as them */
  passwordHash: string;
  /** when the simulated history starts: block heights count from it */
  start: Date;
}

/** `bytes` random bytes as hex, `0x`-prefixed unless `bare` (Bitcoin transaction ids are bare). */
export const randomHex = (bytes: number, bare = false) => `${bare ? '' : '0x'}${randomBytes(bytes).toString('hex')}`;

/** A transaction hash as the chain writes it. */
export const transactionHash = (chain: ChainDefinition) => randomHex(32, chain.family === 'bitcoin');

const SECONDS_PER_BLOCK: Record<string, number> = { evm: 12, bitcoin: 600, tron: 3, xrp: 4 };

/** The chain's height at `at`, from a plausible mainnet height at the history's start. */
export const blockAt = (context: HistoryContext, chain: ChainDefinition, at: Date = context.clock.now): number => {
  const base = chain.family === 'bitcoin' ? 870_000 : 21_000_000;
  return base + Math.floor((at.getTime() - context.start.getTime()) / 1000 / SECONDS_PER_BLOCK[chain.family]!);
};
