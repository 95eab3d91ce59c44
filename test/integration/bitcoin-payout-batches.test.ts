import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cancelWithdrawal } from '../../src/application/withdrawals.js';
import { withdrawalHistory } from '../../src/audit/withdrawal-history.js';
import { devnetDb } from '../../src/chains/devnet/index.js';
import type { ChainGateway } from '../../src/chains/gateway.js';
import { BIP125_REPLACEABLE_SEQUENCE } from '../../src/chains/bitcoin/replace-by-fee.js';
import { findChain } from '../../src/catalog/registry.js';
import { nativeToken } from '../../src/catalog/tokens.js';
import { streamCategories } from '../../src/domain/streams.js';
import type { WithdrawalRecord } from '../../src/domain/withdrawal/withdrawal.js';
import { DomainError } from '../../src/errors.js';
import { DEFAULT_REPLACE_AFTER_BLOCKS } from '../../src/processes/withdrawal-processor/replacement.js';
import type { WithdrawalProcessingServices } from '../../src/processes/withdrawal-processor/services.js';
import { bitcoinWalletsOf } from '../../src/processes/withdrawal-processor/transactions.js';
import { externalAddress, startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';

const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';
const bitcoin = findChain(BITCOIN)!;
const btc = nativeToken(BITCOIN);
/** above the devnet's 10 sat/vB estimate: a batch paying it stays in the mempool while blocks go by */
const RISEN_FEE_RATE = 11n;

/**
 * Bitcoin payout batches through the withdrawal processor on the devnet (blocks are mined only by
 * the test): the withdrawals waiting when the processor passes are paid by one transaction,
 * recorded before it is sent, and settled each by the rule that settles one paid alone.
 */
describe('withdrawal processor: Bitcoin payout batches', () => {
  let fixture: ChainWorkerFixture;

  beforeAll(async () => {
    fixture = await startChainWorkerFixture('bitcoin_payout_batches', { projections: 'running', referencePrefix: 'batch' });
  });
  afterAll(async () => {
    fixture?.devnet.controls(BITCOIN).setMinimumMinedFeeRate(null);
    await fixture?.stop();
  });
  beforeEach(() => fixture.devnet.controls(BITCOIN).setMinimumMinedFeeRate(null));

  const services = (overrides: Partial<WithdrawalProcessingServices> = {}) => fixture.workerServices(BITCOIN, overrides);
  const processor = (overrides: Partial<WithdrawalProcessingServices> = {}) => fixture.withdrawalProcessor(BITCOIN, overrides);
  const ledger = () => fixture.ledger(btc.id);
  const gateway = () => fixture.devnet.gateway(BITCOIN);
  const withdrawal = async (id: string): Promise<WithdrawalRecord> => {
    const state = await fixture.withdrawal(id);
    if (state.status === 'None') throw new Error(`no withdrawal ${id}`);
    return state;
  };
  const fund = async (...amounts: bigint[]) => {
    for (const amount of amounts) await fixture.credit(BITCOIN, 'native', amount);
  };
  /** `count` withdrawals of distinct amounts to distinct recipients */
  const withdrawMany = async (count: number, base: bigint) => {
    const created: WithdrawalRecord[] = [];
    for (let index = 0; index < count; index++) created.push(await fixture.withdraw({ chainId: BITCOIN, tokenId: btc.id, amount: base + BigInt(index), recipient: externalAddress(BITCOIN) }));
    return created;
  };
  /** what the organization's Bitcoin addresses hold on chain */
  const onChain = async () => {
    const { byAddress } = await bitcoinWalletsOf(services(), fixture.orgId);
    return (await gateway().unspentOutputs([...byAddress.keys()])).reduce((total, output) => total + output.amount, 0n);
  };
  /** every transfer to a recipient the devnet ever accepted, with its transaction's status there */
  const paymentsTo = async (recipient: string) => {
    const { rows } = await sql<{ hash: string; status: string; amount: string }>`
      select x.hash, x.status, t.amount from devnet_transfers t join devnet_transactions x on x.chain_id = t.chain_id and x.hash = t.tx_hash
       where t.chain_id = ${BITCOIN} and t.to_address = ${recipient} order by x.seq`.execute(devnetDb(fixture.infrastructure.db));
    return rows;
  };
  const batchEvents = () => fixture.infrastructure.store.readAll({ afterPosition: 0n, filter: { categories: [streamCategories.payoutBatch] } });
  /** passes and confirmations until every withdrawal is Completed, Failed or Cancelled */
  const settleAll = async (worker: ReturnType<typeof processor>, ids: readonly string[]) => {
    for (let pass = 0; ; pass++) {
      const states = await Promise.all(ids.map(withdrawal));
      if (states.every(({ status }) => ['Completed', 'Failed', 'Cancelled'].includes(status))) return states;
      if (pass > 10) throw new Error(`not settled: ${states.map(({ status }) => status).join(', ')}`);
      await worker.runPass();
      await fixture.mineConfirmations(BITCOIN);
    }
  };
  /** a processor crashing right after it appended an event of that type */
  const crashAfter = (eventType: string) => (type: string) => {
    if (type === eventType) throw new Error('crash');
  };
  const sum = (amounts: readonly bigint[]) => amounts.reduce((total, amount) => total + amount, 0n);
  const mined = async (txHash: string) => {
    const status = await gateway().transactionStatus(txHash);
    if (status.status !== 'confirmed') throw new Error(`${txHash} is ${status.status}`);
    return status;
  };

  it('100 withdrawals queued: one transaction pays them all, each recipient once; the ledger equals the chain to the satoshi', async () => {
    await fund(2_000_000n, 2_000_000n, 2_000_000n);
    const ledgerBefore = await ledger();
    const chainBefore = await onChain();
    const created = await withdrawMany(100, 50_000n);
    const worker = processor();

    await worker.runPass();
    const sent = await Promise.all(created.map(({ id }) => withdrawal(id)));
    const hashes = new Set(sent.map((one) => one.signedTransaction?.txHash));
    expect(hashes.size).toBe(1);
    const txHash = sent[0]!.signedTransaction!.txHash;
    // recorded, sent, and every withdrawal Processing with the batch's hash
    expect(sent.every((one) => one.status === 'Processing' && one.txnHash === txHash)).toBe(true);
    expect(await gateway().transactionStatus(txHash)).toEqual({ status: 'pending' });
    const shares = sent.map((one) => BigInt(one.signedTransaction!.fee));
    const batchFee = BigInt(sent[0]!.signedTransaction!.batch!.fee);
    expect(sum(shares)).toBe(batchFee);
    // held: every amount and every share, nothing more
    const amounts = sum(created.map(({ amount }) => BigInt(amount)));
    expect(await ledger()).toMatchObject({ held: ledgerBefore.held + amounts + batchFee, available: ledgerBefore.available - amounts - batchFee });

    await fixture.mineConfirmations(BITCOIN);
    await worker.runPass();
    const done = await Promise.all(created.map(({ id }) => withdrawal(id)));
    expect(done.every((one) => one.status === 'Completed' && one.txnHash === txHash)).toBe(true);
    const chainFee = (await mined(txHash)).fee;
    expect(sum(done.map((one) => BigInt(one.fee!)))).toBe(chainFee);
    expect(chainFee).toBe(batchFee);
    for (const one of done) {
      expect((await paymentsTo(one.recipient)).map(({ hash, amount }) => ({ hash, amount }))).toEqual([{ hash: txHash, amount: one.amount }]);
    }
    const after = await ledger();
    expect(after).toMatchObject({ held: ledgerBefore.held, available: ledgerBefore.available - amounts - chainFee });
    expect((await onChain()) - chainBefore).toBe(after.available + after.held - ledgerBefore.available - ledgerBefore.held);

    // one batch stream; each withdrawal's history shows the batch's transaction and its share
    expect((await batchEvents()).filter(({ data }) => data.txHash === txHash).map(({ type }) => type)).toEqual(['PayoutBatchSigned']);
    const history = await withdrawalHistory(fixture.infrastructure.store, fixture.orgId, created[7]!.id);
    expect(history.map(({ type }) => type)).toEqual(['WithdrawalRequested', 'WithdrawalTransactionSigned', 'WithdrawalBroadcast', 'WithdrawalCompleted']);
    expect(history[1]!.data).toMatchObject({ txHash, fee: done[7]!.fee, batch: { fee: chainFee.toString(), size: 100, outputIndex: 7 } });
  });

  it('a crash between recording the batch and sending it: the restart sends the recorded bytes, never a second batch', async () => {
    await fund(300_000n);
    const ledgerBefore = await ledger();
    const created = await withdrawMany(5, 50_000n);
    expect(await processor({ faults: { afterRecord: crashAfter('PayoutBatchSigned') } }).runPass()).toMatchObject({ failed: 1 });
    const recorded = await Promise.all(created.map(({ id }) => withdrawal(id)));
    const txHash = recorded[0]!.signedTransaction!.txHash;
    expect(recorded.every((one) => one.status === 'Pending' && one.signedTransaction?.txHash === txHash)).toBe(true);
    expect(await gateway().transactionStatus(txHash)).toEqual({ status: 'not_found' }); // never sent
    const batchesBefore = (await batchEvents()).length;

    const done = await settleAll(processor(), created.map(({ id }) => id)); // the restart
    expect(done.every((one) => one.status === 'Completed' && one.txnHash === txHash)).toBe(true);
    expect((await batchEvents()).length).toBe(batchesBefore);
    for (const one of done) expect((await paymentsTo(one.recipient)).map(({ hash }) => hash)).toEqual([txHash]);
    const chainFee = (await mined(txHash)).fee;
    expect(await ledger()).toMatchObject({ held: ledgerBefore.held, available: ledgerBefore.available - sum(created.map(({ amount }) => BigInt(amount))) - chainFee });
  });

  it('a batch whose input another transaction spent: every withdrawal of it Failed once that is at depth, all it held released, nothing paid', async () => {
    await fund(200_000n);
    const ledgerBefore = await ledger();
    const created = await withdrawMany(3, 50_000n);
    await processor({ faults: { afterRecord: crashAfter('PayoutBatchSigned') } }).runPass();
    const signed = (await withdrawal(created[0]!.id)).signedTransaction!;
    // before it is sent, the organization's key spends its input elsewhere (another wallet of the same keys, say)
    const input = signed.inputs![0]!;
    const { byAddress } = await bitcoinWalletsOf(services(), fixture.orgId);
    const elsewhere = fixture.infrastructure.signer!.signBitcoinTransfer(
      bitcoin,
      [{ wallet: byAddress.get(input.address)!, txHash: input.txHash, index: input.index, amount: BigInt(input.amount), sequence: BIP125_REPLACEABLE_SEQUENCE }],
      [{ address: externalAddress(BITCOIN), amount: BigInt(input.amount) - 5_000n }],
    );
    await gateway().broadcast(elsewhere.raw);
    await fixture.mineConfirmations(BITCOIN);

    const done = await settleAll(processor(), created.map(({ id }) => id));
    expect(done.map(({ status }) => status)).toEqual(['Failed', 'Failed', 'Failed']);
    expect(done[0]!.txnError).toContain('it can never be mined');
    for (const one of done) expect(await paymentsTo(one.recipient)).toEqual([]);
    expect(await gateway().transactionStatus(signed.txHash)).toEqual({ status: 'not_found' });
    // the hold (amounts and fee shares) released; no fee charged: the batch never reached a block
    expect(await ledger()).toMatchObject({ held: ledgerBefore.held, available: ledgerBefore.available });
  });

  it('a stuck batch is replaced by fee for all its withdrawals at once; the replacement mined completes each, its shares charged', async () => {
    await fund(400_000n);
    const ledgerBefore = await ledger();
    const created = await withdrawMany(4, 50_000n);
    fixture.devnet.controls(BITCOIN).setMinimumMinedFeeRate(RISEN_FEE_RATE);
    const worker = processor();
    await worker.runPass();
    const original = (await withdrawal(created[0]!.id)).signedTransaction!;
    await fixture.devnet.controls(BITCOIN).mine(DEFAULT_REPLACE_AFTER_BLOCKS);
    await worker.runPass();
    const replaced = await Promise.all(created.map(({ id }) => withdrawal(id)));
    const replacement = replaced[0]!.signedTransaction!;
    expect(replacement.txHash).not.toBe(original.txHash);
    for (const one of replaced) {
      expect(one).toMatchObject({ status: 'Processing', txnHash: replacement.txHash, replacedTransactions: [{ txHash: original.txHash }] });
      expect(BigInt(one.signedTransaction!.fee)).toBeGreaterThan(BigInt(one.replacedTransactions![0]!.fee));
    }
    const newFee = BigInt(replacement.batch!.fee);
    expect(newFee).toBeGreaterThan(BigInt(original.batch!.fee));
    expect(sum(replaced.map((one) => BigInt(one.signedTransaction!.fee)))).toBe(newFee);
    const amounts = sum(created.map(({ amount }) => BigInt(amount)));
    // the hold rose to the higher fee, whichever of the two is mined
    expect(await ledger()).toMatchObject({ held: ledgerBefore.held + amounts + newFee });
    expect((await batchEvents()).filter(({ data }) => data.txHash === replacement.txHash).map(({ type }) => type)).toEqual(['PayoutBatchReplaced']);

    fixture.devnet.controls(BITCOIN).setMinimumMinedFeeRate(null);
    const done = await settleAll(worker, created.map(({ id }) => id));
    expect(done.every((one) => one.status === 'Completed' && one.txnHash === replacement.txHash)).toBe(true);
    const chainFee = (await mined(replacement.txHash)).fee;
    expect(chainFee).toBe(newFee);
    expect(sum(done.map((one) => BigInt(one.fee!)))).toBe(chainFee);
    for (const one of done) {
      expect((await paymentsTo(one.recipient)).map(({ hash, status }) => ({ hash, status }))).toEqual([
        { hash: original.txHash, status: 'dropped' },
        { hash: replacement.txHash, status: 'mined' },
      ]);
    }
    expect(await ledger()).toMatchObject({ held: ledgerBefore.held, available: ledgerBefore.available - amounts - chainFee });
  });

  it('the original batch mined before its recorded replacement was sent completes each withdrawal with the original and its shares', async () => {
    await fund(400_000n);
    const ledgerBefore = await ledger();
    const created = await withdrawMany(3, 50_000n);
    fixture.devnet.controls(BITCOIN).setMinimumMinedFeeRate(RISEN_FEE_RATE);
    await processor().runPass();
    const original = (await withdrawal(created[0]!.id)).signedTransaction!;
    await fixture.devnet.controls(BITCOIN).mine(DEFAULT_REPLACE_AFTER_BLOCKS);
    await processor({ faults: { afterRecord: crashAfter('PayoutBatchReplaced') } }).runPass();
    const recorded = (await withdrawal(created[0]!.id)).signedTransaction!;
    expect(recorded.txHash).not.toBe(original.txHash);
    expect(await gateway().transactionStatus(recorded.txHash)).toEqual({ status: 'not_found' });

    fixture.devnet.controls(BITCOIN).setMinimumMinedFeeRate(null); // the fee market falls back: the original is mined
    await fixture.mineConfirmations(BITCOIN);
    const done = await settleAll(processor(), created.map(({ id }) => id));
    expect(done.every((one) => one.status === 'Completed' && one.txnHash === original.txHash)).toBe(true);
    const chainFee = (await mined(original.txHash)).fee;
    expect(sum(done.map((one) => BigInt(one.fee!)))).toBe(chainFee);
    for (const one of done) expect((await paymentsTo(one.recipient)).map(({ hash, status }) => ({ hash, status }))).toEqual([{ hash: original.txHash, status: 'mined' }]);
    expect(await gateway().transactionStatus(recorded.txHash)).toEqual({ status: 'not_found' });
    const amounts = sum(created.map(({ amount }) => BigInt(amount)));
    expect(await ledger()).toMatchObject({ held: ledgerBefore.held, available: ledgerBefore.available - amounts - chainFee });
  });

  it('a withdrawal cancelled after the batch was signed and before it was recorded: the batch is dropped unsent, the next one pays the others', async () => {
    await fund(300_000n);
    const ledgerBefore = await ledger();
    const created = await withdrawMany(4, 60_000n);
    const victim = created[1]!;
    let cancelled = false;
    // the cancellation lands while the batch is being signed: after its withdrawals were read, before its record
    const racing: ChainGateway = {
      ...gateway(),
      head: async () => {
        if (!cancelled) {
          cancelled = true;
          await cancelWithdrawal(fixture.withdrawalServices(), { orgId: fixture.orgId, userId: fixture.userId }, victim.id, { actor: 'test' });
        }
        return gateway().head();
      },
    };
    const worker = processor({ gateway: racing });
    await worker.runPass();
    expect(cancelled).toBe(true);
    expect(await withdrawal(victim.id)).toMatchObject({ status: 'Cancelled', signedTransaction: null });

    const done = await settleAll(worker, created.map(({ id }) => id));
    const others = done.filter(({ id }) => id !== victim.id);
    expect(others.every((one) => one.status === 'Completed')).toBe(true);
    expect(new Set(others.map((one) => one.txnHash)).size).toBe(1);
    expect(await paymentsTo(victim.recipient)).toEqual([]);
    for (const one of others) expect((await paymentsTo(one.recipient)).map(({ status }) => status)).toEqual(['mined']);
    const chainFee = (await mined(others[0]!.txnHash!)).fee;
    const paid = sum(others.map(({ amount }) => BigInt(amount)));
    expect(await ledger()).toMatchObject({ held: ledgerBefore.held, available: ledgerBefore.available - paid - chainFee });
  });

  it('a withdrawal in a recorded batch cannot be cancelled: refused, it is paid with the others', async () => {
    await fund(300_000n);
    const created = await withdrawMany(3, 70_000n);
    await processor({ faults: { afterRecord: crashAfter('PayoutBatchSigned') } }).runPass(); // recorded, not sent: the bytes may be on their way all the same
    const refused = await cancelWithdrawal(fixture.withdrawalServices(), { orgId: fixture.orgId, userId: fixture.userId }, created[0]!.id, { actor: 'test' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'WITHDRAWAL_NOT_PENDING' });
    const done = await settleAll(processor(), created.map(({ id }) => id));
    expect(done.map(({ status }) => status)).toEqual(['Completed', 'Completed', 'Completed']);
    expect(new Set(done.map((one) => one.txnHash)).size).toBe(1);
    expect(bitcoin.properties.confirmations).toBeGreaterThan(0);
  });
});
