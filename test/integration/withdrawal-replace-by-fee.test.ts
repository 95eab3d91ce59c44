import { Transaction } from 'bitcoinjs-lib';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { advanceWithdrawal, type WithdrawalProcessingServices } from '../../src/processes/withdrawal-processor/advance.js';
import { withdrawalHistory } from '../../src/audit/withdrawal-history.js';
import { devnetDb, type Devnet } from '../../src/chains/devnet/index.js';
import { DEFAULT_REPLACE_AFTER_BLOCKS } from '../../src/processes/withdrawal-processor/replacement.js';
import { findChain } from '../../src/catalog/registry.js';
import { nativeToken } from '../../src/catalog/tokens.js';
import type { WithdrawalRecord } from '../../src/domain/withdrawal/withdrawal.js';
import type { Infrastructure } from '../../src/infrastructure.js';
import { externalAddress, startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';

const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';
const bitcoin = findChain(BITCOIN)!;
const btc = nativeToken(BITCOIN);
/** above the devnet's 10 sat/vB estimate: what the withdrawal pays stays in the mempool while blocks go by */
const RISEN_FEE_RATE = 11n;

/**
 * Replace-by-fee through the withdrawal processor on the devnet: the devnet's blocks leave out
 * transactions under a fee rate (a fee market that rose), so the withdrawal's transaction stays
 * unconfirmed; blocks are mined only by the test.
 */
describe('withdrawal processor: Bitcoin replace-by-fee', () => {
  let fixture: ChainWorkerFixture;
  let infrastructure: Infrastructure;
  let devnet: Devnet;
  let orgId: string;

  beforeAll(async () => {
    // the processor finds the organization's deposit addresses in the accounts read model
    fixture = await startChainWorkerFixture('withdrawal_rbf', { projections: 'running', referencePrefix: 'rbf' });
    ({ infrastructure, devnet, orgId } = fixture);
  });
  afterAll(async () => {
    devnet?.controls(BITCOIN).setMinimumMinedFeeRate(null);
    await fixture?.stop();
  });
  beforeEach(() => devnet.controls(BITCOIN).setMinimumMinedFeeRate(null));

  const processing = (overrides: Partial<WithdrawalProcessingServices> = {}) => fixture.workerServices(BITCOIN, overrides);
  const processor = (overrides: Partial<WithdrawalProcessingServices> = {}) => fixture.withdrawalProcessor(BITCOIN, overrides);
  const withdraw = (amount: bigint, recipient: string) => fixture.withdraw({ chainId: BITCOIN, tokenId: btc.id, amount, recipient });
  /** a deposit to a new user's address, mined, recorded, confirmed and credited */
  const deposit = async (amount: bigint) => {
    await fixture.credit(BITCOIN, 'native', amount);
    for (const runner of fixture.runners) await runner.catchUp();
  };
  const ledger = () => fixture.ledger(btc.id);
  const withdrawal = async (id: string): Promise<WithdrawalRecord> => {
    const state = await fixture.withdrawal(id);
    if (state.status === 'None') throw new Error(`no withdrawal ${id}`);
    return state;
  };
  const mine = (count: number) => devnet.controls(BITCOIN).mine(count);
  /** every transaction paying the recipient that the devnet ever accepted, with its status there */
  const paymentsTo = async (recipient: string) => {
    const { rows } = await sql<{ hash: string; status: string; amount: string }>`
      select x.hash, x.status, t.amount from devnet_transfers t join devnet_transactions x on x.chain_id = t.chain_id and x.hash = t.tx_hash
       where t.chain_id = ${BITCOIN} and t.to_address = ${recipient} order by x.seq`.execute(devnetDb(infrastructure.db));
    return rows;
  };
  const vsizeOf = (raw: string) => BigInt(Transaction.fromHex(raw).virtualSize());

  /** funds, a withdrawal broadcast at the devnet's estimate, kept unmined by a risen fee market */
  const stuckWithdrawal = async (amount: bigint) => {
    await deposit(amount + 50_000n);
    const before = await ledger();
    const recipient = externalAddress(BITCOIN);
    const created = await withdraw(amount, recipient);
    devnet.controls(BITCOIN).setMinimumMinedFeeRate(RISEN_FEE_RATE);
    await advanceWithdrawal(processing(), created.id);
    const sent = await withdrawal(created.id);
    expect(sent).toMatchObject({ status: 'Processing' });
    return { before, recipient, id: created.id, original: sent.signedTransaction! };
  };

  it('a withdrawal unconfirmed for 6 blocks is replaced by fee; the replacement confirms and completes it, paid once', async () => {
    const { before, recipient, id, original } = await stuckWithdrawal(70_000n);
    const worker = processor();
    await mine(DEFAULT_REPLACE_AFTER_BLOCKS - 1);
    await worker.runPass();
    expect(await withdrawal(id)).toMatchObject({ status: 'Processing', txnHash: original.txHash, signedTransaction: { txHash: original.txHash } });

    await mine(1);
    await worker.runPass();
    const replaced = await withdrawal(id);
    const replacement = replaced.signedTransaction!;
    expect(replacement.txHash).not.toBe(original.txHash);
    expect(replaced).toMatchObject({ status: 'Processing', txnHash: replacement.txHash, replacedTransactions: [{ txHash: original.txHash }] });
    // BIP125 rule 4: more than the original by 1 sat/vB of the replacement's own size (the devnet's
    // estimate did not rise), from the change; each of the replacement's signatures may be a byte
    // longer than the original's (a high R), so it pays for its own size, at most a vbyte an input more
    expect(BigInt(replacement.fee)).toBeGreaterThanOrEqual(BigInt(original.fee) + vsizeOf(replacement.raw));
    expect(BigInt(replacement.fee)).toBeLessThanOrEqual(BigInt(original.fee) + vsizeOf(original.raw) + BigInt(Transaction.fromHex(original.raw).ins.length));
    const gateway = devnet.gateway(BITCOIN);
    expect(await gateway.transactionStatus(original.txHash)).toEqual({ status: 'not_found' });
    expect(await gateway.transactionStatus(replacement.txHash)).toEqual({ status: 'pending' });
    // the hold covers the amount and the higher fee, whichever of the two is mined
    expect(await ledger()).toMatchObject({ available: before.available - 70_000n - BigInt(replacement.fee), held: before.held + 70_000n + BigInt(replacement.fee) });

    await mine(bitcoin.properties.confirmations);
    await worker.runPass();
    expect(await withdrawal(id)).toMatchObject({ status: 'Completed', txnHash: replacement.txHash, fee: replacement.fee });
    expect(await ledger()).toMatchObject({ available: before.available - 70_000n - BigInt(replacement.fee), held: before.held });
    // one payment: the replaced transaction never reached a block
    expect((await paymentsTo(recipient)).map(({ hash, status }) => ({ hash, status }))).toEqual([
      { hash: original.txHash, status: 'dropped' },
      { hash: replacement.txHash, status: 'mined' },
    ]);
    expect((await gateway.unspentOutputs([recipient])).map((output) => output.amount)).toEqual([70_000n]);

    const history = await withdrawalHistory(infrastructure.store, orgId, id);
    expect(history.map((entry) => entry.type)).toEqual(['WithdrawalRequested', 'WithdrawalTransactionSigned', 'WithdrawalBroadcast', 'WithdrawalTransactionReplaced', 'WithdrawalCompleted']);
    expect(history[3]).toMatchObject({
      data: { txHash: replacement.txHash, replacedTxHash: original.txHash, fee: replacement.fee, replacedFee: original.fee },
      state: { status: 'Processing', txnHash: replacement.txHash },
    });
  });

  it('a crash between recording the replacement and sending it: the restart sends that replacement, not a third transaction', async () => {
    const { before, recipient, id, original } = await stuckWithdrawal(60_000n);
    await mine(DEFAULT_REPLACE_AFTER_BLOCKS);
    const crash = (type: string) => {
      if (type === 'WithdrawalTransactionReplaced') throw new Error('crash');
    };
    await expect(advanceWithdrawal(processing({ faults: { afterRecord: crash } }), id)).rejects.toThrow('crash');
    const recorded = (await withdrawal(id)).signedTransaction!;
    expect(recorded.txHash).not.toBe(original.txHash);
    const gateway = devnet.gateway(BITCOIN);
    expect(await gateway.transactionStatus(recorded.txHash)).toEqual({ status: 'not_found' }); // never sent
    expect(await gateway.transactionStatus(original.txHash)).toEqual({ status: 'pending' });

    const worker = processor(); // the restart
    await worker.runPass();
    expect(await gateway.transactionStatus(recorded.txHash)).toEqual({ status: 'pending' });
    expect(await gateway.transactionStatus(original.txHash)).toEqual({ status: 'not_found' });
    await mine(bitcoin.properties.confirmations);
    await worker.runPass();
    expect(await withdrawal(id)).toMatchObject({ status: 'Completed', txnHash: recorded.txHash, fee: recorded.fee, replacedTransactions: [{ txHash: original.txHash }] });
    expect((await paymentsTo(recipient)).map(({ hash }) => hash)).toEqual([original.txHash, recorded.txHash]);
    expect(await ledger()).toMatchObject({ available: before.available - 60_000n - BigInt(recorded.fee), held: before.held });
  });

  it('the original confirming before its replacement is sent (a race) completes the withdrawal with the original, paid once', async () => {
    const { before, recipient, id, original } = await stuckWithdrawal(50_000n);
    // CHAINS_CONFIG's fees.replaceAfterBlocks shortens the wait
    await mine(3);
    const crash = (type: string) => {
      if (type === 'WithdrawalTransactionReplaced') throw new Error('crash');
    };
    await expect(advanceWithdrawal(processing({ replaceAfterBlocks: 3, faults: { afterRecord: crash } }), id)).rejects.toThrow('crash');
    const recorded = (await withdrawal(id)).signedTransaction!;
    expect(recorded.txHash).not.toBe(original.txHash);

    devnet.controls(BITCOIN).setMinimumMinedFeeRate(null); // the fee market falls back: the original is mined
    await mine(bitcoin.properties.confirmations);
    await processor({ replaceAfterBlocks: 3 }).runPass();
    expect(await withdrawal(id)).toMatchObject({ status: 'Completed', txnHash: original.txHash, fee: original.fee });
    expect(await ledger()).toMatchObject({ available: before.available - 50_000n - BigInt(original.fee), held: before.held });
    expect((await paymentsTo(recipient)).map(({ hash, status }) => ({ hash, status }))).toEqual([{ hash: original.txHash, status: 'mined' }]);
    expect(await devnet.gateway(BITCOIN).transactionStatus(recorded.txHash)).toEqual({ status: 'not_found' });
  });
});
