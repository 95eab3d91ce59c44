import { randomBytes, randomUUID } from 'node:crypto';
import type { NewEvent } from '../../src/eventstore/port.js';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** The constant parts, shared with the SQL that builds the same event (pgbench-equivalent.ts). */
export const DEPOSIT_EVENT_TYPES = ['DepositDetected', 'DepositConfirmed', 'DepositCredited'];
export const DEPOSIT_CONSTANTS = {
  chain: 'eip155:1',
  asset: 'erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
  actor: 'processor:eip155:1',
  orgId: 'org_01JD8ZQ4K6V3N2M1B0C9X8W7Y6',
  firstBlock: 21_000_000,
  confirmations: 12,
};

/**
 * A deposit-like event: ~300 bytes of data JSON, full audit metadata (the shape bench/eventstore.ts
 * appends). pgbench-equivalent.ts builds the same fields in SQL.
 */
export const depositEvent = (accountId: string, index: number): NewEvent => ({
  id: randomUUID(),
  type: DEPOSIT_EVENT_TYPES[index % DEPOSIT_EVENT_TYPES.length]!,
  data: {
    depositId: randomUUID(),
    accountId,
    chain: DEPOSIT_CONSTANTS.chain,
    asset: DEPOSIT_CONSTANTS.asset,
    amount: (Math.random() * 10_000).toFixed(6),
    toAddress: `0x${hex(20)}`,
    txHash: `0x${hex(32)}`,
    logIndex: index,
    blockNumber: DEPOSIT_CONSTANTS.firstBlock + index,
    confirmations: DEPOSIT_CONSTANTS.confirmations,
  },
  metadata: {
    actor: DEPOSIT_CONSTANTS.actor,
    at: new Date().toISOString(),
    requestId: randomUUID(),
    correlationId: randomUUID(),
    causationId: randomUUID(),
    orgId: DEPOSIT_CONSTANTS.orgId,
  },
});
