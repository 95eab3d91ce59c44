import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrganizationWallets } from '../../src/application/organization-wallets.js';
import { advanceWithdrawal } from '../../src/processes/withdrawal-processor/advance.js';
import type { Devnet } from '../../src/chains/devnet/index.js';
import { TRON_NATIVE_TRANSFER_FEE_SUN, TRON_TOKEN_TRANSFER_FEE_SUN } from '../../src/chains/devnet/fees.js';
import type { ChainGateway, FeeEstimate } from '../../src/chains/gateway.js';
import { findChain } from '../../src/catalog/registry.js';
import { prepareGasTopUp } from '../../src/chains/transfers/top-up.js';
import { findToken, nativeToken } from '../../src/catalog/tokens.js';
import { tronTransferCost, type TronPrices } from '../../src/chains/tron/resource-fees.js';
import { streams } from '../../src/domain/streams.js';
import type { Infrastructure } from '../../src/infrastructure.js';
import { externalAddress, startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';

const TRON = 'tron:0x00000000000000000000000000000000';
const USDT = findToken(`${TRON}/trc20:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t`)!;
/** mainnet's prices (getchainparameters): 1000 sun per byte, 210 sun per energy unit */
const PRICES: TronPrices = { transactionFee: 1_000n, energyFee: 210n, createAccountFee: 100_000n, createNewAccountFee: 1_000_000n };
/** the settlement wallet's resources as getaccountresource shows them: today's free bandwidth unused, 100,000 energy staked */
const RESOURCES = { freeNetLimit: 600, freeNetUsed: 0, EnergyLimit: 100_000, EnergyUsed: 0 };
const TRC20_ENERGY = 64_285n;

/**
 * When the sender's free bandwidth (and, for TRC-20, its staked energy) covers a Tron transfer, the
 * real gateway's estimate is zero. The withdrawal then needs no gas: created without
 * INSUFFICIENT_GAS from an empty gas wallet, signed with no top-up (a TRX transfer of 0 is no
 * transaction), sent and completed. The devnet stands in for the node, its estimate replaced by
 * what the Tron gateway computes from those resources; the devnet still burns its fixed fee at
 * mining (it has no bandwidth), so the settlement wallet holds that much TRX beside the amount.
 */
describe('Tron: a zero fee estimate needs no gas top-up', () => {
  let fixture: ChainWorkerFixture;
  let infrastructure: Infrastructure;
  let devnet: Devnet;
  let wallets: OrganizationWallets;
  let orgId: string;

  beforeAll(async () => {
    fixture = await startChainWorkerFixture('tron_zero_fee', { projections: 'none' });
    ({ infrastructure, devnet, wallets, orgId } = fixture);
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  /** the devnet's Tron chain, estimating as the node gateway does for a sender with these resources */
  const freeResourcesGateway = (): ChainGateway => {
    const base = devnet.gateway(TRON);
    return {
      ...base,
      estimateFee: async ({ asset }): Promise<FeeEstimate> => {
        if (asset === 'native') return { fee: tronTransferCost({ prices: PRICES, resources: RESOURCES }).fee, parameters: { feeLimit: '0' } };
        const { fee, feeLimit } = tronTransferCost({ prices: PRICES, resources: RESOURCES, energy: TRC20_ENERGY });
        return { fee, parameters: { feeLimit: String(feeLimit), energy: String(TRC20_ENERGY) } };
      },
    };
  };
  const services = () => fixture.workerServices(TRON, { gateway: freeResourcesGateway() });
  /** the organization's ledger credited by a confirmed deposit */
  const credit = async (asset: string, amount: bigint) => {
    await fixture.credit(TRON, asset, amount);
  };
  const withdraw = (tokenId: string, amount: bigint, recipient: string) =>
    fixture.withdraw({ chainId: TRON, tokenId, amount, recipient }, { gateways: () => freeResourcesGateway() });
  const runToCompletion = async (id: string) => {
    for (let pass = 0; ; pass++) {
      const state = await fixture.withdrawal(id);
      if (state.status === 'Completed' || state.status === 'Failed') return state;
      if (pass > 8) throw new Error(`not finished: ${JSON.stringify(state)}`);
      await advanceWithdrawal(services(), id);
      await fixture.mineConfirmations(TRON);
    }
  };

  it('the estimate is zero for both kinds of transfer, and a TRC-20 one still carries a fee limit', () => {
    expect(tronTransferCost({ prices: PRICES, resources: RESOURCES })).toEqual({ fee: 0n, feeLimit: 0n });
    expect(tronTransferCost({ prices: PRICES, resources: RESOURCES, energy: TRC20_ENERGY })).toEqual({ fee: 0n, feeLimit: (TRC20_ENERGY * 210n * 120n + 99n) / 100n });
  });

  it('a gas top-up of nothing is refused before anything is signed', async () => {
    const { gasAddress, settlementAddress, index } = await wallets.walletsOf(orgId, TRON);
    await expect(
      prepareGasTopUp(infrastructure.signer!, freeResourcesGateway(), { chain: findChain(TRON)!, walletIndex: index, gasAddress: gasAddress!, to: settlementAddress, shortfall: 0n, gasWalletBusy: false, now: fixture.clock() }),
    ).rejects.toThrow(RangeError);
  });

  it('TRX: created with an empty gas wallet, sent without a top-up, completed', async () => {
    const trx = nativeToken(TRON);
    await credit('native', 50_000_000n);
    const { settlementAddress, gasAddress } = await wallets.walletsOf(orgId, TRON);
    await devnet.controls(TRON).deposit({ toAddress: settlementAddress, asset: 'native', amount: 20_000_000n + TRON_NATIVE_TRANSFER_FEE_SUN, destinationTag: null });
    expect(await devnet.gateway(TRON).balance(gasAddress!, 'native')).toBe(0n);
    const recipient = externalAddress(TRON);

    const created = await withdraw(trx.id, 20_000_000n, recipient);
    expect(created.status).toBe('Pending');
    expect(await runToCompletion(created.id)).toMatchObject({ status: 'Completed' });
    expect(await infrastructure.store.readStream(streams.withdrawalGas(created.id))).toEqual([]);
    expect(await devnet.gateway(TRON).balance(recipient, 'native')).toBe(20_000_000n);
    expect(await devnet.gateway(TRON).balance(gasAddress!, 'native')).toBe(0n);
  });

  it('TRC-20: staked energy and free bandwidth pay it; no top-up, the fee limit signed, completed', async () => {
    await credit(USDT.address, 30_000_000n);
    const { settlementAddress, gasAddress } = await wallets.walletsOf(orgId, TRON);
    await devnet.controls(TRON).deposit({ toAddress: settlementAddress, asset: USDT.address, amount: 30_000_000n, destinationTag: null });
    await devnet.controls(TRON).deposit({ toAddress: settlementAddress, asset: 'native', amount: TRON_TOKEN_TRANSFER_FEE_SUN, destinationTag: null });
    const recipient = externalAddress(TRON);

    const created = await withdraw(USDT.id, 12_000_000n, recipient);
    const completed = await runToCompletion(created.id);
    expect(completed).toMatchObject({ status: 'Completed' });
    expect(await infrastructure.store.readStream(streams.withdrawalGas(created.id))).toEqual([]);
    expect((JSON.parse(completed.signedTransaction!.raw) as { raw_data: { fee_limit: number } }).raw_data.fee_limit).toBe(Number((TRC20_ENERGY * 210n * 120n + 99n) / 100n));
    expect(await devnet.gateway(TRON).balance(recipient, USDT.address)).toBe(12_000_000n);
    expect(await devnet.gateway(TRON).balance(gasAddress!, 'native')).toBe(0n);
  });
});
