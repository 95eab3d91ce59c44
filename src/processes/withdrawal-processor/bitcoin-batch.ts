import { randomUUID } from 'node:crypto';
import { loadAggregate, type CommandMetadata } from '../../application/command-handler.js';
import { recordPayoutBatch, recordPayoutBatchBroadcast, recordPayoutBatchReplacement } from '../../application/payout-batches.js';
import { address as bitcoinAddress, Transaction } from 'bitcoinjs-lib';
import { bitcoinNetwork } from '../../chains/bitcoin/address.js';
import { CannotReplaceError } from '../../chains/bitcoin/replace-by-fee.js';
import { InsufficientFundsError, planBitcoinPayouts, type BitcoinSpendPlan } from '../../chains/bitcoin/spend-planning.js';
import { DUST_LIMIT_SATS } from '../../chains/bitcoin/transactions.js';
import { sendRecorded } from '../../chains/transfers/follow.js';
import { shareFeeByOutputs } from '../../domain/payout-batch/fee-shares.js';
import { payoutBatchDecider, type PayoutBatch, type PayoutBatchMember, type PayoutBatchTransaction } from '../../domain/payout-batch/payout-batch.js';
import { streams } from '../../domain/streams.js';
import { withdrawalDecider } from '../../domain/withdrawal/decide.js';
import { isTerminal, type Withdrawal, type WithdrawalRecord } from '../../domain/withdrawal/withdrawal.js';
import { DomainError } from '../../errors.js';
import { WrongExpectedRevisionError } from '../../eventstore/errors.js';
import type { Logger } from '../../log.js';
import { DEFAULT_REPLACE_AFTER_BLOCKS, isStuck, signReplacementOf } from './replacement.js';
import type { WithdrawalProcessingServices } from './services.js';
import { bitcoinSpendingOf, signBitcoinPlan } from './transactions.js';

/**
 * Bitcoin payout batches: the withdrawals of an organization waiting to be signed when the
 * processor passes are paid by ONE transaction, one output each and one change output, so they
 * share one fee and one confirmation wait. The batch is recorded before it is sent (its own stream
 * and every withdrawal's `WithdrawalTransactionSigned`, in one append); from there each withdrawal
 * is followed, completed, failed or replaced exactly as one paid alone, by the same code.
 */

/** the most withdrawals one transaction pays (about 3.2 kvB of outputs) */
export const MAX_PAYOUTS_PER_BATCH = 100;

const actorOf = (services: WithdrawalProcessingServices): CommandMetadata => ({ actor: `withdrawal-processor:${services.chain.id}` });

/** the serialized size of each output a withdrawal is paid by (value, script length, script), and the whole transaction's */
const outputSizesOf = (raw: string, outputs: number) => {
  const transaction = Transaction.fromHex(raw);
  return { own: transaction.outs.slice(0, outputs).map((output) => 8 + 1 + output.script.length), virtualSize: transaction.virtualSize() };
};

/**
 * The plan for the longest run of `candidates` (in the order they became Pending) that the
 * organization's confirmed outputs pay with the fee; null when fewer than two fit (one alone is
 * paid, or failed, the single-withdrawal way).
 */
const planBatch = <Wallet>(candidates: readonly WithdrawalRecord[], plan: (members: readonly WithdrawalRecord[]) => BitcoinSpendPlan<Wallet>) => {
  for (let count = candidates.length; count >= 2; count--) {
    const members = candidates.slice(0, count);
    try {
      return { members, plan: plan(members) };
    } catch (error) {
      if (!(error instanceof InsufficientFundsError)) throw error;
    }
  }
  return null;
};

/** withdrawals a batch can pay: Pending, not signed, above the dust limit, to an address the chain can pay */
const payable = (services: WithdrawalProcessingServices, withdrawal: WithdrawalRecord) => {
  if (withdrawal.status !== 'Pending' || withdrawal.signedTransaction !== null || BigInt(withdrawal.amount) < DUST_LIMIT_SATS) return false;
  try {
    bitcoinAddress.toOutputScript(withdrawal.recipient, bitcoinNetwork(services.chain.network));
    return true;
  } catch {
    return false;
  }
};

/**
 * One pass's batch for an organization: when none of its withdrawals is in flight and two or more
 * wait to be signed, they (up to MAX_PAYOUTS_PER_BATCH, as many as its coins pay) are signed into
 * one transaction, recorded, sent, and recorded Processing. Anything refused on the way (a
 * withdrawal cancelled meanwhile, a racing processor, a balance that cannot hold the fee shares)
 * records nothing and drops the bytes unsent; a withdrawal that moved on is read and the batch
 * decided again at once (a few times). Returns the
 * organization's withdrawals in flight: those found so, or the new batch's.
 */
export const payOutInBatch = async (services: WithdrawalProcessingServices, orgId: string, openIds: readonly string[], log: Logger): Promise<{ inFlight: string[] }> => {
  for (let attempt = 1; ; attempt++) {
    const tried = await tryBatch(services, orgId, openIds, log);
    // refused because a withdrawal moved on meanwhile (cancelled, say): read and decided again, a few times
    if (tried !== 'refused') return tried;
    if (attempt >= MAX_BATCH_ATTEMPTS) return { inFlight: [] };
  }
};

/** a batch refused because a withdrawal moved on is decided again at once, this many times at most in one pass */
const MAX_BATCH_ATTEMPTS = 3;

const tryBatch = async (services: WithdrawalProcessingServices, orgId: string, openIds: readonly string[], log: Logger): Promise<{ inFlight: string[] } | 'refused'> => {
  const loaded = await Promise.all(openIds.map((id) => loadAggregate(services.store, streams.withdrawal(id), withdrawalDecider)));
  const withdrawals = loaded.map(({ state }) => state).filter((state): state is WithdrawalRecord => state.status !== 'None' && state.orgId === orgId);
  // one transaction of the organization in flight at a time: its coins are spent by it until it confirms
  const inFlight = withdrawals.filter((withdrawal) => !isTerminal(withdrawal.status) && withdrawal.signedTransaction !== null).map(({ id }) => id);
  if (inFlight.length > 0) return { inFlight };
  const candidates = withdrawals.filter((withdrawal) => payable(services, withdrawal)).slice(0, MAX_PAYOUTS_PER_BATCH);
  if (candidates.length < 2) return { inFlight: [] };

  const { chain } = services;
  const spending = await bitcoinSpendingOf(services, orgId, candidates[0]!.recipient, BigInt(candidates[0]!.amount));
  const chosen = planBatch(candidates, (members) =>
    planBitcoinPayouts({ outputs: spending.spendable, payments: members.map(({ recipient, amount }) => ({ recipient, amount: BigInt(amount) })), feeRateSatPerVbyte: spending.feeRateSatPerVbyte, changeAddress: spending.changeAddress }),
  );
  if (!chosen) return { inFlight: [] };
  const { members, plan } = chosen;
  const signed = await signBitcoinPlan(services, plan);
  const sizes = outputSizesOf(signed.raw, members.length);
  const shares = shareFeeByOutputs(plan.fee, sizes.own, sizes.virtualSize);
  const transaction: PayoutBatchTransaction = { ...signed, fee: plan.fee.toString(), shares: shares.map(String) };
  const batchId = randomUUID();
  const paid: PayoutBatchMember[] = members.map(({ id, recipient, amount }, outputIndex) => ({ id, outputIndex, recipient, amount }));
  try {
    await recordPayoutBatch(services, { type: 'RecordPayoutBatch', batchId, orgId, chainId: chain.id, tokenId: members[0]!.tokenId, withdrawals: paid, transaction }, actorOf(services));
  } catch (error) {
    if (!(error instanceof DomainError) && !(error instanceof WrongExpectedRevisionError)) throw error;
    log.warn('payout batch: not recorded, its bytes dropped unsent', { orgId, withdrawals: members.length, reason: error.message });
    // the balance cannot hold the fee shares: each withdrawal goes the single way (and fails unsent if its own fee cannot be held either)
    return error instanceof DomainError && error.code === 'INSUFFICIENT_BALANCE' ? { inFlight: [] } : 'refused';
  }
  await services.faults?.afterRecord?.('PayoutBatchSigned');
  log.info('payout batch: transaction signed', { batchId, txHash: signed.txHash, withdrawals: members.length, fee: plan.fee.toString() });
  const sent = await sendRecorded(services, { raw: signed.raw, txHash: signed.txHash, nonce: null }, 'withdrawal');
  // taken: all its withdrawals Processing at once; refused or unknown: each is followed (and re-sent) as any recorded transaction is
  if (sent.kind === 'accepted') await recordPayoutBatchBroadcast(services, paid.map(({ id }) => id), signed.txHash, actorOf(services));
  return { inFlight: paid.map(({ id }) => id) };
};

/**
 * The processor's side of batching on one Bitcoin chain: before an organization's withdrawal is
 * advanced, its waiting withdrawals are paid out in a batch when nothing of it is in flight. The
 * withdrawals known to be in flight are remembered and an organization is looked at once a pass
 * (look-ups spared, never a decision: the event store decides), so following a batch of 100 to
 * its end reads each withdrawal once per pass.
 */
export class PayoutBatches {
  private readonly inFlight = new Set<string>();
  /** organizations looked at in this pass: once each, however many of their withdrawals the pass advances */
  private readonly lookedAt = new Set<string>();
  /** batches whose withdrawals were settled side by side once one of them completed (ids only: a few bytes a batch) */
  private readonly settledSideBySide = new Set<string>();

  constructor(
    private readonly services: WithdrawalProcessingServices,
    private readonly log: Logger,
  ) {}

  /** `openIds`: the organization's withdrawals the processor holds, in the order they became Pending */
  startPass(): void {
    this.lookedAt.clear();
  }

  async beforeAdvancing(orgId: string, withdrawalId: string, openIds: readonly string[]): Promise<void> {
    if (this.inFlight.has(withdrawalId) || this.lookedAt.has(orgId)) return;
    this.lookedAt.add(orgId);
    const { inFlight } = await payOutInBatch(this.services, orgId, openIds, this.log);
    for (const id of inFlight) this.inFlight.add(id);
  }

  /**
   * The withdrawal reached its end: nothing of it is in flight any more. Completed by its batch's
   * transaction, the batch's other withdrawals are settled now side by side (`advance`: the
   * processor's own step, one withdrawal each), so their completions share the ledger's appends
   * instead of taking turns; each is decided on its own stream as always, and what one of them
   * could not do (a step that threw) is left to the pass, which visits every one of them anyway.
   */
  async finished(withdrawal: Withdrawal, advance: (withdrawalId: string) => Promise<{ outcome: string }>): Promise<void> {
    if (withdrawal.status === 'None') return;
    this.inFlight.delete(withdrawal.id);
    const ref = withdrawal.status === 'Completed' ? withdrawal.signedTransaction?.batch : undefined;
    if (!ref || this.settledSideBySide.has(ref.id)) return;
    this.settledSideBySide.add(ref.id);
    try {
      const { state: batch } = await loadAggregate(this.services.store, streams.payoutBatch(this.services.chain.id, ref.id), payoutBatchDecider);
      if (batch.status !== 'Signed') return;
      const others = batch.withdrawals.map(({ id }) => id).filter((id) => this.inFlight.has(id));
      const settled = await Promise.allSettled(others.map(async (id) => ({ id, step: await advance(id) })));
      for (const outcome of settled) if (outcome.status === 'fulfilled' && outcome.value.step.outcome === 'finished') this.inFlight.delete(outcome.value.id);
      const failed = settled.filter((outcome) => outcome.status === 'rejected').length;
      if (failed > 0) this.log.info('payout batch: some withdrawals not settled side by side; the pass takes them one by one', { batchId: ref.id, failed });
    } catch (error) {
      this.log.warn('payout batch: its withdrawals not settled side by side; the pass takes them one by one', { batchId: ref.id, error });
    }
  }
}

/** batch id → the head at which "cannot be replaced" was last logged: once per replacement period, not on every pass */
const unreplaceableLogged = new Map<string, number>();

/** a replacement keeps every withdrawal's output as it was (address, amount, place): each recipient is paid the same, once */
const checkOutputsKept = (services: WithdrawalProcessingServices, batch: Extract<PayoutBatch, { status: 'Signed' }>, raw: string) => {
  const outputs = Transaction.fromHex(raw).outs;
  for (const member of batch.withdrawals) {
    const output = outputs[member.outputIndex];
    const paidTo = output && bitcoinAddress.fromOutputScript(output.script, bitcoinNetwork(services.chain.network));
    if (!output || paidTo !== member.recipient || BigInt(output.value) !== BigInt(member.amount)) {
      throw new CannotReplaceError(`the replacement would not pay withdrawal ${member.id} ${member.amount} sat at output ${member.outputIndex}`);
    }
  }
};

/**
 * A batch broadcast and still in the mempool `replaceAfterBlocks` after it was signed gets one
 * BIP125 replacement for all its withdrawals (the same inputs, every output kept, a higher fee
 * from the change), recorded in the batch's stream and every withdrawal's before it is sent (the
 * next look sends it). Each withdrawal's hold rises to its new share. True when one was recorded.
 */
export const replacePayoutBatchIfStuck = async (services: WithdrawalProcessingServices, withdrawal: WithdrawalRecord, log: Logger): Promise<boolean> => {
  const ref = withdrawal.signedTransaction?.batch;
  if (!ref) return false;
  const { chain, gateway } = services;
  const { state: batch } = await loadAggregate(services.store, streams.payoutBatch(chain.id, ref.id), payoutBatchDecider);
  if (batch.status !== 'Signed') throw new Error(`withdrawal ${withdrawal.id} names payout batch ${ref.id}, which has no record`);
  const replaceAfterBlocks = services.replaceAfterBlocks ?? DEFAULT_REPLACE_AFTER_BLOCKS;
  const head = await gateway.head();
  const current = batch.current;
  if (!isStuck({ ...current, nonce: null, signedAt: '' }, head.number, replaceAfterBlocks)) return false;
  let transaction: PayoutBatchTransaction;
  try {
    const first = batch.withdrawals[0]!;
    const replacement = await signReplacementOf(services, batch.orgId, current, first.recipient, BigInt(first.amount));
    checkOutputsKept(services, batch, replacement.raw);
    const sizes = outputSizesOf(replacement.raw, batch.withdrawals.length);
    const shares = shareFeeByOutputs(replacement.fee, sizes.own, sizes.virtualSize);
    transaction = { raw: replacement.raw, txHash: replacement.txHash, fee: replacement.fee.toString(), shares: shares.map(String), headBlockNumber: head.number, inputs: current.inputs };
    await recordPayoutBatchReplacement(services, batch, { type: 'RecordPayoutBatchReplacement', batchId: batch.batchId, replacedTxHash: current.txHash, transaction }, actorOf(services));
  } catch (error) {
    // refused, nothing recorded: its change cannot pay more, the balance cannot hold the higher shares, or a withdrawal of it moved on
    if (!(error instanceof CannotReplaceError) && !(error instanceof DomainError)) throw error;
    const logged = unreplaceableLogged.get(batch.batchId);
    if (logged === undefined || head.number - logged >= replaceAfterBlocks) {
      unreplaceableLogged.set(batch.batchId, head.number);
      log.warn('payout batch: unconfirmed and cannot be replaced by fee; still waiting for it', { batchId: batch.batchId, txHash: current.txHash, reason: (error as Error).message });
    }
    return false;
  }
  unreplaceableLogged.delete(batch.batchId);
  await services.faults?.afterRecord?.('PayoutBatchReplaced');
  log.info('payout batch: unconfirmed; replaced by fee', { batchId: batch.batchId, txHash: transaction.txHash, replacedTxHash: current.txHash, fee: transaction.fee, replacedFee: current.fee, blocksWaited: head.number - current.headBlockNumber });
  return true;
};
