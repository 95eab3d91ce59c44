import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAggregate } from '../../src/application/command-handler.js';
import type { OrganizationWallets } from '../../src/application/organization-wallets.js';
import { advanceWithdrawal, type WithdrawalProcessingServices } from '../../src/processes/withdrawal-processor/advance.js';
import { devnetDb, type Devnet } from '../../src/chains/devnet/index.js';
import { BITCOIN_FEE_RATE_SAT_PER_VBYTE, XRP_FEE_DROPS } from '../../src/chains/devnet/fees.js';
import { p2wpkhVirtualSize } from '../../src/chains/bitcoin/spend-planning.js';
import { findToken, nativeToken } from '../../src/catalog/tokens.js';
import { streams } from '../../src/domain/streams.js';
import type { Infrastructure } from '../../src/infrastructure.js';
import { externalAddress, startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';
import { cancellationDecider } from '../../src/domain/cancellation/cancellation.js';
import { gasTopUpDecider } from '../../src/domain/gas-top-up/gas-top-up.js';
import { BroadcastRejectedError, type ChainGateway } from '../../src/chains/gateway.js';

const ETHEREUM = 'eip155:1';
const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';
const XRP = 'xrpl:mainnet';
const USDT = findToken('eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7')!;
const GWEI = 1_000_000_000n;

/**
 * The processor over the real application functions and the devnet: deposits are real transfers,
 * credited through the deposit functions; withdrawals are created with createWithdrawal; blocks are
 * mined only by the test, so every state in between is seen.
 */
describe('withdrawal processor', () => {
  let fixture: ChainWorkerFixture;
  let infrastructure: Infrastructure;
  let devnet: Devnet;
  let wallets: OrganizationWallets;
  let orgId: string;

  beforeAll(async () => {
    fixture = await startChainWorkerFixture('withdrawal_processor', { projections: 'caught-up' });
    ({ infrastructure, devnet, wallets, orgId } = fixture);
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  const processing = (chainId: string, faults?: WithdrawalProcessingServices['faults'], overrides: Partial<WithdrawalProcessingServices> = {}) =>
    fixture.workerServices(chainId, { ...(faults ? { faults } : {}), ...overrides });
  const processor = (chainId: string, overrides: Partial<WithdrawalProcessingServices> = {}) => fixture.withdrawalProcessor(chainId, overrides);
  const withdraw = (chainId: string, tokenId: string, amount: bigint, recipient: string, memo?: string) => fixture.withdraw({ chainId, tokenId, amount, recipient, memo });

  /** a new user's deposit account on the chain, a transfer to it on the devnet, recorded, confirmed and credited */
  const deposit = (chainId: string, asset: string, amount: bigint) => fixture.credit(chainId, asset, amount);
  const ledger = (tokenId: string) => fixture.ledger(tokenId);
  const withdrawal = (id: string) => fixture.withdrawal(id);
  const mineConfirmations = (chainId: string) => fixture.mineConfirmations(chainId);
  /** every transfer to the address the chain ever accepted (mined or in the mempool) */
  const transfersTo = (chainId: string, recipient: string) =>
    devnetDb(infrastructure.db).selectFrom('devnet_transfers').select(['tx_hash', 'amount']).where('chain_id', '=', chainId).where('to_address', '=', recipient).execute();

  /** USDT credited and already in the settlement wallet (what its sweep does), the gas wallet funded */
  const fundEthereumUsdt = async (amount: bigint) => {
    await deposit(ETHEREUM, USDT.address, amount);
    const { settlementAddress, gasAddress } = await wallets.walletsOf(orgId, ETHEREUM);
    await devnet.controls(ETHEREUM).deposit({ toAddress: settlementAddress, asset: USDT.address, amount });
    await devnet.controls(ETHEREUM).deposit({ toAddress: gasAddress!, asset: 'native', amount: 10_000_000n * GWEI });
    return { settlementAddress, gasAddress: gasAddress! };
  };

  it('Ethereum USDT: the gas wallet tops the settlement wallet up, then Pending → Processing → Completed', async () => {
    const { settlementAddress } = await fundEthereumUsdt(40_000_000n);
    const before = await ledger(USDT.id);
    const recipient = externalAddress(ETHEREUM);
    const created = await withdraw(ETHEREUM, USDT.id, 15_000_000n, recipient);
    expect(created.status).toBe('Pending');
    expect((await ledger(USDT.id)).held).toBe(before.held + 15_000_000n);

    const worker = processor(ETHEREUM);
    expect(await worker.runPass()).toMatchObject({ examined: 1, waiting: 1 }); // the top-up is on its way
    expect((await withdrawal(created.id)).status).toBe('Pending');
    await mineConfirmations(ETHEREUM);
    expect(await worker.runPass()).toMatchObject({ examined: 1, waiting: 1 }); // top-up confirmed; the transfer signed and sent
    const sent = await withdrawal(created.id);
    expect(sent).toMatchObject({ status: 'Processing' });
    if (sent.status === 'None') throw new Error('unreachable');
    expect(sent.txnHash).toBe(sent.signedTransaction!.txHash);
    await mineConfirmations(ETHEREUM);
    expect(await worker.runPass()).toMatchObject({ examined: 1, finished: 1 });

    expect(await withdrawal(created.id)).toMatchObject({ status: 'Completed', txnHash: sent.txnHash });
    const gateway = devnet.gateway(ETHEREUM);
    expect(await gateway.balance(recipient, USDT.address)).toBe(15_000_000n);
    expect(await gateway.balance(settlementAddress, USDT.address)).toBe(25_000_000n);
    // the gas came from the gas wallet: the organization's USDT ledger lost exactly the amount
    expect(await ledger(USDT.id)).toMatchObject({ available: before.available - 15_000_000n, held: before.held });
    expect(await worker.runPass()).toEqual({ examined: 0, finished: 0, waiting: 0, deferred: 0, failed: 0 });
  });

  /** the devnet's gateway, but the first broadcast that is not a withdrawal's own transaction is refused (devnet faults are for withdrawals only) */
  const refusingFirstTopUp = (gateway: ChainGateway): ChainGateway => {
    let refused = false;
    return {
      ...gateway,
      broadcast: async (raw, options) => {
        if (!refused && options?.purpose !== 'withdrawal') {
          refused = true;
          throw new BroadcastRejectedError('replacement transaction underpriced (the test node refuses the top-up)');
        }
        return gateway.broadcast(raw, options);
      },
    };
  };

  it('Ethereum USDT: a gas top-up the node refuses once is sent again, the same bytes, never a second top-up; the withdrawal completes, paid once', async () => {
    const { settlementAddress } = await fundEthereumUsdt(20_000_000n);
    const settlementBefore = await devnet.gateway(ETHEREUM).balance(settlementAddress, USDT.address);
    const recipient = externalAddress(ETHEREUM);
    const created = await withdraw(ETHEREUM, USDT.id, 5_000_000n, recipient);
    const worker = processor(ETHEREUM, { gateway: refusingFirstTopUp(devnet.gateway(ETHEREUM)) });
    for (let pass = 0; (await withdrawal(created.id)).status !== 'Completed'; pass++) {
      if (pass > 12) throw new Error(`not completed: ${JSON.stringify(await withdrawal(created.id))}`);
      await worker.runPass();
      await mineConfirmations(ETHEREUM);
    }
    const topUps = await loadAggregate(infrastructure.store, streams.withdrawalGas(created.id), gasTopUpDecider);
    expect(topUps.state).toMatchObject({ status: 'Confirmed', count: 1 });
    expect(await transfersTo(ETHEREUM, recipient)).toHaveLength(1);
    expect(await devnet.gateway(ETHEREUM).balance(recipient, USDT.address)).toBe(5_000_000n);
    expect(await devnet.gateway(ETHEREUM).balance(settlementAddress, USDT.address)).toBe(settlementBefore - 5_000_000n);
  });

  it('Ethereum USDT: a fault set before the withdrawal passes its gas top-up by and fails the withdrawal’s own transaction', async () => {
    const { settlementAddress } = await fundEthereumUsdt(20_000_000n);
    const settlementBefore = await devnet.gateway(ETHEREUM).balance(settlementAddress, USDT.address);
    const before = await ledger(USDT.id);
    const recipient = externalAddress(ETHEREUM);
    const created = await withdraw(ETHEREUM, USDT.id, 5_000_000n, recipient);
    await devnet.controls(ETHEREUM).setFault('broadcast_error', 1);
    const worker = processor(ETHEREUM);
    for (let pass = 0; (await withdrawal(created.id)).status !== 'Failed'; pass++) {
      if (pass > 12) throw new Error(`not failed: ${JSON.stringify(await withdrawal(created.id))}`);
      await worker.runPass();
      await mineConfirmations(ETHEREUM);
    }
    // the top-up, broadcast first, went through once; the withdrawal's transaction met the fault
    const topUps = await loadAggregate(infrastructure.store, streams.withdrawalGas(created.id), gasTopUpDecider);
    expect(topUps.state).toMatchObject({ status: 'Confirmed', count: 1 });
    const failed = await withdrawal(created.id);
    if (failed.status === 'None') throw new Error('unreachable');
    expect(failed.txnError).toContain('devnet fault: broadcast_error');
    expect(await ledger(USDT.id)).toMatchObject({ available: before.available, held: before.held });
    expect(await devnet.gateway(ETHEREUM).balance(recipient, USDT.address)).toBe(0n);
    expect(await devnet.gateway(ETHEREUM).balance(settlementAddress, USDT.address)).toBe(settlementBefore);
  });

  it('Ethereum native: the settlement wallet’s coins pay exactly the amount; the gas is the gas wallet’s, never the organization’s', async () => {
    const eth = nativeToken(ETHEREUM);
    const swept = 500_000_000n * GWEI; // 0.5 ETH credited and already in the settlement wallet
    await deposit(ETHEREUM, 'native', swept);
    const { settlementAddress, gasAddress } = await wallets.walletsOf(orgId, ETHEREUM);
    await devnet.controls(ETHEREUM).deposit({ toAddress: settlementAddress, asset: 'native', amount: swept });
    await devnet.controls(ETHEREUM).deposit({ toAddress: gasAddress!, asset: 'native', amount: 10_000_000n * GWEI });
    const gateway = devnet.gateway(ETHEREUM);
    const settlementBefore = await gateway.balance(settlementAddress, 'native');
    const before = await ledger(eth.id);
    const recipient = externalAddress(ETHEREUM);
    const created = await withdraw(ETHEREUM, eth.id, 200_000_000n * GWEI, recipient);

    const worker = processor(ETHEREUM);
    for (let pass = 0; (await withdrawal(created.id)).status !== 'Completed'; pass++) {
      if (pass > 10) throw new Error(`not completed: ${JSON.stringify(await withdrawal(created.id))}`);
      await worker.runPass();
      await mineConfirmations(ETHEREUM);
    }
    expect(await gateway.balance(recipient, 'native')).toBe(200_000_000n * GWEI);
    // the settlement wallet received the fee from the gas wallet and spent it: its coins moved by exactly the amount
    expect(await gateway.balance(settlementAddress, 'native')).toBe(settlementBefore - 200_000_000n * GWEI);
    expect(await ledger(eth.id)).toMatchObject({ available: before.available - 200_000_000n * GWEI, held: before.held });
  });

  it('Ethereum: a transaction mined but not deep is not looked at until the head reaches its depth; dropped by a reorg meanwhile, the same bytes are sent then, paid once', async () => {
    const eth = nativeToken(ETHEREUM);
    const swept = 100_000_000n * GWEI;
    await deposit(ETHEREUM, 'native', swept);
    const { settlementAddress, gasAddress } = await wallets.walletsOf(orgId, ETHEREUM);
    await devnet.controls(ETHEREUM).deposit({ toAddress: settlementAddress, asset: 'native', amount: swept });
    await devnet.controls(ETHEREUM).deposit({ toAddress: gasAddress!, asset: 'native', amount: 10_000_000n * GWEI });
    const gateway = devnet.gateway(ETHEREUM);
    const recipient = externalAddress(ETHEREUM);
    const created = await withdraw(ETHEREUM, eth.id, 30_000_000n * GWEI, recipient);
    /** the receipts the processor asked for, by transaction */
    const looks = new Map<string, number>();
    const counting: ChainGateway = { ...gateway, transactionStatus: (txHash) => (looks.set(txHash, (looks.get(txHash) ?? 0) + 1), gateway.transactionStatus(txHash)) };
    const worker = processor(ETHEREUM, { gateway: counting });
    const sentHash = async () => ((await withdrawal(created.id)) as { signedTransaction: { txHash: string } | null }).signedTransaction?.txHash;
    for (let pass = 0; ; pass++) {
      if (pass > 40) throw new Error(`not mined: ${JSON.stringify(await withdrawal(created.id))}`);
      await worker.runPass();
      const hash = await sentHash();
      if ((await withdrawal(created.id)).status === 'Processing' && hash && (await gateway.transactionStatus(hash)).status === 'confirmed') break;
      await devnet.controls(ETHEREUM).mine(1);
    }
    const txHash = (await sentHash())!;
    const mined = await gateway.transactionStatus(txHash);
    if (mined.status !== 'confirmed') throw new Error('unreachable');
    expect(mined.confirmations).toBeLessThan(12);
    const looked = looks.get(txHash);

    // deeper, not deep enough: no look
    await devnet.controls(ETHEREUM).mine(5);
    expect(await worker.runPass()).toMatchObject({ examined: 0, waiting: 1 });
    // a reorg drops it; the head stands at the same height, so still no look
    const head = await gateway.head();
    await devnet.controls(ETHEREUM).reorg(head.number - mined.blockNumber + 1);
    expect((await gateway.transactionStatus(txHash)).status).toBe('not_found');
    expect(await worker.runPass()).toMatchObject({ examined: 0, waiting: 1 });
    expect(looks.get(txHash)).toBe(looked);

    // at its depth it is looked at: found nowhere, the same bytes are sent again, then confirmed
    await devnet.controls(ETHEREUM).mine(mined.blockNumber + 11 - head.number);
    expect(await worker.runPass()).toMatchObject({ examined: 1, waiting: 1 });
    expect(looks.get(txHash)).toBeGreaterThan(looked!);
    expect((await gateway.transactionStatus(txHash)).status).toBe('pending');
    await mineConfirmations(ETHEREUM);
    expect(await worker.runPass()).toMatchObject({ finished: 1 });
    expect(await withdrawal(created.id)).toMatchObject({ status: 'Completed', txnHash: txHash });
    expect(await gateway.balance(recipient, 'native')).toBe(30_000_000n * GWEI);
  });

  it('Bitcoin: coins of the deposit addresses pay amount and fee, change returns, the fee is charged', async () => {
    const btc = nativeToken(BITCOIN);
    await deposit(BITCOIN, 'native', 30_000n);
    await deposit(BITCOIN, 'native', 80_000n);
    const before = await ledger(btc.id);
    const recipient = externalAddress(BITCOIN);
    const created = await withdraw(BITCOIN, btc.id, 90_000n, recipient);
    const worker = processor(BITCOIN);
    expect(await worker.runPass()).toMatchObject({ examined: 1, waiting: 1 });
    expect(await withdrawal(created.id)).toMatchObject({ status: 'Processing' });
    await mineConfirmations(BITCOIN);
    expect(await worker.runPass()).toMatchObject({ finished: 1 });

    const fee = p2wpkhVirtualSize(2, 2) * BITCOIN_FEE_RATE_SAT_PER_VBYTE;
    expect(await withdrawal(created.id)).toMatchObject({ status: 'Completed', fee: fee.toString() });
    const outputs = await devnet.gateway(BITCOIN).unspentOutputs([recipient]);
    expect(outputs.map((output) => output.amount)).toEqual([90_000n]);
    expect(await ledger(btc.id)).toMatchObject({ available: before.available - 90_000n - fee, held: before.held });
  });

  it('XRP: a payment from the organization address with the destination tag; the fee is charged', async () => {
    const xrp = nativeToken(XRP);
    await deposit(XRP, 'native', 50_000_000n);
    const before = await ledger(xrp.id);
    const recipient = externalAddress(XRP);
    const created = await withdraw(XRP, xrp.id, 20_000_000n, recipient, '77');
    const worker = processor(XRP);
    await worker.runPass();
    expect(await withdrawal(created.id)).toMatchObject({ status: 'Processing' });
    await mineConfirmations(XRP);
    expect(await worker.runPass()).toMatchObject({ finished: 1 });
    expect(await withdrawal(created.id)).toMatchObject({ status: 'Completed', fee: XRP_FEE_DROPS.toString() });
    expect(await devnet.gateway(XRP).balance(recipient, 'native')).toBe(20_000_000n);
    expect(await ledger(xrp.id)).toMatchObject({ available: before.available - 20_000_000n - XRP_FEE_DROPS, held: before.held });
  });

  /** the real store, telling which of its streams whose name starts with `prefix` were read: by the appends' decisions, or otherwise */
  const storeTellingReads = (prefix: string) => {
    const reads: string[] = [];
    const byAppends: string[] = [];
    const store = new Proxy(infrastructure.store, {
      get: (target, property, receiver) =>
        property === 'readStream'
          ? (stream: string, options?: Parameters<typeof target.readStream>[1]) => {
              // a read the ledger's queue makes for a decision it appends (decided again on a fresh ledger: read again) is the append's
              if (stream.startsWith(prefix)) (new Error().stack?.includes('ledger-batches') ? byAppends : reads).push(stream);
              return target.readStream(stream, options);
            }
          : Reflect.get(target, property, receiver),
    });
    return { store, reads, byAppends };
  };

  it('a step after the processor’s own append goes on from the state it appended: one read of the stream a call, besides the appends’ own', async () => {
    const xrp = nativeToken(XRP);
    await deposit(XRP, 'native', 30_000_000n);
    const created = await withdraw(XRP, xrp.id, 5_000_000n, externalAddress(XRP));
    const { store, reads, byAppends } = storeTellingReads(streams.withdrawal(created.id));
    // read to start; then the signed transaction's append and the broadcast's each read it (at least once), and the steps after them go on from what they appended; pending
    expect(await advanceWithdrawal(processing(XRP, undefined, { store }), created.id)).toMatchObject({ outcome: 'waiting', for: 'confirmations' });
    expect(reads).toHaveLength(1);
    expect(byAppends.length).toBeGreaterThanOrEqual(2);
    await mineConfirmations(XRP);
    reads.length = 0;
    // read to start, completed by an append; finished without another read
    expect(await advanceWithdrawal(processing(XRP, undefined, { store }), created.id)).toMatchObject({ outcome: 'finished', status: 'Completed' });
    expect(reads).toHaveLength(1);
    expect(await withdrawal(created.id)).toMatchObject({ status: 'Completed' });
  });

  it('a look at a payment in the mempool or mined reads no cancellation; a refused one reads it and signs one', async () => {
    const { store, reads: cancellationReads } = storeTellingReads('cancellation-');
    const xrp = nativeToken(XRP);
    await deposit(XRP, 'native', 30_000_000n);
    const sent = await withdraw(XRP, xrp.id, 5_000_000n, externalAddress(XRP));
    expect(await advanceWithdrawal(processing(XRP, undefined, { store }), sent.id)).toMatchObject({ outcome: 'waiting', for: 'confirmations' });
    await mineConfirmations(XRP);
    expect(await advanceWithdrawal(processing(XRP, undefined, { store }), sent.id)).toMatchObject({ outcome: 'finished', status: 'Completed' });
    // signed, sent (the look before found it nowhere, and the node took it), seen in the mempool, then mined at depth
    const paid = (await withdrawal(sent.id)) as { signedTransaction: { txHash: string } };
    expect(cancellationReads).toEqual([streams.cancellation(XRP, paid.signedTransaction.txHash)]);

    cancellationReads.length = 0;
    const btc = nativeToken(BITCOIN);
    await deposit(BITCOIN, 'native', 90_000n);
    const refused = await withdraw(BITCOIN, btc.id, 60_000n, externalAddress(BITCOIN));
    await devnet.controls(BITCOIN).setFault('broadcast_error', 1);
    await advanceWithdrawal(processing(BITCOIN, undefined, { store }), refused.id);
    const signedHash = ((await withdrawal(refused.id)) as { signedTransaction: { txHash: string } }).signedTransaction.txHash;
    expect(cancellationReads).toContain(streams.cancellation(BITCOIN, signedHash));
    expect((await loadAggregate(infrastructure.store, streams.cancellation(BITCOIN, signedHash), cancellationDecider)).state.status).toBe('Signed');
    for (let pass = 0; (await withdrawal(refused.id)).status !== 'Failed'; pass++) {
      if (pass > 6) throw new Error(`not failed: ${JSON.stringify(await withdrawal(refused.id))}`);
      await processor(BITCOIN).runPass();
      await mineConfirmations(BITCOIN);
    }
  });

  it.each(['broadcast_error', 'revert'] as const)('a devnet %s fails the withdrawal with txnError and releases the hold', async (fault) => {
    const btc = nativeToken(BITCOIN);
    await deposit(BITCOIN, 'native', 90_000n);
    const before = await ledger(btc.id);
    const created = await withdraw(BITCOIN, btc.id, 60_000n, externalAddress(BITCOIN));
    expect((await ledger(btc.id)).available).toBe(before.available - 60_000n);
    await devnet.controls(BITCOIN).setFault(fault, 1);
    const recipient = (await withdrawal(created.id)) as { recipient: string };
    const worker = processor(BITCOIN);
    // a refused transaction fails only once it is impossible: one of its inputs spent back to
    // ourselves at depth (broadcast_error); a reverted one once the failure is at depth (revert)
    for (let pass = 0; (await withdrawal(created.id)).status !== 'Failed'; pass++) {
      if (pass > 6) throw new Error(`not failed: ${JSON.stringify(await withdrawal(created.id))}`);
      await worker.runPass();
      await mineConfirmations(BITCOIN);
    }
    const failed = await withdrawal(created.id);
    if (failed.status === 'None') throw new Error('unreachable');
    expect(failed.txnError).toContain(fault === 'broadcast_error' ? 'rejected' : 'reverted');
    if (fault === 'broadcast_error') expect(failed.txnError).toContain('it can never be mined: its input');
    expect(await devnet.gateway(BITCOIN).balance(recipient.recipient, 'native')).toBe(0n);
    // the ledger follows the chain: the hold released, the fee the chain took anyway (the reverted
    // transaction's, or the cancellation's) charged
    const signedHash = failed.signedTransaction!.txHash;
    const cancellation = await loadAggregate(infrastructure.store, streams.cancellation(BITCOIN, signedHash), cancellationDecider);
    const paidFor = fault === 'revert' ? signedHash : cancellation.state.status === 'Signed' ? cancellation.state.cancellation.txHash : 'none';
    const onChain = await devnet.gateway(BITCOIN).transactionStatus(paidFor);
    if (onChain.status !== 'confirmed' && onChain.status !== 'failed') throw new Error(`the fee's transaction is ${onChain.status}`);
    expect(onChain.fee).toBeGreaterThan(0n);
    expect(await ledger(btc.id)).toMatchObject({ available: before.available - onChain.fee, held: before.held });
  });

  it.each([
    [XRP, 30_000_000n, 5_000_000n, 'between recording the signed transaction and broadcast', 'afterRecord'],
    [XRP, 30_000_000n, 5_000_000n, 'between broadcast and recording the broadcast', 'afterBroadcast'],
    [BITCOIN, 120_000n, 70_000n, 'between recording the signed transaction and broadcast', 'afterRecord'],
    [BITCOIN, 120_000n, 70_000n, 'between broadcast and recording the broadcast', 'afterBroadcast'],
  ] as const)('%s: a processor crashing %s: after a restart, one payment, Completed', async (chainId, funds, amount, _when, fault) => {
    const token = nativeToken(chainId);
    await deposit(chainId, 'native', funds);
    const before = await ledger(token.id);
    const recipient = externalAddress(chainId);
    const created = await withdraw(chainId, token.id, amount, recipient);
    const crash = () => {
      throw new Error('crash');
    };
    const faults = fault === 'afterRecord' ? { afterRecord: (type: string) => (type === 'WithdrawalTransactionSigned' ? crash() : undefined) } : { afterBroadcast: crash };
    await expect(advanceWithdrawal(processing(chainId, faults), created.id)).rejects.toThrow('crash');
    const crashed = await withdrawal(created.id);
    expect(crashed).toMatchObject({ status: 'Pending' });
    if (crashed.status === 'None') throw new Error('unreachable');
    const recorded = crashed.signedTransaction!;

    const worker = processor(chainId); // the restart
    await worker.runPass();
    expect(await withdrawal(created.id)).toMatchObject({ status: 'Processing', txnHash: recorded.txHash });
    await mineConfirmations(chainId);
    await worker.runPass();
    expect(await withdrawal(created.id)).toMatchObject({ status: 'Completed', txnHash: recorded.txHash, fee: recorded.fee });
    expect(await transfersTo(chainId, recipient)).toEqual([{ tx_hash: recorded.txHash, amount: amount.toString() }]);
    expect(await ledger(token.id)).toMatchObject({ available: before.available - amount - BigInt(recorded.fee), held: before.held });
  });
});
