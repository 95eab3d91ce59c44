import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvmGateway } from '../../src/chains/evm/gateway.js';
import { findChain } from '../../src/catalog/registry.js';
import { nativeToken } from '../../src/catalog/tokens.js';
import { withdrawalHistory } from '../../src/audit/withdrawal-history.js';
import { advanceWithdrawal, type WithdrawalProcessingServices } from '../../src/processes/withdrawal-processor/advance.js';
import type { WithdrawalRecord } from '../../src/domain/withdrawal/withdrawal.js';
import { streams } from '../../src/domain/streams.js';
import { startAnvil, type Anvil } from '../support/anvil.js';
import { externalAddress, startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';

const ETHEREUM = 'eip155:1';
const GWEI = 10n ** 9n;
const ETHER = 10n ** 18n;
const REPLACE_AFTER_BLOCKS = 3;
/** the chain's fee cap (CHAINS_CONFIG fees.maxFeePerGasGwei) */
const FEE_CAP_GWEI = 500;
const chain = { ...findChain(ETHEREUM)!, properties: { ...findChain(ETHEREUM)!.properties, confirmations: 1 } };
const eth = nativeToken(ETHEREUM);

/**
 * A stuck EVM withdrawal on a real node (anvil, automine off: blocks are mined by the test). The
 * withdrawal is signed at the base fee of the moment, then the base fee jumps above its
 * maxFeePerGas (anvil_setNextBlockBaseFeePerGas) and it stays pending; after `replaceAfterBlocks`
 * the processor tops the settlement wallet up by the replacement's extra gas (the gas wallet pays),
 * then signs, records and sends the same nonce at both fee fields 10 % higher.
 */
describe('withdrawal processor: a stuck EVM withdrawal is replaced at a higher fee (anvil)', { timeout: 120_000 }, () => {
  let anvil: Anvil;
  let fixture: ChainWorkerFixture;
  let gateway: ReturnType<typeof createEvmGateway>;

  beforeAll(async () => {
    anvil = await startAnvil(1);
    await anvil.provider.send('evm_setAutomine', [false]);
    fixture = await startChainWorkerFixture('withdrawal_evm_replacement', { projections: 'none', referencePrefix: 'evm-rbf' });
    gateway = createEvmGateway(chain, { rpcUrls: [anvil.url], rpcTimeoutMs: 5_000, fees: { maxFeePerGasGwei: FEE_CAP_GWEI } });
  }, 120_000);
  afterAll(async () => {
    gateway?.close();
    await fixture?.stop();
    await anvil?.stop();
  });

  const services = (overrides: Partial<WithdrawalProcessingServices> = {}) =>
    fixture.workerServices(ETHEREUM, { chain, gateway, replaceAfterBlocks: REPLACE_AFTER_BLOCKS, maxFeePerGas: BigInt(FEE_CAP_GWEI) * GWEI, ...overrides });
  const withdrawal = async (id: string): Promise<WithdrawalRecord> => {
    const state = await fixture.withdrawal(id);
    if (state.status === 'None') throw new Error(`no withdrawal ${id}`);
    return state;
  };
  const balance = async (address: string) => BigInt(await anvil.provider.send('eth_getBalance', [address, 'latest']));
  const receipt = (txHash: string) => anvil.provider.send('eth_getTransactionReceipt', [txHash]) as Promise<{ gasUsed: string; effectiveGasPrice: string } | null>;
  const known = async (txHash: string) => (await anvil.provider.send('eth_getTransactionByHash', [txHash])) !== null;
  const baseFee = async () => BigInt(((await anvil.provider.send('eth_getBlockByNumber', ['latest', false])) as { baseFeePerGas: string }).baseFeePerGas);
  /** advances the withdrawal, then mines a block, until `done` holds (bounded) */
  const advanceUntil = async (id: string, done: (state: WithdrawalRecord) => boolean, what: string, overrides: Partial<WithdrawalProcessingServices> = {}) => {
    for (let pass = 0; !done(await withdrawal(id)); pass++) {
      if (pass > 12) throw new Error(`not ${what}: ${JSON.stringify(await withdrawal(id))}`);
      await advanceWithdrawal(services(overrides), id);
      if (!done(await withdrawal(id))) await anvil.mine(1);
    }
  };

  /** funds on the ledger and in the settlement wallet, a withdrawal signed and sent, then priced out by a risen base fee */
  const stuckWithdrawal = async (amount: bigint) => {
    const { settlementAddress, gasAddress } = await fixture.wallets.walletsOf(fixture.orgId, ETHEREUM);
    await fixture.credit(ETHEREUM, 'native', amount); // the ledger (the devnet's deposit: the ledger does not care where)
    await anvil.provider.send('anvil_setBalance', [settlementAddress, `0x${amount.toString(16)}`]); // the swept coins
    await anvil.provider.send('anvil_setBalance', [gasAddress!, `0x${ETHER.toString(16)}`]);
    const before = await fixture.ledger(eth.id);
    const recipient = externalAddress(ETHEREUM);
    const created = await fixture.withdraw({ chainId: ETHEREUM, tokenId: eth.id, amount, recipient }, { gateways: () => gateway });
    await advanceUntil(created.id, (state) => state.status === 'Processing', 'broadcast');
    const original = (await withdrawal(created.id)).signedTransaction!;
    expect(await known(original.txHash)).toBe(true);
    // the fee market jumps: every block from here is priced above what the withdrawal offers
    await anvil.provider.send('anvil_setNextBlockBaseFeePerGas', [`0x${(BigInt(original.maxFeePerGas!) * 8n).toString(16)}`]);
    await anvil.mine(1);
    expect(await baseFee()).toBeGreaterThan(BigInt(original.maxFeePerGas!));
    return { before, recipient, id: created.id, original, settlementAddress, settlementBefore: await balance(settlementAddress) };
  };

  it('pending past replaceAfterBlocks: topped up, replaced with the same nonce at +10 % or more, the replacement mined, completed once', async () => {
    const { before, recipient, id, original, settlementAddress, settlementBefore } = await stuckWithdrawal(ETHER / 10n);
    await advanceWithdrawal(services(), id);
    expect(await withdrawal(id)).toMatchObject({ status: 'Processing', signedTransaction: { txHash: original.txHash } }); // not yet: too few blocks
    await anvil.mine(REPLACE_AFTER_BLOCKS);

    await advanceUntil(id, (state) => state.signedTransaction!.txHash !== original.txHash, 'replaced');
    const replaced = await withdrawal(id);
    const replacement = replaced.signedTransaction!;
    expect(replacement).toMatchObject({ nonce: original.nonce });
    expect(replaced.replacedTransactions).toEqual([expect.objectContaining({ txHash: original.txHash })]);
    expect(BigInt(replacement.maxFeePerGas!) * 10n).toBeGreaterThanOrEqual(BigInt(original.maxFeePerGas!) * 11n);
    expect(BigInt(replacement.maxPriorityFeePerGas!) * 10n).toBeGreaterThanOrEqual(BigInt(original.maxPriorityFeePerGas!) * 11n);
    expect(BigInt(replacement.maxFeePerGas!)).toBeLessThanOrEqual(BigInt(FEE_CAP_GWEI) * GWEI);
    // the gas wallet paid the difference first: a second top-up, for the replacement's higher most-possible fee
    const topUps = (await fixture.infrastructure.store.readStream(streams.withdrawalGas(id))).filter((event) => event.type === 'WithdrawalGasTopUpSigned');
    const steps = topUps.map((event) => event.data as { step: { amount: string }; replacing?: string });
    expect(steps.map(({ replacing }) => replacing)).toEqual([undefined, original.txHash]);
    expect(steps[0]!.step.amount).toBe(original.fee);
    // the replacement offers at most what the top-up pays for (the base fee fell a little meanwhile)
    expect(BigInt(steps[1]!.step.amount)).toBeGreaterThanOrEqual(BigInt(replacement.fee) - BigInt(original.fee));

    await advanceUntil(id, (state) => state.status === 'Completed', 'completed');
    const mined = (await receipt(replacement.txHash))!;
    expect(mined).not.toBeNull();
    expect(await receipt(original.txHash)).toBeNull(); // exactly one of the two
    const fee = BigInt(mined.gasUsed) * BigInt(mined.effectiveGasPrice);
    expect(await withdrawal(id)).toMatchObject({ status: 'Completed', txnHash: replacement.txHash, fee: fee.toString() });
    expect(await balance(recipient)).toBe(ETHER / 10n);
    // the ledger follows the chain: the organization's coins left the settlement wallet by exactly the
    // amount; the gas came from the gas wallet's two top-ups (what they paid beyond the fee stays there)
    expect(await fixture.ledger(eth.id)).toMatchObject({ available: before.available - ETHER / 10n, held: before.held });
    expect(await balance(settlementAddress)).toBe(settlementBefore + BigInt(steps[1]!.step.amount) - ETHER / 10n - fee);
    const history = await withdrawalHistory(fixture.infrastructure.store, fixture.orgId, id);
    expect(history.map((entry) => entry.type)).toEqual(['WithdrawalRequested', 'WithdrawalTransactionSigned', 'WithdrawalBroadcast', 'WithdrawalTransactionReplaced', 'WithdrawalCompleted']);
  });

  it('a crash between recording the replacement and sending it: the restart sends that replacement, never a third', async () => {
    const { before, recipient, id, original } = await stuckWithdrawal(ETHER / 20n);
    await anvil.mine(REPLACE_AFTER_BLOCKS);
    const crash = (type: string) => {
      if (type === 'WithdrawalTransactionReplaced') throw new Error('crash');
    };
    await expect(advanceUntil(id, (state) => state.signedTransaction!.txHash !== original.txHash, 'replaced', { faults: { afterRecord: crash } })).rejects.toThrow('crash');
    const recorded = (await withdrawal(id)).signedTransaction!;
    expect(recorded.txHash).not.toBe(original.txHash);
    expect(await known(recorded.txHash)).toBe(false); // recorded, never sent
    expect(await receipt(original.txHash)).toBeNull();

    await advanceUntil(id, (state) => state.status === 'Completed', 'completed'); // the restart
    const state = await withdrawal(id);
    expect(state).toMatchObject({ status: 'Completed', txnHash: recorded.txHash, replacedTransactions: [{ txHash: original.txHash }] });
    expect(await receipt(recorded.txHash)).not.toBeNull();
    expect(await receipt(original.txHash)).toBeNull();
    expect(await balance(recipient)).toBe(ETHER / 20n);
    expect(await fixture.ledger(eth.id)).toMatchObject({ available: before.available - ETHER / 20n, held: before.held });
    const history = await withdrawalHistory(fixture.infrastructure.store, fixture.orgId, id);
    expect(history.filter((entry) => entry.type === 'WithdrawalTransactionReplaced')).toHaveLength(1);
  });

  // pipelined: three of one organization in flight at consecutive nonces, the first stuck holding the others behind it
  it('three in flight at consecutive nonces, all priced out: the first replaced holds the rest, each replaced at its own nonce, all complete once', async () => {
    const amount = ETHER / 100n;
    const { settlementAddress, gasAddress } = await fixture.wallets.walletsOf(fixture.orgId, ETHEREUM);
    await fixture.credit(ETHEREUM, 'native', 3n * amount);
    await anvil.provider.send('anvil_setBalance', [settlementAddress, `0x${(3n * amount).toString(16)}`]);
    await anvil.provider.send('anvil_setBalance', [gasAddress!, `0x${ETHER.toString(16)}`]);
    const before = await fixture.ledger(eth.id);
    const created: { id: string; recipient: string }[] = [];
    for (let index = 0; index < 3; index++) {
      const recipient = externalAddress(ETHEREUM);
      created.push({ id: (await fixture.withdraw({ chainId: ETHEREUM, tokenId: eth.id, amount, recipient }, { gateways: () => gateway })).id, recipient });
    }
    const worker = fixture.withdrawalProcessor(ETHEREUM, services());
    const states = () => Promise.all(created.map(({ id }) => withdrawal(id)));
    const passUntil = async (done: (all: WithdrawalRecord[]) => boolean, what: string) => {
      for (let pass = 0; !done(await states()); pass++) {
        if (pass > 20) throw new Error(`not ${what}: ${JSON.stringify((await states()).map((state) => [state.status, state.signedTransaction?.nonce, state.txnError]))}`);
        await worker.runPass();
        if (!done(await states())) await anvil.mine(1);
      }
    };

    // the three top-ups, then the three payments, all in flight at once
    await passUntil((all) => all.every((state) => state.status === 'Processing'), 'all broadcast');
    const originals = (await states()).map((state) => state.signedTransaction!);
    expect(originals.map((signed) => signed.nonce)).toEqual([originals[0]!.nonce, originals[0]!.nonce! + 1, originals[0]!.nonce! + 2]);
    // the fee market jumps above what they offer: none is mined
    await anvil.provider.send('anvil_setNextBlockBaseFeePerGas', [`0x${(BigInt(originals[0]!.maxFeePerGas!) * 8n).toString(16)}`]);
    await anvil.mine(REPLACE_AFTER_BLOCKS + 1);
    for (const signed of originals) expect(await receipt(signed.txHash)).toBeNull();

    await passUntil((all) => all.every((state) => state.status === 'Completed'), 'all completed');
    const settled = await states();
    for (const [index, state] of settled.entries()) {
      const original = originals[index]!;
      // replaced at its own nonce (never another nonce, never a second payment): the replacement mined, the original never
      expect(state).toMatchObject({ status: 'Completed', txnError: null, signedTransaction: { nonce: original.nonce } });
      expect(state.replacedTransactions?.map((replaced) => replaced.txHash)).toContain(original.txHash);
      expect(state.txnHash).toBe(state.signedTransaction!.txHash);
      expect(await receipt(state.txnHash!)).not.toBeNull();
      expect(await receipt(original.txHash)).toBeNull();
      expect(await balance(created[index]!.recipient)).toBe(amount);
    }
    expect(await fixture.ledger(eth.id)).toMatchObject({ available: before.available - 3n * amount, held: before.held });
  });
});
