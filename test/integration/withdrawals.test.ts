import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveWithdrawal, cancelWithdrawal, createWithdrawal, type WithdrawalServices } from '../../src/application/withdrawals.js';
import { DomainError } from '../../src/errors.js';
import { streams } from '../../src/domain/streams.js';
import { totpCode } from '../../src/security/totp.js';
import { startTestService, type TestService } from '../support/api-harness.js';
import { fundGasWallet, fundLedger, ledgerBalances, stopWithdrawalProcessors, withdrawalServicesOf } from '../support/withdrawals.js';

const ETH = 'eip155:1/slip44:60';
const RECIPIENT = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const AMOUNT = 1_000_000_000_000_000n; // 0.001 ETH, the minimum

type Outcome = { ok: true; value: unknown } | { ok: false; code: string; details?: Record<string, unknown> };
const settle = (promise: Promise<unknown>): Promise<Outcome> =>
  promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => {
      if (error instanceof DomainError) return { ok: false as const, code: error.code, details: error.details };
      return { ok: false as const, code: `UNEXPECTED: ${(error as Error).message}` };
    },
  );

describe('withdrawals under concurrency (real PostgreSQL)', () => {
  let service: TestService;
  let services: WithdrawalServices;
  let reference = 0;

  const request = (amount: bigint = AMOUNT, overrides: Partial<{ reference: string }> = {}) => ({
    chainId: 'eip155:1',
    tokenId: ETH,
    amount: amount.toString(),
    recipient: RECIPIENT,
    reference: overrides.reference ?? `race-${++reference}`,
  });

  const organization = async (name: string, usernames: string[], minWithdrawalSigners: number, funded: bigint) => {
    const created = await service.bootstrap(name, usernames, { minWithdrawalSigners });
    const orgId = created.organization.id;
    await fundLedger(service, orgId, 'eip155:1', funded);
    await fundGasWallet(service, created.apiKey, orgId, 'eip155:1', 10n ** 16n);
    return { orgId, users: created.users };
  };

  beforeAll(async () => {
    service = await startTestService({ DEVNET_BLOCK_TIME_MS: '3600000' });
    await stopWithdrawalProcessors(service);
    services = withdrawalServicesOf(service);
  });
  afterAll(async () => service.stop());

  it('100 concurrent creates that together exceed the balance: exactly the affordable ones succeed, none negative, no other error', async () => {
    const affordable = 37n;
    const funded = affordable * AMOUNT + AMOUNT / 2n;
    const { orgId, users } = await organization('Crowd', ['crowd-initiator'], 1, funded);
    const caller = { orgId, userId: users[0]!.id };
    const outcomes = await Promise.all(Array.from({ length: 100 }, () => settle(createWithdrawal(services, caller, request(), { actor: caller.userId }))));
    const codes = outcomes.map((outcome) => (outcome.ok ? 'created' : outcome.code));
    expect(codes.filter((code) => code === 'created')).toHaveLength(Number(affordable));
    expect(codes.filter((code) => code === 'INSUFFICIENT_BALANCE')).toHaveLength(100 - Number(affordable));
    expect(await ledgerBalances(service, orgId, ETH)).toEqual({ available: AMOUNT / 2n, pending: 0n, held: affordable * AMOUNT });
    // every hold in the ledger belongs to one created withdrawal, and each is there once
    const ledger = await service.infrastructure.store.readStream(streams.ledger(orgId, ETH));
    const heldFor = ledger.filter((event) => event.type === 'FundsHeld').map((event) => (event.data as { withdrawalId: string }).withdrawalId);
    const created = outcomes.flatMap((outcome) => (outcome.ok ? [(outcome.value as { id: string }).id] : []));
    expect(heldFor.sort()).toEqual(created.sort());
  });

  it('20 parallel creates with one reference: one is created, 19 are DUPLICATE_REFERENCE naming it', async () => {
    const { orgId, users } = await organization('Twins', ['twins-initiator'], 1, 100n * AMOUNT);
    const caller = { orgId, userId: users[0]!.id };
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => settle(createWithdrawal(services, caller, request(AMOUNT, { reference: 'the-one' }), { actor: caller.userId }))));
    const created = outcomes.filter((outcome) => outcome.ok);
    expect(created).toHaveLength(1);
    const id = (created[0]!.value as { id: string }).id;
    expect(outcomes.filter((outcome) => !outcome.ok)).toEqual(Array.from({ length: 19 }, () => ({ ok: false, code: 'DUPLICATE_REFERENCE', details: { withdrawalId: id, reference: 'the-one' } })));
    expect(await ledgerBalances(service, orgId, ETH)).toEqual({ available: 99n * AMOUNT, pending: 0n, held: AMOUNT });
  });

  it('50 parallel approve + cancel pairs on 2-signer withdrawals: each ends as its events say, and the balance is conserved', async () => {
    const pairs = 50;
    const funded = 60n * AMOUNT;
    const approvers = Array.from({ length: pairs }, (_, i) => `approver-${i}`);
    const { orgId, users } = await organization('Duel', ['duel-initiator', ...approvers], 2, funded);
    const initiator = { orgId, userId: users[0]!.id };
    const ids: string[] = [];
    for (let i = 0; i < pairs; i++) ids.push((await createWithdrawal(services, initiator, request(), { actor: initiator.userId })).id);
    expect(await ledgerBalances(service, orgId, ETH)).toEqual({ available: funded - 50n * AMOUNT, pending: 0n, held: 50n * AMOUNT });

    service.advance(30_000);
    const now = service.now();
    const results = await Promise.all(
      ids.map(async (id, i) => {
        const approver = users[i + 1]!;
        const [approval, cancellation] = await Promise.all([
          settle(approveWithdrawal(services, { orgId, userId: approver.id }, id, totpCode(approver.totpSecret, now), { actor: approver.id })),
          settle(cancelWithdrawal(services, initiator, id, { actor: initiator.userId })),
        ]);
        return { id, approver: approver.id, approval, cancellation };
      }),
    );

    for (const { id, approver, approval, cancellation } of results) {
      const events = (await service.infrastructure.store.readStream(streams.withdrawal(id))).map((event) => event.type);
      // the cancel always wins in the end (Pending and PendingApproval can both be cancelled)
      expect(cancellation).toMatchObject({ ok: true, value: { status: 'Cancelled', txnError: 'Cancelled by duel-initiator' } });
      if (approval.ok) {
        expect(events).toEqual(['WithdrawalRequested', 'WithdrawalApproved', 'WithdrawalCancelled']);
        expect(approval.value).toMatchObject({ status: 'Pending', approvers: [initiator.userId, approver] });
      } else {
        expect(approval).toEqual({ ok: false, code: 'WITHDRAWAL_ALREADY_PROCESSED', details: { withdrawalId: id, status: 'Cancelled' } });
        expect(events).toEqual(['WithdrawalRequested', 'WithdrawalCancelled']);
      }
    }
    const ledger = await service.infrastructure.store.readStream(streams.ledger(orgId, ETH));
    expect(ledger.filter((event) => event.type === 'HoldReleased')).toHaveLength(pairs);
    const balances = await ledgerBalances(service, orgId, ETH);
    expect(balances).toEqual({ available: funded, pending: 0n, held: 0n });
    expect(balances.available + balances.held).toBe(funded);
  });
});
