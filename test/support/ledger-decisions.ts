import type { DecidedAppend } from '../../src/application/command-handler.js';
import type { LedgerView } from '../../src/application/ledger-batches.js';
import { ledgerDecider, type LedgerCommand } from '../../src/domain/ledger/decide.js';

/** a ledger command without its organization and token (the test's own are added) */
export type Unscoped = LedgerCommand extends infer Command ? (Command extends LedgerCommand ? Omit<Command, 'orgId' | 'tokenId'> : never) : never;

/** Ledger commands and batcher decisions on one organization's token, for the batcher's tests. */
export const ledgerDecisions = (orgId: string, tokenId: string) => {
  const ledgerCommand = (command: Unscoped) => ({ orgId, tokenId, ...command }) as LedgerCommand;
  /** A decision that moves the ledger alone. */
  const onLedgerOnly = (stream: string, command: Unscoped) => ({
    decide: (ledger: LedgerView, now: Date) => ({
      appends: [{ stream, expectedRevision: ledger.expectedRevision, events: ledgerDecider.decide(ledgerCommand(command), ledger.state, { now }) }] as DecidedAppend[],
      result: {},
    }),
  });
  return { ledgerCommand, onLedgerOnly };
};
