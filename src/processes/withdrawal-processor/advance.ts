import type { ChainDefinition } from '../../catalog/chain.js';
import { CannotPayError, signBitcoinWithdrawal, signXrpWithdrawal, type SignedWithdrawal } from './transactions.js';
import { signSweepTransfer } from '../../chains/transfers/transactions.js';
import { findToken } from '../../catalog/tokens.js';
import { DomainError } from '../../errors.js';
import type { LedgerCommand } from '../../domain/ledger/decide.js';
import { streams } from '../../domain/streams.js';
import { withdrawalDecider, type WithdrawalCommand } from '../../domain/withdrawal/decide.js';
import { isTerminal, type Withdrawal, type WithdrawalRecord, type WithdrawalStatus } from '../../domain/withdrawal/withdrawal.js';
import { loadAggregate, type CommandMetadata } from '../../application/command-handler.js';
import { applyWithdrawalCommand } from '../../application/withdrawals.js';
import type { WithdrawalProcessingServices } from './services.js';
import { CannotReplaceError } from '../../chains/bitcoin/replace-by-fee.js';
import { followWithdrawalTransaction } from './following.js';
import { withdrawalGasTopUps } from './gas.js';
import { drawFromGasBuffer, gasBufferCoins } from './gas-buffer.js';
import { loadGasBuffer } from '../../application/gas-buffers.js';
import { replaceEvmIfStuck } from './evm-replacement.js';
import { DEFAULT_REPLACE_AFTER_BLOCKS, isStuck, signBitcoinReplacement } from './replacement.js';
import type { Logger } from '../../log.js';
import { NOTHING_IN_FLIGHT, type OrganizationInFlight } from './in-flight.js';
import { failedFeeShareOf, feeChargedFor } from '../../domain/payout-batch/fee-shares.js';
import { replacePayoutBatchIfStuck } from './bitcoin-batch.js';

export type { WithdrawalProcessingServices } from './services.js';

export type ProcessingProgress =
  | { outcome: 'finished'; status: WithdrawalStatus | 'None' }
  /** `deepAtHead`: its transaction is mined and at depth once the chain's head reaches this block (nothing to do before) */
  | { outcome: 'waiting'; for: 'gas' | 'funds' | 'confirmations'; deepAtHead?: number }
  | { outcome: 'deferred'; reason: string };

/** A step's progress, with the withdrawal as the step last read it (what the processor's in-flight book notes). */
export type ProcessingStep = ProcessingProgress & { withdrawal: Withdrawal };

const MAX_STEPS_PER_CALL = 12;

/** Bitcoin and XRP pay the network from the organization's own balance of the chain's coin (SPEC §1); EVM and Tron from the gas wallet. */
const feeFromBalance = (chain: ChainDefinition) => chain.family === 'bitcoin' || chain.family === 'xrp';

/** Bitcoin, XRP: the network fee the chain took, charged to the organization's balance of the withdrawn coin. */
const feeCharge = (services: WithdrawalProcessingServices, withdrawal: WithdrawalRecord, fee: bigint): LedgerCommand[] =>
  feeFromBalance(services.chain) && fee > 0n ? [{ type: 'ChargeFee', orgId: withdrawal.orgId, tokenId: withdrawal.tokenId, amount: fee, reason: 'withdrawal', reference: `withdrawal:${withdrawal.id}` }] : [];

const logUnpaid = (services: WithdrawalProcessingServices, withdrawal: WithdrawalRecord, unpaid: LedgerCommand[]) => {
  // the chain took the fee already; the ledger cannot go negative: recorded uncharged, for an operator
  for (const command of unpaid) services.logger.error('withdrawal: the fee exceeds the available balance; recorded without charging it', { withdrawalId: withdrawal.id, fee: command.amount.toString() });
};

/**
 * The completion: the withdrawal, its hold posted, and on Bitcoin and XRP the fee held released and
 * the fee the chain took charged, in one append (the difference goes back to available).
 */
export const completeWithdrawal = async (services: WithdrawalProcessingServices, withdrawal: WithdrawalRecord, txHash: string, blockNumber: number, chainFee: bigint, metadata: CommandMetadata): Promise<WithdrawalRecord> => {
  // a payout batch's withdrawal is charged its share of the fee the chain took (the shares add up to it)
  const fee = feeChargedFor(withdrawal, txHash, chainFee);
  const command = { type: 'CompleteWithdrawal' as const, id: withdrawal.id, txHash, blockNumber, fee: fee.toString() };
  const applied = await applyWithdrawalCommand(services, withdrawal, command, metadata, feeCharge(services, withdrawal, fee));
  logUnpaid(services, withdrawal, applied.unpaid);
  return applied.withdrawal;
};

/**
 * The failure: the withdrawal Failed with `txnError` and all it holds released (amount and fee), in
 * one append (the create/cancel side's own path). On Bitcoin and XRP a fee the chain took anyway (a
 * failed transaction's, a cancellation's) is charged to the balance in the same append: the ledger follows the chain.
 */
export const failWithdrawal = async (services: WithdrawalProcessingServices, withdrawal: WithdrawalRecord, txnError: string, metadata: CommandMetadata, feePaid = 0n): Promise<WithdrawalRecord> => {
  const charged = failedFeeShareOf(withdrawal, feePaid);
  const applied = await applyWithdrawalCommand(services, withdrawal, { type: 'FailWithdrawal', id: withdrawal.id, txnError }, metadata, feeCharge(services, withdrawal, charged));
  logUnpaid(services, withdrawal, applied.unpaid);
  return applied.withdrawal;
};

type ProcessorCommand = Exclude<WithdrawalCommand, { type: 'RequestWithdrawal' }>;

/** the ledger refused to hold a fee: its available balance cannot */
const isInsufficientBalance = (error: unknown): error is DomainError => error instanceof DomainError && error.code === 'INSUFFICIENT_BALANCE';

type Prepared = { kind: 'signed'; transaction: SignedWithdrawal } | { kind: 'topUpSigned' } | { kind: 'waiting'; for: 'gas' | 'funds' | 'confirmations' } | { kind: 'failed'; error: string };

/**
 * EVM and Tron: the payment leaves the organization's settlement wallet. Its gas: when the wallet
 * lacks it, the gas wallet tops it up first (the sweep's top-up step, recorded before it is sent).
 */
const prepareAccountTransfer = async (services: WithdrawalProcessingServices, withdrawal: WithdrawalRecord, metadata: CommandMetadata, inFlight: OrganizationInFlight): Promise<Prepared> => {
  const { chain, gateway, signer } = services;
  const token = findToken(withdrawal.tokenId);
  if (!token) return { kind: 'failed', error: `the catalog has no token ${withdrawal.tokenId}` };
  const asset = token.kind === 'native' ? 'native' : token.address;
  const amount = BigInt(withdrawal.amount);
  const wallets = await services.wallets.walletsOf(withdrawal.orgId, chain.id, metadata);
  const from = wallets.settlementAddress;

  // a top-up in flight is followed to its end before anything else is signed
  const gas = await withdrawalGasTopUps(services, withdrawal, wallets, metadata);
  let gasReceived = gas.state.status === 'Confirmed';
  if (gas.state.status === 'Signed') {
    const followed = await gas.follow();
    if (followed.kind === 'waiting' || followed.kind === 'failed') return followed;
    gasReceived = true;
  }

  // what the wallet holds beyond what the organization's other transactions in flight spend; its deposits may still be being swept
  if (asset !== 'native' && (await gateway.balance(from, asset)) < amount + inFlight.committed(asset)) return { kind: 'waiting', for: 'funds' };
  const estimate = await gateway.estimateFee({ from, to: withdrawal.recipient, asset, amount });
  const nativeBalance = await gateway.balance(from, 'native');
  // the gas buffer's coins (and what this withdrawal drew from them) are the operator's, never a payment's amount;
  // the buffer read for that is the one the draw below starts from (one read a step)
  const buffer = services.gasBuffer && asset === 'native' ? await loadGasBuffer(services.store, chain.id, withdrawal.orgId) : undefined;
  const gasReserved = buffer ? (await gasBufferCoins(services, buffer)) + gas.state.drawn : 0n;
  if (asset === 'native' && nativeBalance < amount + inFlight.committed('native') + gasReserved) return { kind: 'waiting', for: 'funds' };
  // The gas is the operator's, paid by the gas wallet, never the organization's swept coins (those
  // are what its ledger says it holds): every EVM/Tron withdrawal first receives its fee, drawn from
  // the settlement wallet's gas buffer (./gas-buffer.ts) or, with no buffer, a top-up of exactly it.
  // A fee of zero (Tron: free or staked bandwidth and energy cover it) needs no gas at all.
  if (!gasReceived && estimate.fee > gas.state.drawn) {
    if (services.gasBuffer) {
      const request = { withdrawal, wallets, gas: gas.loaded, lacking: estimate.fee - gas.state.drawn, feePerPayment: estimate.fee };
      const drawn = await drawFromGasBuffer(services, services.gasBuffer, request, metadata, buffer);
      if (drawn.kind !== 'drawn') return drawn;
    } else {
      const sent = await gas.send(estimate.fee);
      return sent.kind === 'signed' ? { kind: 'topUpSigned' } : sent.kind === 'confirmed' ? { kind: 'waiting', for: 'gas' } : sent;
    }
  }
  const head = chain.family === 'evm' ? await gateway.head() : null;
  const step = await signSweepTransfer(signer, gateway, {
    chain,
    wallet: { branch: 'settlement', index: wallets.index },
    from,
    to: withdrawal.recipient,
    asset,
    amount,
    estimate,
    now: services.clock(),
    nonceFloor: inFlight.nonceFloor,
  });
  // EVM: the head it was signed at and its fee fields, what a replacement of it needs (./evm-replacement.ts)
  const { maxFeePerGas, maxPriorityFeePerGas } = estimate.parameters;
  const evm = head && maxFeePerGas !== undefined && maxPriorityFeePerGas !== undefined ? { headBlockNumber: head.number, maxFeePerGas, maxPriorityFeePerGas } : {};
  return { kind: 'signed', transaction: { raw: step.raw, txHash: step.txHash, nonce: step.nonce, fee: estimate.fee, ...evm } };
};

/** Builds and signs the withdrawal's transaction (or the gas top-up it needs first); nothing is sent here. */
const prepare = async (services: WithdrawalProcessingServices, withdrawal: WithdrawalRecord, metadata: CommandMetadata, inFlight: OrganizationInFlight): Promise<Prepared> => {
  try {
    switch (services.chain.family) {
      case 'evm':
      case 'tron':
        return await prepareAccountTransfer(services, withdrawal, metadata, inFlight);
      // the fee is held on the ledger when the transaction is recorded (or the withdrawal fails)
      case 'bitcoin':
        return { kind: 'signed', transaction: await signBitcoinWithdrawal(services, withdrawal) };
      case 'xrp':
        return { kind: 'signed', transaction: await signXrpWithdrawal(services, withdrawal, inFlight) };
    }
  } catch (error) {
    if (error instanceof CannotPayError) return error.final ? { kind: 'failed', error: error.message } : { kind: 'waiting', for: 'funds' };
    // the settlement wallet keeps losing its gas: an operator's matter, not one more top-up
    if (error instanceof DomainError && error.code === 'GAS_TOP_UP_LIMIT') return { kind: 'failed', error: error.message };
    throw error;
  }
};

/** withdrawal id → the head at which "cannot be replaced" was last logged: once per replacement period, not on every pass */
const unreplaceableLogged = new Map<string, number>();

/**
 * Bitcoin: a withdrawal broadcast and still in the mempool `replaceAfterBlocks` after it was signed
 * gets a BIP125 replacement, signed and recorded here (sent by the next look, like any recorded
 * transaction, so a crash in between re-sends this one, never a third). True when one was recorded.
 */
const replaceIfStuck = async (services: WithdrawalProcessingServices, withdrawal: WithdrawalRecord, record: (command: ProcessorCommand) => Promise<boolean>, log: Logger): Promise<boolean> => {
  const signed = withdrawal.signedTransaction;
  // a payout batch is replaced as a whole, for all its withdrawals at once
  if (signed?.batch) return replacePayoutBatchIfStuck(services, withdrawal, log);
  const replaceAfterBlocks = services.replaceAfterBlocks ?? DEFAULT_REPLACE_AFTER_BLOCKS;
  if (!signed?.inputs) return false;
  const head = await services.gateway.head();
  if (!isStuck(signed, head.number, replaceAfterBlocks)) return false;
  let replacement;
  try {
    replacement = await signBitcoinReplacement(services, withdrawal, { ...signed, inputs: signed.inputs }, head.number);
    // the organization pays the fee of whichever transaction confirms: the hold is raised to the
    // higher one in the same append (refused, nothing recorded, when its available balance cannot)
    const { raw, txHash, fee, headBlockNumber, inputs } = replacement;
    await record({ type: 'RecordReplacementTransaction', id: withdrawal.id, raw, txHash, replacedTxHash: signed.txHash, fee: fee.toString(), headBlockNumber, inputs, holdFee: true });
  } catch (error) {
    if (!(error instanceof CannotReplaceError) && !isInsufficientBalance(error)) throw error;
    const logged = unreplaceableLogged.get(withdrawal.id);
    if (logged === undefined || head.number - logged >= replaceAfterBlocks) {
      unreplaceableLogged.set(withdrawal.id, head.number);
      log.warn('withdrawal: unconfirmed and cannot be replaced by fee; still waiting for it', { txHash: signed.txHash, reason: error.message });
    }
    return false;
  }
  unreplaceableLogged.delete(withdrawal.id);
  const { txHash, fee } = replacement;
  log.info('withdrawal: unconfirmed; replaced by fee', { txHash, replacedTxHash: signed.txHash, fee: fee.toString(), replacedFee: signed.fee, blocksWaited: head.number - signed.headBlockNumber! });
  return true;
};

/**
 * Takes one withdrawal as far as it can go now: signs and records its transaction, sends it,
 * follows it to Completed or Failed. Every decision is appended at the revision it was read at, so
 * a cancel racing the signature, or a second processor, makes the append fail and the bytes are
 * dropped unsent. A recorded transaction is only ever looked up and re-sent as recorded, never
 * signed again: a crash anywhere cannot make a second, different payment. `inFlight`: what the
 * organization's other withdrawals in flight hold (./in-flight.ts): its funds are what the wallet
 * holds beyond them, and its nonce is past theirs.
 */
export const advanceWithdrawal = async (services: WithdrawalProcessingServices, withdrawalId: string, inFlight: OrganizationInFlight = NOTHING_IN_FLIGHT): Promise<ProcessingStep> => {
  const { store, chain } = services;
  const stream = streams.withdrawal(withdrawalId);
  const log = services.logger.child({ chainId: chain.id, withdrawalId });
  let last: Withdrawal = { status: 'None' };
  /**
   * the withdrawal as this call's own append left it: the next step starts from it instead of
   * reading the stream again. Once signed, only the processor moves a withdrawal (it can no longer
   * be cancelled), and every command is decided again on the stream as read when it is appended.
   */
  let appended: WithdrawalRecord | null = null;
  /** the transaction this call recorded just now and has not sent: its first look sends it without asking the node where it stands */
  let unsentTxHash: string | null = null;
  for (let stepCount = 0; stepCount < MAX_STEPS_PER_CALL; stepCount++) {
    const withdrawal: Withdrawal = appended ?? (await loadAggregate(store, stream, withdrawalDecider)).state;
    appended = null;
    last = withdrawal;
    if (withdrawal.status === 'None') return { outcome: 'finished', status: 'None', withdrawal };
    if (withdrawal.chainId !== chain.id) throw new Error(`withdrawal ${withdrawalId} is on ${withdrawal.chainId}, not ${chain.id}`);
    if (isTerminal(withdrawal.status) || withdrawal.status === 'PendingApproval') return { outcome: 'finished', status: withdrawal.status, withdrawal };
    const metadata: CommandMetadata = { actor: `withdrawal-processor:${chain.id}`, orgId: withdrawal.orgId };
    // through the ledger's queue, with what the step does to the ledger (a fee held) in the same append
    const record = async (command: ProcessorCommand): Promise<boolean> => {
      const applied = await applyWithdrawalCommand(services, withdrawal, command, metadata);
      for (const event of applied.events) await services.faults?.afterRecord?.(event.type);
      appended = applied.withdrawal;
      return applied.events.length > 0;
    };

    const signed = withdrawal.signedTransaction;
    if (!signed) {
      const prepared = await prepare(services, withdrawal, metadata, inFlight);
      switch (prepared.kind) {
        case 'failed':
          appended = await failWithdrawal(services, withdrawal, prepared.error, metadata);
          log.error('withdrawal: failed before signing', { error: prepared.error });
          continue;
        case 'waiting':
          return { outcome: 'waiting', for: prepared.for, withdrawal };
        case 'topUpSigned':
          continue;
        case 'signed': {
          const { fee, ...transaction } = prepared.transaction;
          try {
            await record({ type: 'RecordSignedTransaction', id: withdrawalId, ...transaction, fee: fee.toString(), holdFee: feeFromBalance(chain) });
          } catch (error) {
            if (!isInsufficientBalance(error)) throw error;
            // the bytes are dropped unsent: the fee cannot be held beside the amount
            const reason = `the available balance (${String(error.details?.available)}) cannot hold the network fee (${fee})`;
            appended = await failWithdrawal(services, withdrawal, reason, metadata);
            log.error('withdrawal: failed before signing', { error: reason });
            continue;
          }
          log.info('withdrawal: transaction signed', { txHash: transaction.txHash, nonce: transaction.nonce, fee: fee.toString() });
          unsentTxHash = transaction.txHash;
          continue;
        }
      }
    }

    const firstLook = signed.txHash === unsentTxHash && !withdrawal.replacedTransactions?.length;
    unsentTxHash = null;
    const followed = await followWithdrawalTransaction(services, withdrawal, signed, metadata, firstLook);
    if (followed.kind === 'failed') {
      appended = await failWithdrawal(services, withdrawal, followed.error, metadata, followed.feePaid);
      log.error('withdrawal: failed', { txHash: signed.txHash, error: followed.error });
      continue;
    }
    if (withdrawal.status === 'Pending') {
      // sent (now, or before a crash): Processing first, so every withdrawal goes the same way, then one more look
      await record({ type: 'RecordBroadcast', id: withdrawalId, txHash: signed.txHash });
      // sent just now for the first time: the look would find it in the mempool (or still unknown), followed by the next pass
      if (firstLook && followed.kind === 'sent') return { outcome: 'waiting', for: 'confirmations', withdrawal: (appended as WithdrawalRecord | null) ?? withdrawal };
      continue;
    }
    if (followed.kind === 'sent') {
      // mined, not yet deep: nothing to replace (one of its transactions is in a block), only blocks to wait for
      if (followed.deepAtHead !== undefined) return { outcome: 'waiting', for: 'confirmations', withdrawal, deepAtHead: followed.deepAtHead };
      if (followed.inMempool && chain.family === 'bitcoin' && (await replaceIfStuck(services, withdrawal, record, log))) continue;
      // EVM: pending, or dropped and refused as underpriced when sent again (a node evicting what the base fee priced out)
      if (chain.family === 'evm') {
        const replaced = await replaceEvmIfStuck(services, withdrawal, record, metadata, log);
        if (replaced === 'replaced') continue;
        if (replaced === 'waiting') return { outcome: 'waiting', for: 'gas', withdrawal };
      }
      return { outcome: 'waiting', for: 'confirmations', withdrawal };
    }
    // the transaction followed, or one it replaced that was mined first: they spend the same inputs, so only one ever pays
    appended = await completeWithdrawal(services, withdrawal, followed.txHash, followed.blockNumber, followed.fee, metadata);
    log.info('withdrawal: completed', { txHash: followed.txHash, fee: followed.fee.toString() });
  }
  return { outcome: 'deferred', reason: 'step limit of one call reached', withdrawal: last };
};
