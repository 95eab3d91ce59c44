import { sql, type Kysely } from 'kysely';
import type { ChainDefinition } from '../../catalog/chain.js';
import type { ChainGateway } from '../../chains/gateway.js';
import type { CancellationSender } from '../../chains/transfers/cancellation.js';
import { sendRecorded, type TransferFaults } from '../../chains/transfers/follow.js';
import type { SendingWalletLocks } from '../sending-wallets.js';
import { settle } from '../settlement.js';
import type { Signer } from '../../chains/signer/signer.js';
import { signSweepTransfer } from '../../chains/transfers/transactions.js';
import { prepareGasTopUp } from '../../chains/transfers/top-up.js';
import { findToken, nativeToken } from '../../catalog/tokens.js';
import type { Database } from '../../db/database.js';
import { accountDecider } from '../../domain/account/account.js';
import { depositDecider } from '../../domain/deposit/decide.js';
import { depositKey, type DepositRef } from '../../domain/deposit/deposit.js';
import { DomainError } from '../../errors.js';
import { ledgerDecider } from '../../domain/ledger/decide.js';
import { streams } from '../../domain/streams.js';
import { sweepDecider, type SweepCommand } from '../../domain/sweep/decide.js';
import { isTerminal, type Sweep, type SweepPlan, type SweepStatus } from '../../domain/sweep/sweep.js';
import type { ExpectedRevision } from '../../eventstore/port.js';
import type { Logger } from '../../log.js';
import { decideOnLoaded, loadAggregate, type CommandMetadata, type CommandServices, type DecidedAppend } from '../../application/command-handler.js';
import type { OrganizationWallets } from '../../application/organization-wallets.js';
import { onLedger, type LedgerBatcher } from '../../application/ledger-batches.js';

export interface SweepServices extends CommandServices {
  chain: ChainDefinition;
  gateway: ChainGateway;
  signer: Signer;
  wallets: OrganizationWallets;
  db: Kysely<Database>;
  logger: Logger;
  /** the sending wallets' locks (one signer per wallet across processes), on sessions of their own */
  sendingWallets: SendingWalletLocks;
  /** defaults to the process's shared batcher, so every writer of one ledger takes turns */
  ledgerBatcher?: LedgerBatcher;
  /** fault injection for crash tests */
  faults?: TransferFaults;
}

/**
 * Sending addresses with a transaction of an unfinished sweep, and which sweep stream holds each:
 * one sweep at a time per deposit address, one top-up at a time per gas wallet, so a nonce is
 * never taken twice and a confirmed balance is never already promised to a pending transaction.
 */
export type SenderClaims = Map<string, string>;

export type SweepProgress =
  | { outcome: 'finished'; status: SweepStatus | 'NotSweepable' }
  | { outcome: 'waiting'; status: SweepStatus; for: 'gas' | 'confirmations' }
  | { outcome: 'deferred'; reason: string };

const MAX_STEPS_PER_CALL = 12;

const addressKey = (chain: ChainDefinition, address: string) => (chain.family === 'evm' ? address.toLowerCase() : address);

const DEPOSIT_ADDRESS_HELD: readonly SweepStatus[] = ['Scheduled', 'TopUpSigned', 'TopUpBroadcast', 'TopUpConfirmed', 'SweepSigned', 'SweepBroadcast'];

/** The addresses a sweep in this state holds. */
export const claimedAddresses = (chain: ChainDefinition, sweep: Sweep): string[] => {
  if (sweep.status === 'None') return [];
  const held: string[] = [];
  if (DEPOSIT_ADDRESS_HELD.includes(sweep.status)) held.push(addressKey(chain, sweep.plan.depositAddress));
  if ((sweep.status === 'TopUpSigned' || sweep.status === 'TopUpBroadcast') && sweep.plan.gasWalletAddress) held.push(addressKey(chain, sweep.plan.gasWalletAddress));
  return held;
};

const setClaims = (claims: SenderClaims, chain: ChainDefinition, stream: string, sweep: Sweep) => {
  for (const [address, holder] of claims) if (holder === stream) claims.delete(address);
  for (const address of claimedAddresses(chain, sweep)) claims.set(address, stream);
};

const heldByAnother = (claims: SenderClaims, chain: ChainDefinition, stream: string, address: string): boolean => {
  const holder = claims.get(addressKey(chain, address));
  return holder !== undefined && holder !== stream;
};

/** What a credited, confirmed deposit is swept with; null when the deposit is not one to sweep. */
const planFor = async (services: SweepServices, ref: DepositRef): Promise<SweepPlan | null> => {
  const { state: deposit } = await loadAggregate(services.store, streams.deposit(ref.chainId, ref.txHash, ref.index), depositDecider);
  if (deposit.status !== 'Confirmed' || !deposit.credited || deposit.orgId === null || deposit.externalUserId === null || deposit.accountChainId === null) return null;
  const token = findToken(deposit.tokenId);
  if (!token) throw new Error(`deposit of ${deposit.tokenId}, which the catalog does not have`);
  const { state: account } = await loadAggregate(services.store, streams.account(deposit.orgId, deposit.accountChainId, deposit.externalUserId), accountDecider);
  if (account.status !== 'Created') throw new Error(`deposit ${depositKey(ref)} names an account that does not exist`);
  const wallets = await services.wallets.walletsOf(deposit.orgId, ref.chainId, { actor: `sweeper:${ref.chainId}` });
  const native = token.kind === 'native';
  return {
    ...ref,
    orgId: deposit.orgId,
    tokenId: token.id,
    kind: native ? 'native' : 'token',
    asset: native ? 'native' : token.address,
    amount: deposit.amount,
    depositAddress: deposit.toAddress,
    depositIndex: account.derivation.index,
    settlementAddress: wallets.settlementAddress,
    walletIndex: wallets.index,
    gasWalletAddress: native ? null : wallets.gasAddress,
  };
};

/**
 * Native coins at a deposit address that no native deposit owns: credited native deposits not yet
 * swept are the organization's money and are moved by their own sweeps, never spent as gas.
 */
const spareNative = async (services: SweepServices, depositAddress: string): Promise<bigint> => {
  const { chain, gateway, db } = services;
  const balance = await gateway.balance(depositAddress, 'native');
  // found by deposits_chain_address_idx (lowercase); other families' addresses are also compared exactly
  const exactly = chain.family === 'evm' ? sql<boolean>`true` : sql<boolean>`d.to_address = ${depositAddress}`;
  const { rows } = await sql<{ reserved: string | null }>`
    select sum(d.amount) as reserved from deposits d
      left join sweeps s on s.chain_id = d.chain_id and s.tx_hash = d.tx_hash and s.output_index = d.output_index
     where d.chain_id = ${chain.id} and lower(d.to_address) = ${depositAddress.toLowerCase()} and ${exactly}
       and d.token_id = ${nativeToken(chain.id).id} and d.credit = 'credit' and d.status <> 'reverted'
       and (s.status is null or s.status <> 'Confirmed')
  `.execute(db);
  const spare = balance - BigInt(rows[0]?.reserved ?? 0);
  return spare > 0n ? spare : 0n;
};

/** The sweep confirmed: a native sweep's fee is charged to the organization's ledger in the same append. */
const confirmSweep = async (services: SweepServices, stream: string, plan: SweepPlan, blockNumber: number, fee: bigint, metadata: CommandMetadata) => {
  const ledgerStream = streams.ledger(plan.orgId, plan.tokenId);
  await onLedger(services, ledgerStream, metadata, {
    stream,
    read: () => loadAggregate(services.store, stream, sweepDecider),
    decide: (ledger, now, sweep) => {
      const confirmedNow = sweep.state.status !== 'Confirmed';
      const appends: DecidedAppend[] = [];
      let feeCharged = 0n;
      if (confirmedNow && plan.kind === 'native' && fee > 0n) {
        try {
          const charged = ledgerDecider.decide({ type: 'ChargeFee', orgId: plan.orgId, tokenId: plan.tokenId, amount: fee, reason: 'sweep', reference: `sweep:${depositKey(plan)}` }, ledger.state, { now });
          appends.push({ stream: ledgerStream, expectedRevision: ledger.expectedRevision, events: charged });
          feeCharged = fee;
        } catch (error) {
          if (!(error instanceof DomainError) || error.code !== 'INSUFFICIENT_BALANCE') throw error;
          // the chain took the fee already; the ledger cannot go negative: recorded uncharged, for an operator
          services.logger.error('sweep: the fee exceeds the available balance; recorded without charging it', { chainId: plan.chainId, deposit: depositKey(plan), fee: fee.toString() });
        }
      }
      const events = sweepDecider.decide({ type: 'RecordSweepConfirmed', blockNumber, fee, feeCharged }, sweep.state, { now });
      appends.unshift({ stream, expectedRevision: sweep.expectedRevision, events });
      return { appends, result: {} };
    },
  });
};

/** A sweep's stream as read: its state and the revision it stands at. */
export interface LoadedSweep {
  state: Sweep;
  expectedRevision: ExpectedRevision;
}

/**
 * Takes one deposit's sweep as far as it can go now: plans it, signs and records a step, sends it,
 * follows it, until it must wait (gas, confirmations, another sweep holding the sender) or is
 * finished. Every decision is appended with the revision it was made on, so two sweepers racing on
 * one deposit cannot both record a signature: the loser's bytes are dropped unsent. `known`, the
 * stream as the caller just read it, stands in for the first step's read: a decision on it appends
 * at its revision, so a stream that moved meanwhile is a conflict (the call throws), never a step
 * made twice.
 */
export const advanceSweep = async (services: SweepServices, ref: DepositRef, claims: SenderClaims = new Map(), known?: LoadedSweep): Promise<SweepProgress> => {
  const { chain, gateway, signer, store, logger } = services;
  const stream = streams.sweep(ref.chainId, ref.txHash, ref.index);
  const log = logger.child({ chainId: ref.chainId, deposit: depositKey(ref) });
  let metadata: CommandMetadata = { actor: `sweeper:${ref.chainId}` };
  let state: Sweep = { status: 'None' };
  const steps = async (): Promise<SweepProgress> => {
    for (let stepCount = 0; stepCount < MAX_STEPS_PER_CALL; stepCount++) {
      // the first step on what the caller read, when it read it; every later one on a read of its own
      const loaded = stepCount === 0 && known ? known : await loadAggregate(store, stream, sweepDecider);
      state = loaded.state;
      if (state.status !== 'None') metadata = { ...metadata, orgId: state.plan.orgId };
      const record = async (command: SweepCommand): Promise<boolean> => {
        const events = await decideOnLoaded(services, stream, sweepDecider, loaded, command, metadata);
        if (events.length === 0) return false;
        state = events.reduce(sweepDecider.evolve, loaded.state);
        setClaims(claims, chain, stream, state);
        for (const event of events) await services.faults?.afterRecord?.(event.type);
        return true;
      };

      if (state.status === 'None') {
        const plan = await planFor(services, ref);
        if (!plan) return { outcome: 'finished', status: 'NotSweepable' };
        if (heldByAnother(claims, chain, stream, plan.depositAddress)) return { outcome: 'deferred', reason: 'another sweep of this deposit address is under way' };
        metadata = { ...metadata, orgId: plan.orgId };
        await record({ type: 'ScheduleSweep', plan });
        log.info('sweep: scheduled', { kind: plan.kind, amount: plan.amount });
        continue;
      }
      if (isTerminal(state)) return { outcome: 'finished', status: state.status };
      const { plan } = state;
      const now = services.clock();

      switch (state.status) {
        case 'Scheduled':
        case 'WaitingForGas': {
          if (heldByAnother(claims, chain, stream, plan.depositAddress)) return { outcome: 'deferred', reason: 'another sweep of this deposit address is under way' };
          const amount = BigInt(plan.amount);
          const estimate = await gateway.estimateFee({ from: plan.depositAddress, to: plan.settlementAddress, asset: plan.asset, amount });
          const depositWallet = { branch: 'receive' as const, index: plan.depositIndex };
          if (plan.kind === 'native') {
            if (amount <= estimate.fee) {
              await record({ type: 'SkipSweep', reason: `the deposit (${amount}) does not cover the fee (${estimate.fee})`, fee: estimate.fee });
              log.warn('sweep: skipped, the deposit does not cover the fee', { amount: plan.amount, fee: estimate.fee.toString() });
              continue;
            }
            const step = await signSweepTransfer(signer, gateway, { chain, wallet: depositWallet, from: plan.depositAddress, to: plan.settlementAddress, asset: 'native', amount: amount - estimate.fee, estimate, now });
            await record({ type: 'RecordSweepSigned', step });
            continue;
          }
          const spare = await spareNative(services, plan.depositAddress);
          if (spare >= estimate.fee) {
            const step = await signSweepTransfer(signer, gateway, { chain, wallet: depositWallet, from: plan.depositAddress, to: plan.settlementAddress, asset: plan.asset, amount, estimate, now });
            await record({ type: 'RecordSweepSigned', step });
            continue;
          }
          const gasAddress = plan.gasWalletAddress!;
          // the gas wallet's one signer at a time (the withdrawal processor pays gas from it too): its
          // next nonce picked, the top-up signed, recorded and sent under the lease
          const waiting = await services.sendingWallets.withWallet(chain, gasAddress, async (): Promise<SweepProgress | null> => {
            const topUp = await prepareGasTopUp(signer, gateway, {
              chain,
              walletIndex: plan.walletIndex,
              gasAddress,
              to: plan.depositAddress,
              shortfall: estimate.fee - spare,
              gasWalletBusy: heldByAnother(claims, chain, stream, gasAddress),
              now,
            });
            if (topUp.kind === 'wait') {
              const { required, available } = topUp;
              if (await record({ type: 'WaitForGas', required, available })) {
                log.warn('sweep: waiting for gas', { gasWallet: gasAddress, available: available.toString(), required: required.toString() });
              }
              return { outcome: 'waiting', status: 'WaitingForGas', for: 'gas' };
            }
            if (topUp.kind === 'busy') return { outcome: 'deferred', reason: 'the gas wallet has a top-up in flight' };
            const resumed = state.status === 'WaitingForGas';
            await record({ type: 'RecordTopUpSigned', step: topUp.step });
            await sendRecorded(services, topUp.step);
            if (resumed) log.info('sweep: gas arrived, resuming', { gasWallet: gasAddress });
            return null;
          });
          if (waiting) return waiting;
          continue;
        }
        case 'TopUpSigned':
        case 'TopUpBroadcast':
        case 'SweepSigned':
        case 'SweepBroadcast': {
          const isTopUp = state.status === 'TopUpSigned' || state.status === 'TopUpBroadcast';
          const sender: CancellationSender =
            chain.family !== 'evm'
              ? { family: 'expires' }
              : isTopUp
                ? { family: 'evm', wallet: { branch: 'gas', index: plan.walletIndex }, address: plan.gasWalletAddress! }
                : { family: 'evm', wallet: { branch: 'receive', index: plan.depositIndex }, address: plan.depositAddress };
          const followed = await settle(services, { current: isTopUp ? state.topUp! : state.sweep! }, { orgId: plan.orgId, metadata, sender: async () => sender });
          if (followed.kind === 'failed') {
            await record({ type: 'FailSweep', error: followed.error });
            log.error('sweep: failed', { step: isTopUp ? 'topUp' : 'sweep', error: followed.error });
            continue;
          }
          if (followed.kind === 'sent') {
            const recordedNow = await record({ type: isTopUp ? 'RecordTopUpBroadcast' : 'RecordSweepBroadcast' });
            if (recordedNow) continue; // one more look: it may be mined already
            return { outcome: 'waiting', status: state.status, for: 'confirmations' };
          }
          if (isTopUp) {
            await record({ type: 'RecordTopUpConfirmed', blockNumber: followed.blockNumber, fee: followed.fee });
            continue;
          }
          await confirmSweep(services, stream, plan, followed.blockNumber, followed.fee, metadata);
          log.info('sweep: confirmed', { txHash: state.sweep!.txHash, fee: followed.fee.toString() });
          continue;
        }
        case 'TopUpConfirmed': {
          const amount = BigInt(plan.amount);
          const estimate = await gateway.estimateFee({ from: plan.depositAddress, to: plan.settlementAddress, asset: plan.asset, amount });
          const step = await signSweepTransfer(signer, gateway, { chain, wallet: { branch: 'receive', index: plan.depositIndex }, from: plan.depositAddress, to: plan.settlementAddress, asset: plan.asset, amount, estimate, now });
          await record({ type: 'RecordSweepSigned', step });
          continue;
        }
      }
    }
    return { outcome: 'deferred', reason: 'step limit of one call reached' };
  };
  try {
    const progress = await steps();
    // every step ends on the stream as read, or as its own append (at the revision read) left it: the claims follow that
    setClaims(claims, chain, stream, state);
    return progress;
  } catch (error) {
    // a crash in a test, a conflict: the claims follow what the stream says
    setClaims(claims, chain, stream, (await loadAggregate(store, stream, sweepDecider).catch(() => ({ state }))).state);
    throw error;
  }
};
