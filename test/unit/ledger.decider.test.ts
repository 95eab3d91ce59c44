import { describe, expect, it } from 'vitest';
import { ledgerDecider, type LedgerCommand } from '../../src/domain/ledger/decide.js';
import { balancesToData, balanceUpdateReason, evolveLedger, ZERO, type LedgerEvent } from '../../src/domain/ledger/ledger.js';
import { NOW, specFor } from '../support/given-when-then.js';

const given = specFor(ledgerDecider);
const occurredAt = NOW.toISOString();
const ledger = { orgId: 'o1', tokenId: 'eip155:1/slip44:60' };
const deposit = (n: number) => ({ chainId: 'eip155:1', txHash: `0x${n}`, index: 0 });

/** the balances an event leaves: available, pending (held stays 0 until issue 6) */
const after = (available: string, pending: string) => ({ balancesAfter: { available, pending, held: '0' } });
const entry = (amount: string, [available, pending]: [string, string]) => ({ ...ledger, amount, occurredAt, ...after(available, pending) });

const pending = (n: number, amount: string, balances: [string, string] = ['0', amount]): LedgerEvent => ({
  type: 'DepositPending',
  data: { ...entry(amount, balances), deposit: deposit(n) },
});
const pendingReverted = (n: number, amount: string, balances: [string, string] = ['0', '0']): LedgerEvent => ({
  type: 'DepositPendingReverted',
  data: { ...entry(amount, balances), deposit: deposit(n) },
});
const credited = (n: number, amount: string, balances: [string, string] = [amount, '0']): LedgerEvent => ({
  type: 'DepositCredited',
  data: { ...entry(amount, balances), deposit: deposit(n) },
});
const fee = (amount: string, balances: [string, string] = ['0', '0']): LedgerEvent => ({
  type: 'FeeCharged',
  data: { ...entry(amount, balances), reason: 'sweep', reference: 'sweep-1' },
});

const addPending = (n: number, amount: bigint): LedgerCommand => ({ type: 'AddPendingDeposit', ...ledger, amount, deposit: deposit(n) });
const credit = (n: number, amount: bigint): LedgerCommand => ({ type: 'CreditDeposit', ...ledger, amount, deposit: deposit(n) });
const revertPending = (n: number, amount: bigint): LedgerCommand => ({ type: 'RevertPendingDeposit', ...ledger, amount, deposit: deposit(n) });
const chargeFee = (amount: bigint): LedgerCommand => ({ type: 'ChargeFee', ...ledger, amount, reason: 'sweep', reference: 'sweep-1' });

const balancesAfter = (events: LedgerEvent[]) => events.reduce(evolveLedger, ZERO);

describe('ledger decider', () => {
  it('adds a detected deposit to pending', () => {
    given([]).when(addPending(1, 500n)).then([pending(1, '500')]);
    given([pending(1, '500')]).when(addPending(2, 7n)).then([pending(2, '7', ['0', '507'])]);
    expect(balancesAfter([pending(1, '500'), pending(2, '7')])).toEqual({ available: 0n, pending: 507n, held: 0n });
  });

  it('moves a confirmed deposit from pending to available', () => {
    given([pending(1, '500'), pending(2, '7')]).when(credit(1, 500n)).then([credited(1, '500', ['500', '7'])]);
    expect(balancesAfter([pending(1, '500'), pending(2, '7'), credited(1, '500')])).toEqual({ available: 500n, pending: 7n, held: 0n });
  });

  it('takes a reverted deposit out of pending', () => {
    given([pending(1, '500')]).when(revertPending(1, 500n)).then([pendingReverted(1, '500')]);
    expect(balancesAfter([pending(1, '500'), pendingReverted(1, '500')])).toEqual(ZERO);
  });

  it('keeps amounts beyond 2^64 exact', () => {
    const big = 2n ** 255n + 12345n;
    given([pending(1, big.toString())]).when(credit(1, big)).then([credited(1, big.toString(), [big.toString(), '0'])]);
    expect(balancesAfter([pending(1, big.toString()), credited(1, big.toString())]).available).toBe(big);
  });

  it('charges a fee to the available balance, down to exactly zero', () => {
    given([pending(1, '500'), credited(1, '500')]).when(chargeFee(500n)).then([fee('500', ['0', '0'])]);
    given([pending(1, '500'), credited(1, '500')]).when(chargeFee(120n)).then([fee('120', ['380', '0'])]);
    expect(balancesAfter([pending(1, '500'), credited(1, '500'), fee('120')])).toEqual({ available: 380n, pending: 0n, held: 0n });
  });

  it('refuses a fee the available balance cannot pay (pending money does not count)', () => {
    given([pending(1, '500'), credited(1, '100'), pending(2, '1000')])
      .when(chargeFee(101n))
      .thenThrows('INSUFFICIENT_BALANCE', { tokenId: ledger.tokenId, available: '100', required: '101' });
  });

  it('refuses a deposit movement that would make pending negative', () => {
    given([]).when(credit(1, 1n)).thenThrows('LEDGER_INCONSISTENT');
    given([pending(1, '5')]).when(revertPending(1, 6n)).thenThrows('LEDGER_INCONSISTENT');
  });

  it('refuses amounts that are not positive', () => {
    given([]).when(addPending(1, 0n)).thenThrows('INVALID_AMOUNT');
    given([pending(1, '5'), credited(1, '5')]).when(chargeFee(-1n)).thenThrows('INVALID_AMOUNT');
  });

  it('states in every event the balances it leaves, equal to folding the stream', () => {
    const events = [pending(1, '500'), pending(2, '7', ['0', '507']), credited(1, '500', ['500', '7']), fee('120', ['380', '7'])];
    for (let count = 1; count <= events.length; count++) {
      const folded = balancesAfter(events.slice(0, count));
      expect(balancesToData(folded)).toEqual(events[count - 1]!.data.balancesAfter);
    }
  });

  it('gives balance.updated its reason', () => {
    expect([pending(1, '1'), pendingReverted(1, '1'), credited(1, '1'), fee('1')].map(balanceUpdateReason)).toEqual(['deposit', 'deposit', 'deposit', 'fee']);
  });
});
