import { handleCommand, type CommandServices } from '../../src/application/command-handler.js';
import { confirmDeposit, recordDeposit, revertDeposit } from '../../src/application/deposits.js';
import { accountDecider, type AccountProperties } from '../../src/domain/account/account.js';
import type { DepositRef } from '../../src/domain/deposit/deposit.js';
import { streams } from '../../src/domain/streams.js';
import { sweepDecider, type SweepCommand } from '../../src/domain/sweep/decide.js';
import type { SignedStep, SweepPlan } from '../../src/domain/sweep/sweep.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { observed, ownerOf } from './deposits.js';

export const SCENARIO_ORG_A = 'org_scenarioA';
export const SCENARIO_ORG_B = 'org_scenarioB';
const USDT = '0xdac17f958d2ee523a2206206994597c13d831ec7';
const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';
const XRP = 'xrpl:mainnet';
const metadata = { actor: 'watcher:test' };

const step = (txHash: string, amount: string): SignedStep => ({
  txHash,
  raw: `0xraw${txHash.slice(2, 10)}`,
  nonce: 7,
  from: '0x00000000000000000000000000000000000000a1',
  to: '0x00000000000000000000000000000000000000c1',
  amount,
  estimatedFee: '21000000000000',
});

const plan = (ref: DepositRef, orgId: string, kind: 'native' | 'token', amount: string): SweepPlan => ({
  ...ref,
  orgId,
  tokenId: kind === 'native' ? `${ref.chainId}/slip44:60` : `${ref.chainId}/erc20:${USDT}`,
  kind,
  asset: kind === 'native' ? 'native' : USDT,
  amount,
  depositAddress: '0x00000000000000000000000000000000000000a1',
  depositIndex: 3,
  settlementAddress: '0x00000000000000000000000000000000000000c1',
  walletIndex: 0,
  gasWalletAddress: kind === 'token' ? '0x00000000000000000000000000000000000000d1' : null,
});

/**
 * Accounts, deposits and sweeps as the application appends them (its command handlers and the real
 * deciders), interleaved so that batches cut through lifecycles: accounts on three chain families
 * (XRP with its tag); deposits credited, left pending, reverted and detected again in a later block,
 * unattributed, below the minimum, on a chain without sweeps; sweeps native and token (waiting for
 * gas, topped up), failed and skipped. The clock moves a second per decision.
 */
export const appendDepositScenario = async (store: EventStore) => {
  let now = Date.parse('2026-11-22T12:00:00.000Z');
  const services: CommandServices = { store, clock: () => new Date((now += 1000)) };

  const account = (orgId: string, chainId: string, externalUserId: string, properties: AccountProperties, index: number) =>
    handleCommand(
      services,
      streams.account(orgId, chainId, externalUserId),
      accountDecider,
      { type: 'CreateAccount', orgId, chainId, externalUserId, orgDepositAccountId: `acc_${orgId}_${chainId}_${externalUserId}`, properties, derivation: { space: `test-${chainId}`, index } },
      { ...metadata, orgId },
    );
  const sweep = (ref: DepositRef, command: SweepCommand) => handleCommand(services, streams.sweep(ref.chainId, ref.txHash, ref.index), sweepDecider, command, metadata);

  await account(SCENARIO_ORG_A, 'eip155:1', 'user-1', { address: '0x00000000000000000000000000000000000000a1' }, 0);
  await account(SCENARIO_ORG_A, XRP, 'user-2', { address: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe', destinationTag: '4242' }, 0);
  await account(SCENARIO_ORG_B, 'eip155:56', 'user-3', { address: '0x00000000000000000000000000000000000000b3' }, 1);

  const ethereum = observed(1, { amount: 1_500_000_000_000_000_000n });
  const usdt = observed(2, { amount: 25_000_000n, asset: USDT, index: 4 });
  const reorged = observed(3, { amount: 2_000_000_000_000_000n });
  const unattributed = observed(4, { amount: 9_000_000_000_000_000n });
  const dust = observed(5, { amount: 1n });
  const bitcoin = observed(6, { chainId: BITCOIN, txHash: '6'.repeat(64), asset: 'native', amount: 50_000n, index: 1 });
  const pending = observed(7, { chainId: 'eip155:56', amount: 3_000_000_000_000_000n });
  const failing = observed(8, { amount: 4_000_000_000_000_000n });
  const skipped = observed(9, { amount: 5_000_000_000_000_000n });

  await recordDeposit(services, ethereum, ownerOf(SCENARIO_ORG_A, 'user-1'), metadata);
  await recordDeposit(services, usdt, ownerOf(SCENARIO_ORG_A, 'user-1'), metadata);
  await recordDeposit(services, reorged, ownerOf(SCENARIO_ORG_B, 'user-3'), metadata);
  await account(SCENARIO_ORG_B, BITCOIN, 'user-3', { address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' }, 0);
  await recordDeposit(services, unattributed, null, metadata);
  await recordDeposit(services, dust, ownerOf(SCENARIO_ORG_A, 'user-1'), metadata);
  await confirmDeposit(services, ethereum, 12, metadata);
  await revertDeposit(services, reorged, 'block 1003 was replaced', metadata);
  await recordDeposit(services, bitcoin, ownerOf(SCENARIO_ORG_B, 'user-3', BITCOIN), metadata);
  await sweep(ethereum, { type: 'ScheduleSweep', plan: plan(ethereum, SCENARIO_ORG_A, 'native', '1500000000000000000') });
  await recordDeposit(services, { ...reorged, blockNumber: 1010, blockHash: '0xb1010' }, ownerOf(SCENARIO_ORG_B, 'user-3'), metadata);
  await confirmDeposit(services, usdt, 12, metadata);
  await sweep(ethereum, { type: 'RecordSweepSigned', step: step('0x51', '1499979000000000000') });
  await confirmDeposit(services, unattributed, 12, metadata);
  await sweep(usdt, { type: 'ScheduleSweep', plan: plan(usdt, SCENARIO_ORG_A, 'token', '25000000') });
  await confirmDeposit(services, dust, 12, metadata);
  await sweep(usdt, { type: 'WaitForGas', required: 172_000_000_000_000n, available: 0n });
  await confirmDeposit(services, reorged, 15, metadata);
  await sweep(ethereum, { type: 'RecordSweepBroadcast' });
  await recordDeposit(services, pending, ownerOf(SCENARIO_ORG_B, 'user-3', 'eip155:56'), metadata);
  await sweep(usdt, { type: 'RecordTopUpSigned', step: step('0x52', '130000000000000') });
  await confirmDeposit(services, bitcoin, 6, metadata);
  await sweep(usdt, { type: 'RecordTopUpBroadcast' });
  await sweep(ethereum, { type: 'RecordSweepConfirmed', blockNumber: 1100, fee: 21_000_000_000_000n, feeCharged: 21_000_000_000_000n });
  await sweep(usdt, { type: 'RecordTopUpConfirmed', blockNumber: 1101, fee: 42_000_000_000_000n });
  await recordDeposit(services, failing, ownerOf(SCENARIO_ORG_A, 'user-1'), metadata);
  await recordDeposit(services, skipped, ownerOf(SCENARIO_ORG_A, 'user-1'), metadata);
  await sweep(usdt, { type: 'RecordSweepSigned', step: step('0x53', '25000000') });
  await confirmDeposit(services, failing, 12, metadata);
  await confirmDeposit(services, skipped, 12, metadata);
  await sweep(failing, { type: 'ScheduleSweep', plan: plan(failing, SCENARIO_ORG_A, 'native', '4000000000000000') });
  await sweep(skipped, { type: 'ScheduleSweep', plan: plan(skipped, SCENARIO_ORG_A, 'native', '5000000000000000') });
  await sweep(usdt, { type: 'RecordSweepBroadcast' });
  await sweep(failing, { type: 'RecordSweepSigned', step: step('0x54', '3979000000000000') });
  await sweep(skipped, { type: 'SkipSweep', reason: 'the fee exceeds the deposit', fee: 6_000_000_000_000_000n });
  await sweep(failing, { type: 'FailSweep', error: 'nonce too low' });
  await sweep(usdt, { type: 'RecordSweepConfirmed', blockNumber: 1102, fee: 130_000_000_000_000n, feeCharged: 0n });
  return { ethereum, usdt, reorged, unattributed, dust, bitcoin, pending, failing, skipped };
};
