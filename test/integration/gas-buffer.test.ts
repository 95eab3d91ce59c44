import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAggregate } from '../../src/application/command-handler.js';
import { loadGasBuffer } from '../../src/application/gas-buffers.js';
import { devnetDb } from '../../src/chains/devnet/index.js';
import { EVM_BASE_FEE_PER_GAS, EVM_NATIVE_TRANSFER_GAS, EVM_PRIORITY_FEE_PER_GAS, EVM_TOKEN_TRANSFER_GAS } from '../../src/chains/devnet/fees.js';
import { findToken, nativeToken } from '../../src/catalog/tokens.js';
import { gasTopUpDecider } from '../../src/domain/gas-top-up/gas-top-up.js';
import type { GasBufferEvent } from '../../src/domain/gas-buffer/gas-buffer.js';
import { streams } from '../../src/domain/streams.js';
import type { WithdrawalRecord } from '../../src/domain/withdrawal/withdrawal.js';
import { advanceWithdrawal } from '../../src/processes/withdrawal-processor/advance.js';
import type { GasBufferPolicy } from '../../src/processes/withdrawal-processor/services.js';
import { externalAddress, startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';

const ETHEREUM = 'eip155:1';
const USDT = findToken('eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7')!;
const ETH = nativeToken(ETHEREUM);
const PER_GAS = EVM_BASE_FEE_PER_GAS + EVM_PRIORITY_FEE_PER_GAS;
/** the devnet's fee of a USDT transfer and of an ETH transfer: what each withdrawal draws and what the chain takes */
const TOKEN_FEE = EVM_TOKEN_TRANSFER_GAS * PER_GAS;
const NATIVE_FEE = EVM_NATIVE_TRANSFER_GAS * PER_GAS;
const GAS_WALLET_FUNDS = 10n ** 17n; // 0.1 ETH

/**
 * The settlement wallets' gas buffer over the devnet: one top-up from the gas wallet pays for many
 * withdrawals, each withdrawal draws its fee from the buffer's account before it is signed, and the
 * ledger still equals the chain to the wei (the gas wallet, the settlement wallet, every fee).
 */
describe('the gas buffer of a settlement wallet', () => {
  let fixture: ChainWorkerFixture;
  let settlementAddress: string;
  let gasAddress: string;

  beforeAll(async () => {
    fixture = await startChainWorkerFixture('gas_buffer', { projections: 'none' });
    ({ settlementAddress, gasAddress } = (await fixture.wallets.walletsOf(fixture.orgId, ETHEREUM)) as { settlementAddress: string; gasAddress: string });
    await fixture.devnet.controls(ETHEREUM).deposit({ toAddress: gasAddress, asset: 'native', amount: GAS_WALLET_FUNDS });
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  const gateway = () => fixture.devnet.gateway(ETHEREUM);
  const processor = (gasBuffer: GasBufferPolicy) => fixture.withdrawalProcessor(ETHEREUM, { gasBuffer });
  const buffer = async () => (await loadGasBuffer(fixture.infrastructure.store, ETHEREUM, fixture.orgId)).state;
  const bufferEvents = async () => (await fixture.infrastructure.store.readStream(streams.gasBuffer(ETHEREUM, fixture.orgId))).map((event) => ({ type: event.type, data: event.data }) as GasBufferEvent);
  const gasOf = async (id: string) => (await loadAggregate(fixture.infrastructure.store, streams.withdrawalGas(id), gasTopUpDecider)).state;
  const record = async (id: string): Promise<WithdrawalRecord> => {
    const state = await fixture.withdrawal(id);
    if (state.status === 'None') throw new Error(`no withdrawal ${id}`);
    return state;
  };
  /** the gas wallet's transactions the chain mined: what it paid, amounts and fees */
  const minedFromGasWallet = () => devnetDb(fixture.infrastructure.db).selectFrom('devnet_transactions').select(['hash', 'fee']).where('chain_id', '=', ETHEREUM).where('sender', '=', gasAddress).where('status', '=', 'mined').execute();
  const transfersTo = (recipient: string) =>
    devnetDb(fixture.infrastructure.db).selectFrom('devnet_transfers').select(['tx_hash', 'amount']).where('chain_id', '=', ETHEREUM).where('to_address', '=', recipient).execute();

  /**
   * The settlement wallet's ETH that is not the buffer's: the chain's balance less the account
   * (and less a top-up the chain took that the account has not looked at yet). Gas never comes
   * out of it; only an ETH withdrawal's amount does.
   */
  const outsideTheBuffer = async () => {
    const account = await buffer();
    const inFlight = account.topUp && (await gateway().transactionStatus(account.topUp.txHash)).status === 'confirmed' ? BigInt(account.topUp.amount) : 0n;
    return (await gateway().balance(settlementAddress, 'native')) - account.balance - inFlight;
  };

  /** passes, each followed by the chain's confirmations, until every one is Completed or Failed */
  const settleAll = async (gasBuffer: GasBufferPolicy, ids: readonly string[]) => {
    const worker = processor(gasBuffer);
    for (let pass = 0; ; pass++) {
      const states = await Promise.all(ids.map(record));
      if (states.every((state) => state.status === 'Completed' || state.status === 'Failed')) return states;
      if (pass > 10) throw new Error(`not settled after ${pass} passes: ${states.map((state) => state.status).join(', ')}`);
      await worker.runPass();
      await fixture.mineConfirmations(ETHEREUM);
    }
  };

  const fundUsdt = async (amount: bigint) => {
    await fixture.credit(ETHEREUM, USDT.address, amount);
    await fixture.devnet.controls(ETHEREUM).deposit({ toAddress: settlementAddress, asset: USDT.address, amount });
  };
  const withdrawUsdt = async (count: number, amount: bigint) => {
    const created: { id: string; recipient: string }[] = [];
    for (let index = 0; index < count; index++) {
      const recipient = externalAddress(ETHEREUM);
      created.push({ id: (await fixture.withdraw({ chainId: ETHEREUM, tokenId: USDT.id, amount, recipient })).id, recipient });
    }
    return created;
  };

  it('a crash between recording a buffer top-up and sending it: the next pass sends the recorded bytes; one top-up, the withdrawal paid once', async () => {
    // an empty buffer, topped up for exactly this payment: it is drawn to nothing
    const policy = { payments: 1, lowWaterPayments: 0 };
    expect(await buffer()).toEqual({ balance: 0n, topUp: null });
    expect((await buffer()).topUp).toBeNull();
    await fundUsdt(2_000_000n);
    const [created] = await withdrawUsdt(1, 2_000_000n);
    const minedBefore = (await minedFromGasWallet()).length;

    const crash = (type: string) => {
      if (type === 'GasBufferTopUpSigned') throw new Error('crash');
    };
    await expect(advanceWithdrawal(fixture.workerServices(ETHEREUM, { gasBuffer: policy, faults: { afterRecord: crash } }), created!.id)).rejects.toThrow('crash');
    const recorded = (await buffer()).topUp!;
    expect(recorded).not.toBeNull();
    expect(await gateway().transactionStatus(recorded.txHash)).toEqual({ status: 'not_found' });
    expect((await record(created!.id)).signedTransaction).toBeNull();

    const [settled] = await settleAll(policy, [created!.id]);
    expect(settled).toMatchObject({ status: 'Completed' });
    expect(await transfersTo(created!.recipient)).toEqual([{ tx_hash: settled!.txnHash, amount: '2000000' }]);
    // the recorded bytes were sent and mined: one top-up, never a second for the crash
    const mined = await minedFromGasWallet();
    expect(mined).toHaveLength(minedBefore + 1);
    expect(mined.map((row) => row.hash)).toContain(recorded.txHash);
    const confirmed = (await bufferEvents()).filter((event) => event.type === 'GasBufferTopUpConfirmed' && event.data.txHash === recorded.txHash);
    expect(confirmed).toHaveLength(1);
  });

  it('a buffer too small for the next payment, its top-up in flight: the payment waits for it, never signed before its gas is there', async () => {
    const policy = { payments: 2, lowWaterPayments: 2 };
    expect(await buffer()).toEqual({ balance: 0n, topUp: null }); // the crash's top-up paid for exactly its withdrawal
    // the ETH of the organization's withdrawal, credited and in the settlement wallet
    await fixture.credit(ETHEREUM, 'native', 10n ** 16n);
    await fixture.devnet.controls(ETHEREUM).deposit({ toAddress: settlementAddress, asset: 'native', amount: 10n ** 16n });
    const outsideBefore = await outsideTheBuffer();
    const ethBefore = await fixture.ledger(ETH.id);
    const worker = processor(policy);

    // an ETH withdrawal on an empty buffer: a top-up for two ETH transfers, which it waits for
    const eth = await fixture.withdraw({ chainId: ETHEREUM, tokenId: ETH.id, amount: 10n ** 15n, recipient: externalAddress(ETHEREUM) });
    await worker.runPass();
    expect((await record(eth.id)).signedTransaction).toBeNull();
    const first = (await buffer()).topUp!;
    expect(BigInt(first.amount)).toBe(2n * NATIVE_FEE);
    await fixture.mineConfirmations(ETHEREUM);

    // it draws one fee, which leaves the account under its mark: the next top-up goes out beside its payment.
    // A USDT withdrawal then needs more than the account holds while that top-up is unmined: it waits, unsigned
    await fundUsdt(1_000_000n);
    const [usdt] = await withdrawUsdt(1, 1_000_000n);
    await worker.runPass();
    expect(await record(eth.id)).toMatchObject({ status: 'Processing' });
    expect((await gasOf(eth.id)).drawn).toBe(NATIVE_FEE);
    const second = (await buffer()).topUp!;
    expect(second).not.toBeNull();
    expect(second.txHash).not.toBe(first.txHash);
    expect(await buffer()).toMatchObject({ balance: NATIVE_FEE });
    expect(BigInt(second.amount)).toBe(NATIVE_FEE); // back to two payments' worth
    expect(await record(usdt!.id)).toMatchObject({ status: 'Pending' });
    expect((await record(usdt!.id)).signedTransaction).toBeNull();
    expect((await gasOf(usdt!.id)).drawn).toBe(0n);
    await worker.runPass(); // unmined still: the same top-up followed, no other sent
    expect((await buffer()).topUp?.txHash).toBe(second.txHash);
    expect((await record(usdt!.id)).signedTransaction).toBeNull();

    const states = await settleAll(policy, [eth.id, usdt!.id]);
    expect(states.map((state) => state.status)).toEqual(['Completed', 'Completed']);
    expect((await gasOf(usdt!.id)).drawn).toBe(TOKEN_FEE);
    // the ETH withdrawal's amount is all that left the settlement wallet outside the buffer; its ledger lost the amount alone
    expect(await outsideTheBuffer()).toBe(outsideBefore - 10n ** 15n);
    expect(await fixture.ledger(ETH.id)).toMatchObject({ available: ethBefore.available - 10n ** 15n, held: ethBefore.held });
  });

  it('30 USDT withdrawals of one organization: a few top-ups pay all their gas, each paid once, the ledger equal to the chain to the wei', async () => {
    const policy = { payments: 12, lowWaterPayments: 3 };
    await fundUsdt(30n * 1_000_000n);
    const ledgerBefore = await fixture.ledger(USDT.id);
    const usdtBefore = await gateway().balance(settlementAddress, USDT.address);
    const gasWalletBefore = await gateway().balance(gasAddress, 'native');
    const outsideBefore = await outsideTheBuffer();
    const eventsBefore = (await bufferEvents()).length;
    const minedBefore = new Set((await minedFromGasWallet()).map((row) => row.hash));

    const created = await withdrawUsdt(30, 1_000_000n);
    const states = await settleAll(policy, created.map(({ id }) => id));
    expect(states.map((state) => state.status)).toEqual(created.map(() => 'Completed'));

    // each recipient paid once, by its withdrawal's own transaction, whose fee it drew from the buffer
    for (const [index, { id, recipient }] of created.entries()) {
      expect(await transfersTo(recipient)).toEqual([{ tx_hash: states[index]!.txnHash, amount: '1000000' }]);
      expect(await gasOf(id)).toMatchObject({ status: 'None', count: 0, drawn: TOKEN_FEE });
      expect(states[index]!.fee).toBe(TOKEN_FEE.toString());
    }
    // far fewer top-ups than withdrawals: 12 payments each, the next sent when 3 were left
    const topUps = (await bufferEvents()).slice(eventsBefore).filter((event) => event.type === 'GasBufferTopUpSigned');
    expect(topUps.length).toBeGreaterThanOrEqual(3);
    expect(topUps.length).toBeLessThanOrEqual(5);
    const draws = (await bufferEvents()).slice(eventsBefore).filter((event) => event.type === 'GasBufferDrawn');
    expect(draws.map((event) => event.data.withdrawalId).sort()).toEqual(created.map(({ id }) => id).sort());

    // the ledger equals the chain: the organization's USDT moved by the amounts alone ...
    expect(await fixture.ledger(USDT.id)).toMatchObject({ available: ledgerBefore.available - 30_000_000n, held: ledgerBefore.held });
    expect(await gateway().balance(settlementAddress, USDT.address)).toBe(usdtBefore - 30_000_000n);
    // ... the settlement wallet's ETH outside the buffer did not move: every fee came out of the buffer's account ...
    expect(await outsideTheBuffer()).toBe(outsideBefore);
    // ... and the gas wallet paid exactly the top-ups it sent and their fees
    const mined = (await minedFromGasWallet()).filter((row) => !minedBefore.has(row.hash));
    const minedTopUps = topUps.filter((event) => mined.some((row) => row.hash === (event.data as { step: { txHash: string } }).step.txHash));
    const paid = minedTopUps.reduce((sum, event) => sum + BigInt((event.data as { step: { amount: string } }).step.amount), 0n) + mined.reduce((sum, row) => sum + BigInt(row.fee), 0n);
    expect(mined).toHaveLength(minedTopUps.length);
    expect(await gateway().balance(gasAddress, 'native')).toBe(gasWalletBefore - paid);
  });

  it('an ETH withdrawal never pays its amount out of the buffer: with the organization\'s coins not yet in the wallet it waits for funds', async () => {
    // a buffer of 40 token transfers' gas: far more than the ETH the wallet lacks below
    const policy = { payments: 40, lowWaterPayments: 40 };
    await fundUsdt(1_000_000n);
    const [usdt] = await withdrawUsdt(1, 1_000_000n);
    expect((await settleAll(policy, [usdt!.id]))[0]!.status).toBe('Completed');
    const inWallet = await outsideTheBuffer();
    const lacking = 10n ** 15n;
    expect((await gateway().balance(settlementAddress, 'native')) - inWallet).toBeGreaterThan(lacking + NATIVE_FEE);

    // credited on the ledger, but its coins are not all in the settlement wallet yet (a sweep still to come)
    await fixture.credit(ETHEREUM, 'native', lacking);
    const created = await fixture.withdraw({ chainId: ETHEREUM, tokenId: ETH.id, amount: inWallet + lacking, recipient: externalAddress(ETHEREUM) });
    const worker = processor(policy);
    for (let pass = 0; pass < 3; pass++) {
      await worker.runPass();
      await fixture.mineConfirmations(ETHEREUM);
    }
    expect(await record(created.id)).toMatchObject({ status: 'Pending', signedTransaction: null });
    // the sweep arrives: it is paid, and the buffer keeps its own
    await fixture.devnet.controls(ETHEREUM).deposit({ toAddress: settlementAddress, asset: 'native', amount: lacking });
    const [settled] = await settleAll(policy, [created.id]);
    expect(settled).toMatchObject({ status: 'Completed' });
    expect(await outsideTheBuffer()).toBe(0n);
  });

  it('withdrawals whose settlement wallet already holds their gas are all sent in the first pass: no top-up to wait for', async () => {
    const policy = { payments: 40, lowWaterPayments: 0 };
    const amount = BigInt(ETH.properties.minimumWithdrawal);
    expect((await buffer()).balance).toBeGreaterThanOrEqual(20n * NATIVE_FEE);
    await fixture.credit(ETHEREUM, 'native', 20n * amount);
    await fixture.devnet.controls(ETHEREUM).deposit({ toAddress: settlementAddress, asset: 'native', amount: 20n * amount });
    const topUpsBefore = (await bufferEvents()).filter((event) => event.type === 'GasBufferTopUpSigned').length;
    const created: string[] = [];
    for (let index = 0; index < 20; index++) created.push((await fixture.withdraw({ chainId: ETHEREUM, tokenId: ETH.id, amount, recipient: externalAddress(ETHEREUM) })).id);
    await processor(policy).runPass();
    const sent = await Promise.all(created.map(record));
    expect(sent.map((state) => state.status)).toEqual(created.map(() => 'Processing'));
    expect((await bufferEvents()).filter((event) => event.type === 'GasBufferTopUpSigned')).toHaveLength(topUpsBefore);
    const states = await settleAll(policy, created);
    expect(states.map((state) => state.status)).toEqual(created.map(() => 'Completed'));
  });

  it('POST /withdrawals counts the buffer in its fee check: with the gas wallet emptied into it, a withdrawal it pays is taken; with neither, INSUFFICIENT_GAS', async () => {
    expect((await buffer()).balance).toBeGreaterThanOrEqual(TOKEN_FEE);
    await fundUsdt(1_000_000n);
    /** the devnet, but the gas wallet reads as empty */
    const emptyGasWallet = (chainId: string) => {
      const real = fixture.devnet.gateway(chainId);
      return { ...real, balance: async (address: string, asset: string) => (address === gasAddress ? 0n : real.balance(address, asset)) };
    };
    const request = { chainId: ETHEREUM, tokenId: USDT.id, amount: 1_000_000n, recipient: externalAddress(ETHEREUM) };
    await expect(fixture.withdraw(request, { gateways: emptyGasWallet })).resolves.toMatchObject({ status: 'Pending' });
    // on a chain where the organization has no buffer, the empty gas wallet alone decides
    const polygon = { chainId: 'eip155:137', tokenId: nativeToken('eip155:137').id, amount: BigInt(nativeToken('eip155:137').properties.minimumWithdrawal), recipient: externalAddress('eip155:137') };
    await fixture.credit('eip155:137', 'native', polygon.amount);
    await expect(fixture.withdraw(polygon, { gateways: emptyGasWallet })).rejects.toMatchObject({ code: 'INSUFFICIENT_GAS' });
  });

  it('a payment the node refuses, made impossible by a cancellation from the settlement wallet: the account is never above the gas the wallet holds, to the wei, across a crash after the draw and one after the cancellation is recorded', async () => {
    // no top-up after a draw: nothing but this payment and its cancellation moves the settlement wallet's ETH meanwhile
    const policy = { payments: 12, lowWaterPayments: 0 };
    if ((await buffer()).balance < TOKEN_FEE) {
      await fundUsdt(1_000_000n);
      const [warmUp] = await withdrawUsdt(1, 1_000_000n);
      expect((await settleAll(policy, [warmUp!.id]))[0]!.status).toBe('Completed');
    }
    expect((await buffer()).balance).toBeGreaterThanOrEqual(TOKEN_FEE);
    expect((await buffer()).topUp).toBeNull();
    await fundUsdt(1_000_000n);
    const outsideBefore = await outsideTheBuffer();
    const accountBefore = (await buffer()).balance;
    const [created] = await withdrawUsdt(1, 1_000_000n);

    // the process dies right after the draw is recorded, before anything is signed or sent
    const crashAfter = (eventType: string) => (type: string) => {
      if (type === eventType) throw new Error(`crash after ${eventType}`);
    };
    await expect(advanceWithdrawal(fixture.workerServices(ETHEREUM, { gasBuffer: policy, faults: { afterRecord: crashAfter('GasBufferDrawn') } }), created!.id)).rejects.toThrow('crash after GasBufferDrawn');
    expect((await buffer()).balance).toBe(accountBefore - TOKEN_FEE);
    expect((await record(created!.id)).signedTransaction).toBeNull();

    // the next look signs and sends the payment; the node refuses it (and every re-send of it): a cancellation (same nonce, a transfer of nothing to itself) is recorded, and the process dies before sending it
    await fixture.devnet.controls(ETHEREUM).setFault('broadcast_error', 1000);
    await expect(advanceWithdrawal(fixture.workerServices(ETHEREUM, { gasBuffer: policy, faults: { afterRecord: crashAfter('TransactionCancellationSigned') } }), created!.id)).rejects.toThrow(
      'crash after TransactionCancellationSigned',
    );
    const payment = (await record(created!.id)).signedTransaction!;
    expect(payment).not.toBeNull();
    const cancellations = await fixture.infrastructure.store.readStream(streams.cancellation(ETHEREUM, payment.txHash));
    expect(cancellations.map((event) => event.type)).toEqual(['TransactionCancellationSigned']);
    const cancellation = (cancellations[0]!.data as { cancellation: { txHash: string } }).cancellation;
    // drawn once, for the payment: neither crash drew again
    expect((await buffer()).balance).toBe(accountBefore - TOKEN_FEE);

    // the restart sends the recorded cancellation (a cancellation meets no fault); the chain mines it, and at depth the withdrawal fails
    // (this withdrawal alone: another test's withdrawal left open must not draw meanwhile)
    const services = fixture.workerServices(ETHEREUM, { gasBuffer: policy });
    let settled = await record(created!.id);
    try {
      for (let pass = 0; settled.status !== 'Failed' && settled.status !== 'Completed'; pass++) {
        if (pass > 10) throw new Error(`not settled after ${pass} passes: ${settled.status}`);
        await advanceWithdrawal(services, created!.id);
        await fixture.mineConfirmations(ETHEREUM);
        settled = await record(created!.id);
      }
    } finally {
      await fixture.devnet.controls(ETHEREUM).setFault('broadcast_error', 0);
    }
    expect(await gasOf(created!.id)).toMatchObject({ drawn: TOKEN_FEE });
    const mined = await devnetDb(fixture.infrastructure.db)
      .selectFrom('devnet_transactions')
      .select(['hash', 'fee'])
      .where('chain_id', '=', ETHEREUM)
      .where('hash', 'in', [payment.txHash, cancellation.txHash])
      .where('status', '=', 'mined')
      .execute();
    expect(mined).toHaveLength(1); // one nonce: one of them, never both
    const [taken] = mined;
    expect(taken!.hash).toBe(cancellation.txHash);
    expect(settled.status).toBe('Failed');
    // the cancellation costs 21,000 gas at the payment's fee caps: within what the payment drew
    expect(BigInt(taken!.fee)).toBe(EVM_NATIVE_TRANSFER_GAS * PER_GAS);
    expect((await buffer()).balance).toBe(accountBefore - TOKEN_FEE);
    // the account is below the gas the wallet holds by exactly what the draw did not spend: it erred low, never high
    expect(await outsideTheBuffer()).toBe(outsideBefore + TOKEN_FEE - BigInt(taken!.fee));
  });
});
