import { decideOnLoaded, loadAggregate, type CommandMetadata } from '../../application/command-handler.js';
import type { OrganizationChainWallets } from '../../application/organization-wallets.js';
import { prepareGasTopUp } from '../../chains/transfers/top-up.js';
import { sendRecorded } from '../../chains/transfers/follow.js';
import { gasTopUpDecider, MAX_TOP_UPS_PER_WITHDRAWAL, type GasTopUpCommand, type GasTopUpState } from '../../domain/gas-top-up/gas-top-up.js';
import { streams } from '../../domain/streams.js';
import type { WithdrawalRecord } from '../../domain/withdrawal/withdrawal.js';
import type { SignedStep } from '../../domain/sweep/sweep.js';
import { settle } from '../settlement.js';
import type { WithdrawalProcessingServices } from './services.js';

export type GasStep = { kind: 'confirmed' } | { kind: 'waiting'; for: 'gas' | 'confirmations' } | { kind: 'signed' } | { kind: 'failed'; error: string };

/**
 * A withdrawal's gas top-ups (EVM, Tron; stream `withdrawalGas-<id>`): the organization's gas wallet
 * sends its settlement wallet exactly the fee a transaction of the withdrawal needs, recorded before
 * it is sent, followed to its end before that transaction is signed. The first top-up pays the
 * withdrawal's fee; one `replacing` a stuck transaction pays what its replacement costs more.
 */
export const withdrawalGasTopUps = async (services: WithdrawalProcessingServices, withdrawal: WithdrawalRecord, wallets: OrganizationChainWallets, metadata: CommandMetadata) => {
  const { chain, gateway, signer, store } = services;
  const gasStream = streams.withdrawalGas(withdrawal.id);
  const gas = await loadAggregate(store, gasStream, gasTopUpDecider);
  const recordGas = async (command: GasTopUpCommand) => {
    const events = await decideOnLoaded(services, gasStream, gasTopUpDecider, gas, command, metadata);
    for (const event of events) await services.faults?.afterRecord?.(event.type);
  };

  /** the top-up in flight followed one look further: confirmed, still on its way, or failed (another may be sent, a bounded number of times) */
  const follow = async (): Promise<GasStep> => {
    if (gas.state.status !== 'Signed') throw new Error('no gas top-up in flight');
    const followed = await followGasTopUp(services, gas.state.step, withdrawal.orgId, wallets, metadata);
    if (followed.kind === 'sent') return { kind: 'waiting', for: 'confirmations' };
    if (followed.kind === 'failed') {
      await recordGas({ type: 'RecordTopUpFailed', withdrawalId: withdrawal.id, error: followed.error });
      // a top-up that provably can never be mined (its nonce taken by another transaction, at depth)
      // is signed afresh on the next pass, a bounded number of times
      if (gas.state.count < MAX_TOP_UPS_PER_WITHDRAWAL) {
        services.logger.warn('withdrawal: gas top-up failed; another will be sent', { withdrawalId: withdrawal.id, error: followed.error });
        return { kind: 'waiting', for: 'gas' };
      }
      return { kind: 'failed', error: `the gas top-up failed: ${followed.error}` };
    }
    await recordGas({ type: 'RecordTopUpConfirmed', withdrawalId: withdrawal.id, blockNumber: followed.blockNumber, fee: followed.fee });
    return { kind: 'confirmed' };
  };

  /** the gas wallet's one signer at a time: its next nonce picked, the top-up of `shortfall` signed, recorded and sent */
  const send = async (shortfall: bigint, replacing?: string): Promise<GasStep> => {
    if (!wallets.gasAddress) return { kind: 'failed', error: `${chain.id} has no gas wallet` };
    const gasAddress = wallets.gasAddress;
    return services.sendingWallets.withWallet(chain, gasAddress, async (): Promise<GasStep> => {
      const topUp = await prepareGasTopUp(signer, gateway, { chain, walletIndex: wallets.index, gasAddress, to: wallets.settlementAddress, shortfall, gasWalletBusy: false, now: services.clock() });
      if (topUp.kind !== 'signed') {
        services.logger.warn('withdrawal: waiting for gas', { withdrawalId: withdrawal.id, gasWallet: gasAddress, ...(topUp.kind === 'wait' ? { required: topUp.required.toString(), available: topUp.available.toString() } : {}) });
        return { kind: 'waiting', for: 'gas' };
      }
      await recordGas({ type: 'RecordTopUpSigned', withdrawalId: withdrawal.id, chainId: chain.id, step: topUp.step, ...(replacing ? { replacing } : {}) });
      await sendRecorded(services, topUp.step);
      return { kind: 'signed' };
    });
  };

  return { state: gas.state as GasTopUpState, loaded: gas, follow, send };
};

/**
 * One look at a gas top-up in flight (a withdrawal's own or its organization's buffer's), under the
 * settlement rule: only proof fails it; a refused one is made impossible by a cancellation from the
 * gas wallet (EVM) or expires (Tron).
 */
export const followGasTopUp = (services: WithdrawalProcessingServices, step: SignedStep, orgId: string, wallets: OrganizationChainWallets, metadata: CommandMetadata) => {
  const gasWallet = { branch: 'gas' as const, index: wallets.index };
  return settle(services, { current: step }, {
    orgId,
    metadata,
    sender: async () => (services.chain.family === 'evm' && wallets.gasAddress ? { family: 'evm', wallet: gasWallet, address: wallets.gasAddress } : { family: 'expires' }),
  });
};
