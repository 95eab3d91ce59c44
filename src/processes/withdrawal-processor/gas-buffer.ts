import { decideAndAppend, decideOnLoaded, type CommandMetadata } from '../../application/command-handler.js';
import { loadGasBuffer } from '../../application/gas-buffers.js';
import type { OrganizationChainWallets } from '../../application/organization-wallets.js';
import { sendRecorded } from '../../chains/transfers/follow.js';
import { prepareGasTopUp } from '../../chains/transfers/top-up.js';
import { gasBufferDecider, type GasBufferAccount, type GasBufferCommand } from '../../domain/gas-buffer/gas-buffer.js';
import { gasTopUpDecider, type GasTopUpState } from '../../domain/gas-top-up/gas-top-up.js';
import { streams } from '../../domain/streams.js';
import type { WithdrawalRecord } from '../../domain/withdrawal/withdrawal.js';
import type { ExpectedRevision } from '../../eventstore/port.js';
import { followGasTopUp } from './gas.js';
import type { GasBufferPolicy, WithdrawalProcessingServices } from './services.js';

export type GasDraw = { kind: 'drawn' } | { kind: 'waiting'; for: 'gas' } | { kind: 'failed'; error: string };

export type LoadedBuffer = { state: GasBufferAccount; expectedRevision: ExpectedRevision };

/**
 * EVM, Tron: a withdrawal's fee drawn from its organization's gas buffer, so a settlement wallet
 * that holds enough gas pays at once, with no top-up of its own to wait for. The draw is appended
 * to the buffer's stream and the withdrawal's gas stream in one append, at the revisions read (the
 * withdrawal's stream says it drew, so a crash before its transaction is recorded never draws
 * twice). When the account is short the withdrawal waits: for the top-up in flight, or for one
 * sent now, sized for the policy's payments (at least what this one lacks). When a draw leaves the
 * account under its low-water mark, the next top-up is sent at once, in the background of the
 * payments it will serve.
 */
export const drawFromGasBuffer = async (
  services: WithdrawalProcessingServices,
  policy: GasBufferPolicy,
  request: { withdrawal: WithdrawalRecord; wallets: OrganizationChainWallets; gas: { state: GasTopUpState; expectedRevision: ExpectedRevision }; lacking: bigint; feePerPayment: bigint },
  metadata: CommandMetadata,
  /** the buffer as the caller's step read it (the draw is appended at its revision); read here when absent */
  loaded?: LoadedBuffer,
): Promise<GasDraw> => {
  const { chain, store } = services;
  const { withdrawal, wallets, lacking, feePerPayment } = request;
  const lowWater = feePerPayment * BigInt(policy.lowWaterPayments);
  const target = feePerPayment * BigInt(Math.max(policy.payments, 1));
  let buffer = loaded ?? (await loadGasBuffer(store, chain.id, withdrawal.orgId));
  // the top-up in flight is looked at when the account is short of this draw or would be under its mark after it
  if (buffer.state.topUp && buffer.state.balance - lacking < lowWater) {
    buffer = await followBufferTopUp(services, withdrawal.orgId, wallets, buffer, metadata);
  }
  if (buffer.state.balance < lacking) {
    if (buffer.state.topUp) return { kind: 'waiting', for: 'gas' };
    const sent = await sendBufferTopUp(services, withdrawal.orgId, wallets, buffer, { floor: lacking - buffer.state.balance, wanted: target - buffer.state.balance }, metadata);
    return sent.kind === 'failed' ? sent : { kind: 'waiting', for: 'gas' };
  }

  const drawn = await decideAndAppend(
    services,
    metadata,
    async (now) => {
      const command = { orgId: withdrawal.orgId, chainId: chain.id };
      const bufferEvents = gasBufferDecider.decide({ ...command, type: 'DrawGas', withdrawalId: withdrawal.id, fee: lacking }, buffer.state, { now });
      const gasEvents = gasTopUpDecider.decide({ type: 'RecordGasDrawn', withdrawalId: withdrawal.id, chainId: chain.id, fee: lacking }, request.gas.state, { now });
      const appends = [
        { stream: streams.gasBuffer(chain.id, withdrawal.orgId), expectedRevision: buffer.expectedRevision, events: bufferEvents },
        { stream: streams.withdrawalGas(withdrawal.id), expectedRevision: request.gas.expectedRevision, events: gasEvents },
      ];
      return { appends, result: { events: [...bufferEvents, ...gasEvents], after: bufferEvents.reduce(gasBufferDecider.evolve, buffer.state) } };
    },
    { maxAttempts: 1 },
  );
  for (const event of drawn.events) await services.faults?.afterRecord?.(event.type);
  const revision = typeof buffer.expectedRevision === 'bigint' ? buffer.expectedRevision + 1n : 0n;
  if (!drawn.after.topUp && drawn.after.balance < lowWater) {
    await sendBufferTopUp(services, withdrawal.orgId, wallets, { state: drawn.after, expectedRevision: revision }, { floor: 0n, wanted: target - drawn.after.balance }, metadata);
  }
  return { kind: 'drawn' };
};

/**
 * What of the settlement wallet's native coins is the buffer's (the operator's gas), never a
 * payment's amount: the account, and a top-up the chain has mined that the account has not taken
 * in yet (its coins are in the wallet's balance already).
 */
export const gasBufferCoins = async (services: WithdrawalProcessingServices, { state }: LoadedBuffer): Promise<bigint> => {
  if (!state.topUp) return state.balance;
  const status = await services.gateway.transactionStatus(state.topUp.txHash);
  return state.balance + (status.status === 'confirmed' ? BigInt(state.topUp.amount) : 0n);
};

const recordOnBuffer = async (services: WithdrawalProcessingServices, orgId: string, buffer: LoadedBuffer, command: GasBufferCommand, metadata: CommandMetadata): Promise<LoadedBuffer> => {
  const stream = streams.gasBuffer(services.chain.id, orgId);
  const events = await decideOnLoaded(services, stream, gasBufferDecider, buffer, command, metadata);
  for (const event of events) await services.faults?.afterRecord?.(event.type);
  const revision = typeof buffer.expectedRevision === 'bigint' ? buffer.expectedRevision : -1n;
  return { state: events.reduce(gasBufferDecider.evolve, buffer.state), expectedRevision: events.length === 0 ? buffer.expectedRevision : revision + BigInt(events.length) };
};

/** The buffer's top-up in flight, one look further: received (the account grows by it), still on its way, or failed (nothing received). */
const followBufferTopUp = async (services: WithdrawalProcessingServices, orgId: string, wallets: OrganizationChainWallets, buffer: LoadedBuffer, metadata: CommandMetadata): Promise<LoadedBuffer> => {
  const { topUp } = buffer.state;
  if (!topUp) return buffer;
  const command = { orgId, chainId: services.chain.id };
  const followed = await followGasTopUp(services, topUp, orgId, wallets, metadata);
  if (followed.kind === 'sent') return buffer;
  if (followed.kind === 'failed') {
    services.logger.warn('gas buffer: the top-up can never be mined; another will be sent', { chainId: services.chain.id, orgId, txHash: topUp.txHash, error: followed.error });
    return recordOnBuffer(services, orgId, buffer, { ...command, type: 'RecordBufferTopUpFailed', error: followed.error }, metadata);
  }
  return recordOnBuffer(services, orgId, buffer, { ...command, type: 'RecordBufferTopUpConfirmed', blockNumber: followed.blockNumber, fee: followed.fee }, metadata);
};

/**
 * One top-up of the buffer from the gas wallet, as its one signer (the sweeper pays gas from it
 * too): `wanted`, but never more than half of what the gas wallet can spend (its sweeps' top-ups
 * keep the rest) and never less than `floor` (what the payment at hand lacks). Recorded before it
 * is sent; a crash in between leaves the recorded bytes, which the next look sends.
 */
const sendBufferTopUp = async (
  services: WithdrawalProcessingServices,
  orgId: string,
  wallets: OrganizationChainWallets,
  buffer: LoadedBuffer,
  size: { floor: bigint; wanted: bigint },
  metadata: CommandMetadata,
): Promise<{ kind: 'sent' | 'waiting' } | { kind: 'failed'; error: string }> => {
  const { chain, gateway, signer } = services;
  if (!wallets.gasAddress) return { kind: 'failed', error: `${chain.id} has no gas wallet` };
  const gasAddress = wallets.gasAddress;
  return services.sendingWallets.withWallet(chain, gasAddress, async () => {
    const spendable = await gateway.balance(gasAddress, 'native');
    const ceiling = spendable / 2n;
    const withinCeiling = size.wanted < ceiling ? size.wanted : ceiling;
    const amount = withinCeiling > size.floor ? withinCeiling : size.floor;
    if (amount <= 0n) return { kind: 'waiting' as const };
    const topUp = await prepareGasTopUp(signer, gateway, { chain, walletIndex: wallets.index, gasAddress, to: wallets.settlementAddress, shortfall: amount, gasWalletBusy: false, now: services.clock() });
    if (topUp.kind !== 'signed') {
      services.logger.warn('gas buffer: waiting for gas', { chainId: chain.id, orgId, gasWallet: gasAddress, ...(topUp.kind === 'wait' ? { required: topUp.required.toString(), available: topUp.available.toString() } : {}) });
      return { kind: 'waiting' as const };
    }
    await recordOnBuffer(services, orgId, buffer, { type: 'RecordBufferTopUpSigned', orgId, chainId: chain.id, step: topUp.step }, metadata);
    await sendRecorded(services, topUp.step);
    services.logger.info('gas buffer: topped up', { chainId: chain.id, orgId, txHash: topUp.step.txHash, amount: amount.toString() });
    return { kind: 'sent' as const };
  });
};
