import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devnetDb } from '../../src/chains/devnet/index.js';
import { nativeToken } from '../../src/catalog/tokens.js';
import type { WithdrawalRecord } from '../../src/domain/withdrawal/withdrawal.js';
import { advanceWithdrawal } from '../../src/processes/withdrawal-processor/advance.js';
import { externalAddress, startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';

const ETHEREUM = 'eip155:1';
const XRP = 'xrpl:mainnet';
const TRON = 'tron:0x00000000000000000000000000000000';
/** enough of the chain's coin for a test's withdrawals, their fees and the gas wallet's top-ups: 10 ETH, 1,000,000 XRP or TRX */
const fundsOf = (chainId: string) => (chainId === ETHEREUM ? 10n ** 19n : 10n ** 12n);

/**
 * Many withdrawals of one organization in flight at once on one chain (EVM and XRP pipelined, one
 * nonce or sequence after another from one wallet; Tron in parallel), over the devnet: each paid
 * exactly once, the ledger equal to the chain, and no recorded nonce ever taken by a second
 * transaction, whatever a crash or a node that dropped one left behind.
 */
describe('withdrawals pipelined: many of one organization in flight on one chain', () => {
  let fixture: ChainWorkerFixture;

  beforeAll(async () => {
    fixture = await startChainWorkerFixture('withdrawal_pipelining', { projections: 'none' });
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  const devnetTransactions = () => devnetDb(fixture.infrastructure.db).selectFrom('devnet_transactions');

  /** the organization's ledger credited with the chain's coin, the coins where its payments leave from, and its gas wallet funded */
  const fund = async (chainId: string) => {
    await fixture.credit(chainId, 'native', fundsOf(chainId));
    if (chainId === XRP) return; // XRP pays from the organization's deposit address itself
    const { settlementAddress, gasAddress } = await fixture.wallets.walletsOf(fixture.orgId, chainId);
    await fixture.devnet.controls(chainId).deposit({ toAddress: settlementAddress, asset: 'native', amount: fundsOf(chainId) });
    await fixture.devnet.controls(chainId).deposit({ toAddress: gasAddress!, asset: 'native', amount: fundsOf(chainId) });
  };

  const amountOf = (chainId: string) => BigInt(nativeToken(chainId).properties.minimumWithdrawal);

  const withdrawMany = async (chainId: string, count: number) => {
    const created: { id: string; recipient: string }[] = [];
    for (let index = 0; index < count; index++) {
      const recipient = externalAddress(chainId);
      const withdrawal = await fixture.withdraw({ chainId, tokenId: nativeToken(chainId).id, amount: amountOf(chainId), recipient });
      created.push({ id: withdrawal.id, recipient });
    }
    return created;
  };

  const record = async (id: string): Promise<WithdrawalRecord> => {
    const state = await fixture.withdrawal(id);
    if (state.status === 'None') throw new Error(`no withdrawal ${id}`);
    return state;
  };

  /** passes, each followed by the chain's confirmations, until every one is settled */
  const settleAll = async (chainId: string, ids: readonly string[]) => {
    const worker = fixture.withdrawalProcessor(chainId);
    for (let pass = 0; ; pass++) {
      const states = await Promise.all(ids.map(record));
      if (states.every((state) => state.status === 'Completed' || state.status === 'Failed')) return states;
      if (pass > 8) throw new Error(`not settled after ${pass} passes: ${states.map((state) => state.status).join(', ')}`);
      await worker.runPass();
      await fixture.mineConfirmations(chainId);
    }
  };

  /** each recipient paid once, its amount, by the withdrawal's own recorded transaction */
  const expectPaidOnce = async (chainId: string, created: { id: string; recipient: string }[]) => {
    for (const { id, recipient } of created) {
      const settled = await record(id);
      expect(settled).toMatchObject({ status: 'Completed', txnError: null, txnHash: settled.signedTransaction!.txHash });
      const paid = await devnetDb(fixture.infrastructure.db).selectFrom('devnet_transfers').select(['tx_hash', 'amount']).where('chain_id', '=', chainId).where('to_address', '=', recipient).execute();
      expect(paid).toEqual([{ tx_hash: settled.txnHash, amount: amountOf(chainId).toString() }]);
    }
  };

  it.each([
    [ETHEREUM, 'pipelined: consecutive nonces of the settlement wallet'],
    [XRP, 'pipelined: consecutive sequences of the organization address'],
    [TRON, 'in parallel'],
  ])('%s, %s: 20 withdrawals in flight at once, each paid once, the ledger equal to the chain', async (chainId) => {
    await fund(chainId);
    const token = nativeToken(chainId);
    const before = await fixture.ledger(token.id);
    const created = await withdrawMany(chainId, 20);
    const worker = fixture.withdrawalProcessor(chainId);
    await worker.runPass();
    if (chainId !== XRP) {
      // EVM, Tron: each one's gas top-up went out in the same pass; once they are confirmed, every payment is signed and sent
      await fixture.mineConfirmations(chainId);
      await worker.runPass();
    }
    const inFlight = await Promise.all(created.map(({ id }) => record(id)));
    expect(inFlight.map((state) => state.status)).toEqual(created.map(() => 'Processing'));
    const pending = await devnetTransactions().select('hash').where('chain_id', '=', chainId).where('status', '=', 'pending').execute();
    expect(new Set(pending.map((row) => row.hash))).toEqual(new Set(inFlight.map((state) => state.signedTransaction!.txHash)));
    if (chainId !== TRON) {
      const nonces = inFlight.map((state) => state.signedTransaction!.nonce!);
      expect(nonces).toEqual(nonces.map((_, index) => nonces[0]! + index));
    }

    await settleAll(chainId, created.map(({ id }) => id));
    await expectPaidOnce(chainId, created);
    // XRP: the organization's balance paid the fees the chain took too; EVM and Tron: the gas wallet did
    const settled = await Promise.all(created.map(({ id }) => record(id)));
    const fees = chainId === XRP ? settled.reduce((sum, state) => sum + BigInt(state.fee!), 0n) : 0n;
    expect(await fixture.ledger(token.id)).toMatchObject({ available: before.available - 20n * amountOf(chainId) - fees, held: before.held });
  });

  it.each([ETHEREUM, XRP])('%s: a crash between recording a later withdrawal\'s transaction and sending it: an earlier one signed after the restart takes the next nonce, the recorded bytes are sent as they are', async (chainId) => {
    await fund(chainId);
    const [first, second] = await withdrawMany(chainId, 2);
    const crash = (type: string) => {
      if (type === 'WithdrawalTransactionSigned') throw new Error('crash');
    };
    if (chainId === ETHEREUM) {
      // both have their gas first (each its own top-up, confirmed): after the restart the earlier one is signed at once
      for (const { id } of [first!, second!]) await advanceWithdrawal(fixture.workerServices(chainId), id);
      await fixture.mineConfirmations(chainId);
    }
    // the later one is recorded at nonce n, and the process dies before sending it: the node never saw it
    await expect(advanceWithdrawal(fixture.workerServices(chainId, { faults: { afterRecord: crash } }), second!.id)).rejects.toThrow('crash');
    const recorded = (await record(second!.id)).signedTransaction!;
    expect(await fixture.devnet.gateway(chainId).transactionStatus(recorded.txHash)).toEqual({ status: 'not_found' });

    // the restart: the earlier one comes first in the work list, and must not take nonce n
    const states = await settleAll(chainId, [first!.id, second!.id]);
    expect(states.map((state) => state.status)).toEqual(['Completed', 'Completed']);
    expect(states[1]!.signedTransaction).toMatchObject({ txHash: recorded.txHash, nonce: recorded.nonce, raw: recorded.raw });
    expect(states[1]!.replacedTransactions).toBeUndefined();
    expect(states[0]!.signedTransaction!.nonce).toBe(recorded.nonce! + 1);
    await expectPaidOnce(chainId, [first!, second!]);
  });

  it.each([ETHEREUM, XRP])('%s: a node that dropped the middle one of three: the gap is filled by its recorded bytes, the rest follow, nothing signed twice', async (chainId) => {
    await fund(chainId);
    const created = await withdrawMany(chainId, 3);
    const worker = fixture.withdrawalProcessor(chainId);
    await worker.runPass();
    if (chainId === ETHEREUM) {
      await fixture.mineConfirmations(chainId);
      await worker.runPass();
    }
    const sent = await Promise.all(created.map(({ id }) => record(id)));
    expect(sent.map((state) => state.status)).toEqual(['Processing', 'Processing', 'Processing']);
    const middle = sent[1]!.signedTransaction!;
    await devnetDb(fixture.infrastructure.db)
      .updateTable('devnet_transactions')
      .set({ status: 'dropped', error: 'evicted from the mempool (test)' })
      .where('chain_id', '=', chainId)
      .where('hash', '=', middle.txHash)
      .execute();
    // the block takes the first; the third waits behind the gap (a node drops or queues it)
    await fixture.devnet.controls(chainId).mine(1);
    expect(await fixture.devnet.gateway(chainId).transactionStatus(middle.txHash)).toEqual({ status: 'not_found' });

    const states = await settleAll(chainId, created.map(({ id }) => id));
    expect(states.map((state) => state.signedTransaction)).toEqual(sent.map((state) => state.signedTransaction));
    expect(states.every((state) => state.replacedTransactions === undefined)).toBe(true);
    await expectPaidOnce(chainId, created);
  });
});
