import { describe, expect, it } from 'vitest';
import { ledgerDecider, type LedgerCommand } from '../../src/domain/ledger/decide.js';
import { balanceChangeOf, balanceUpdateReason, evolveLedger, ZERO, type LedgerEvent } from '../../src/domain/ledger/ledger.js';
import { NOW, specFor } from '../support/given-when-then.js';

const given = specFor(ledgerDecider);
const occurredAt = NOW.toISOString();
const ledger = { orgId: 'o1', tokenId: 'eip155:1/slip44:60' };
const balances = (available: string, pending: string, held: string) => ({ balancesAfter: { available, pending, held } });

const credited = (amount: string, after: [string, string, string]): LedgerEvent => ({
  type: 'DepositCredited',
  data: { ...ledger, amount, occurredAt, ...balances(...after), deposit: { chainId: 'eip155:1', txHash: '0x1', index: 0 } },
});
const pendingDeposit = (amount: string, after: [string, string, string]): LedgerEvent => ({
  type: 'DepositPending',
  data: { ...ledger, amount, occurredAt, ...balances(...after), deposit: { chainId: 'eip155:1', txHash: '0x2', index: 0 } },
});
const hold = (type: 'FundsHeld' | 'HoldPosted' | 'HoldReleased', withdrawalId: string, amount: string, after: [string, string, string]): LedgerEvent => ({
  type,
  data: { ...ledger, amount, occurredAt, ...balances(...after), withdrawalId },
});

const command = (type: 'HoldFunds' | 'PostHold' | 'ReleaseHold', withdrawalId: string, amount: bigint): LedgerCommand => ({ type, ...ledger, amount, withdrawalId });

describe('ledger holds (pending / post / void)', () => {
  // a deposit detected (pending), then confirmed (available)
  const funded = [pendingDeposit('100', ['0', '100', '0']), credited('100', ['100', '0', '0'])];

  it('a hold moves available to held', () => {
    given(funded).when(command('HoldFunds', 'w1', 40n)).then([hold('FundsHeld', 'w1', '40', ['60', '0', '40'])]);
  });

  it('a hold of exactly the available balance is taken', () => {
    given(funded).when(command('HoldFunds', 'w1', 100n)).then([hold('FundsHeld', 'w1', '100', ['0', '0', '100'])]);
  });

  it('a hold larger than the available balance is INSUFFICIENT_BALANCE, pending funds do not count', () => {
    given([...funded, pendingDeposit('50', ['100', '50', '0'])])
      .when(command('HoldFunds', 'w1', 101n))
      .thenThrows('INSUFFICIENT_BALANCE', { tokenId: ledger.tokenId, available: '100', required: '101' });
  });

  it('funds already held are not available to a second hold', () => {
    given([...funded, hold('FundsHeld', 'w1', '70', ['30', '0', '70'])])
      .when(command('HoldFunds', 'w2', 31n))
      .thenThrows('INSUFFICIENT_BALANCE', { tokenId: ledger.tokenId, available: '30', required: '31' });
  });

  it('posting a hold takes the held funds away for good', () => {
    given([...funded, hold('FundsHeld', 'w1', '40', ['60', '0', '40'])])
      .when(command('PostHold', 'w1', 40n))
      .then([hold('HoldPosted', 'w1', '40', ['60', '0', '0'])]);
  });

  it('releasing a hold gives the funds back to available', () => {
    given([...funded, hold('FundsHeld', 'w1', '40', ['60', '0', '40'])])
      .when(command('ReleaseHold', 'w1', 40n))
      .then([hold('HoldReleased', 'w1', '40', ['100', '0', '0'])]);
  });

  it('posting or releasing more than is held is a bug, never a negative balance', () => {
    given(funded).when(command('PostHold', 'w1', 1n)).thenThrows('LEDGER_INCONSISTENT');
    given([...funded, hold('FundsHeld', 'w1', '40', ['60', '0', '40'])]).when(command('ReleaseHold', 'w1', 41n)).thenThrows('LEDGER_INCONSISTENT');
  });

  it('refuses holds that are not positive', () => {
    given(funded).when(command('HoldFunds', 'w1', 0n)).thenThrows('INVALID_AMOUNT');
  });

  it('evolve, balanceChangeOf and balance.updated agree on every hold event', () => {
    const events = [...funded, hold('FundsHeld', 'w1', '40', ['60', '0', '40']), hold('FundsHeld', 'w2', '10', ['50', '0', '50']), hold('HoldPosted', 'w1', '40', ['50', '0', '10']), hold('HoldReleased', 'w2', '10', ['60', '0', '0'])];
    expect(events.reduce(evolveLedger, ZERO)).toEqual({ available: 60n, pending: 0n, held: 0n });
    expect(balanceChangeOf(events[2]!)).toEqual({ available: -40n, pending: 0n, held: 40n });
    expect(balanceChangeOf(events[4]!)).toEqual({ available: 0n, pending: 0n, held: -40n });
    expect(balanceChangeOf(events[5]!)).toEqual({ available: 10n, pending: 0n, held: -10n });
    expect(events.slice(2).map(balanceUpdateReason)).toEqual(['withdrawal', 'withdrawal', 'withdrawal', 'withdrawal']);
  });
});
