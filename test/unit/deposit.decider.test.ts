import { describe, it } from 'vitest';
import { depositDecider, type DepositCommand } from '../../src/domain/deposit/decide.js';
import type { DepositDetails, DepositEvent } from '../../src/domain/deposit/deposit.js';
import { NOW, specFor } from '../support/given-when-then.js';

const given = specFor(depositDecider);
const at = NOW.toISOString();
const ref = { chainId: 'eip155:1', txHash: '0xabc', index: 3 };

const details = (overrides: Partial<DepositDetails> = {}): DepositDetails => ({
  ...ref,
  tokenId: 'eip155:1/slip44:60',
  amount: '1500000000000000000',
  orgId: 'o1',
  externalUserId: 'user-1',
  accountChainId: 'eip155:1',
  toAddress: '0x00000000000000000000000000000000000000aa',
  destinationTag: null,
  senderAddress: '0x00000000000000000000000000000000000000bb',
  blockNumber: 100,
  blockHash: '0xblock100',
  credit: 'credit',
  ...overrides,
});

const detect = (overrides: Partial<DepositDetails> = {}): DepositCommand => ({ type: 'DetectDeposit', ...details(overrides) });
const detected = (overrides: Partial<DepositDetails> = {}): DepositEvent => ({ type: 'DepositDetected', data: { ...details(overrides), detectedAt: at } });
const confirmed = (credited = true, confirmations = 12): DepositEvent => ({
  type: 'DepositConfirmed',
  data: { ...ref, confirmations, confirmedAt: at, credited },
});
const reverted = (reason = 'reorg'): DepositEvent => ({ type: 'DepositReverted', data: { ...ref, reason, revertedAt: at } });

describe('deposit decider', () => {
  it('records a new deposit with the time it was detected', () => {
    given([]).when(detect()).then([detected()]);
  });

  it('records an unattributed deposit as such', () => {
    const unattributed = { orgId: null, externalUserId: null, accountChainId: null, credit: 'unattributed' as const };
    given([]).when(detect(unattributed)).then([detected(unattributed)]);
  });

  it('refuses to record the same transfer twice: DUPLICATE_DEPOSIT, naming it', () => {
    given([detected()]).when(detect()).thenThrows('DUPLICATE_DEPOSIT', { chainId: 'eip155:1', txnHash: '0xabc', index: 3 });
    given([detected(), confirmed()]).when(detect()).thenThrows('DUPLICATE_DEPOSIT');
  });

  it('records a reverted transfer again when a later block includes it', () => {
    given([detected(), reverted()]).when(detect({ blockNumber: 101, blockHash: '0xblock101' })).then([detected({ blockNumber: 101, blockHash: '0xblock101' })]);
  });

  it('refuses an amount that is not a positive integer', () => {
    for (const amount of ['0', '-1', '1.5', '01', '']) given([]).when(detect({ amount })).thenThrows('INVALID_AMOUNT');
  });

  it('confirms a creditable deposit as credited', () => {
    given([detected()]).when({ type: 'ConfirmDeposit', confirmations: 12 }).then([confirmed(true, 12)]);
  });

  it('confirms a below-minimum or unattributed deposit without crediting it', () => {
    given([detected({ credit: 'below_minimum' })]).when({ type: 'ConfirmDeposit', confirmations: 12 }).then([confirmed(false, 12)]);
    given([detected({ orgId: null, credit: 'unattributed' })]).when({ type: 'ConfirmDeposit', confirmations: 3 }).then([confirmed(false, 3)]);
  });

  it('decides nothing when a confirmed deposit is confirmed again (a watcher reporting twice)', () => {
    given([detected(), confirmed()]).when({ type: 'ConfirmDeposit', confirmations: 20 }).then([]);
  });

  it('refuses to confirm a reverted deposit, an unknown one, or with fewer than one confirmation', () => {
    given([detected(), reverted()]).when({ type: 'ConfirmDeposit', confirmations: 12 }).thenThrows('DEPOSIT_REVERTED');
    given([]).when({ type: 'ConfirmDeposit', confirmations: 12 }).thenThrows('NOT_FOUND');
    given([detected()]).when({ type: 'ConfirmDeposit', confirmations: 0 }).thenThrows('BAD_REQUEST');
    given([detected()]).when({ type: 'ConfirmDeposit', confirmations: 1.5 }).thenThrows('BAD_REQUEST');
  });

  it('reverts a detected deposit with the reason', () => {
    given([detected()]).when({ type: 'RevertDeposit', reason: 'block 100 left the chain' }).then([reverted('block 100 left the chain')]);
  });

  it('decides nothing when a reverted deposit is reverted again', () => {
    given([detected(), reverted()]).when({ type: 'RevertDeposit', reason: 'again' }).then([]);
  });

  it('refuses to revert a confirmed deposit or an unknown one', () => {
    given([detected(), confirmed()]).when({ type: 'RevertDeposit', reason: 'deep reorg' }).thenThrows('DEPOSIT_ALREADY_CONFIRMED');
    given([]).when({ type: 'RevertDeposit', reason: 'reorg' }).thenThrows('NOT_FOUND');
  });

  it('confirms a deposit detected again after a revert', () => {
    given([detected(), reverted(), detected({ blockNumber: 101 })]).when({ type: 'ConfirmDeposit', confirmations: 12 }).then([confirmed(true, 12)]);
  });
});
