import type { CommandMetadata } from '../../application/command-handler.js';
import { findToken } from '../../catalog/tokens.js';
import { transactionCodecs } from '../../chains/families.js';
import { bumpedEip1559Fees, type Eip1559Fees } from '../../domain/withdrawal/eip1559-replacement.js';
import type { WithdrawalCommand } from '../../domain/withdrawal/decide.js';
import type { WithdrawalRecord } from '../../domain/withdrawal/withdrawal.js';
import { DomainError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { withdrawalGasTopUps } from './gas.js';
import { DEFAULT_REPLACE_AFTER_BLOCKS, isStuck } from './replacement.js';
import type { WithdrawalProcessingServices } from './services.js';

export type EvmReplacement = 'replaced' | 'waiting' | 'unchanged';

/** withdrawal id → the head at which "cannot be replaced" was last logged: once per replacement period */
const unreplaceableLogged = new Map<string, number>();

/**
 * EVM: a withdrawal's transaction still unmined `replaceAfterBlocks` after it was signed (priced
 * under a base fee that rose: pending, or evicted and refused as underpriced) is replaced by one of the same nonce paying the recipient the same,
 * both fee fields at least 10 % higher and maxFeePerGas never above the chain's fee cap.
 *
 * The gas is the gas wallet's, never the organization's coins: the settlement wallet received
 * exactly the first transaction's most possible fee, so the replacement's higher one is topped up
 * first (a top-up recorded as `replacing` the stuck transaction, followed to its confirmation), and
 * the replacement offers what that top-up pays for. The replacement is recorded before it is sent
 * (the next look sends it), so a crash in between re-sends that one, never a third; whichever of
 * the two is mined completes the withdrawal, with its own hash and fee.
 */
export const replaceEvmIfStuck = async (
  services: WithdrawalProcessingServices,
  withdrawal: WithdrawalRecord,
  record: (command: Exclude<WithdrawalCommand, { type: 'RequestWithdrawal' }>) => Promise<boolean>,
  metadata: CommandMetadata,
  log: Logger,
): Promise<EvmReplacement> => {
  const { chain, gateway, signer } = services;
  const signed = withdrawal.signedTransaction;
  const replaceAfterBlocks = services.replaceAfterBlocks ?? DEFAULT_REPLACE_AFTER_BLOCKS;
  if (!signed || signed.nonce === null || signed.maxFeePerGas === undefined || signed.maxPriorityFeePerGas === undefined) return 'unchanged';
  const head = await gateway.head();
  if (!isStuck(signed, head.number, replaceAfterBlocks)) return 'unchanged';
  // one of its transactions mined, at any depth: it is being settled, not stuck
  for (const transaction of [signed, ...(withdrawal.replacedTransactions ?? [])]) {
    const status = await gateway.transactionStatus(transaction.txHash);
    if (status.status === 'confirmed' || status.status === 'failed') return 'unchanged';
  }
  const token = findToken(withdrawal.tokenId);
  if (!token) return 'unchanged';
  const asset = token.kind === 'native' ? 'native' : token.address;
  const amount = BigInt(withdrawal.amount);
  const stuck: Eip1559Fees = { maxFeePerGas: BigInt(signed.maxFeePerGas), maxPriorityFeePerGas: BigInt(signed.maxPriorityFeePerGas) };
  const gasLimit = BigInt(signed.fee) / stuck.maxFeePerGas; // its fee is gasLimit × maxFeePerGas
  const wallets = await services.wallets.walletsOf(withdrawal.orgId, chain.id, metadata);
  const unreplaceable = (reason: string): EvmReplacement => {
    const logged = unreplaceableLogged.get(withdrawal.id);
    if (logged === undefined || head.number - logged >= replaceAfterBlocks) {
      unreplaceableLogged.set(withdrawal.id, head.number);
      log.warn('withdrawal: pending and cannot be replaced; still waiting for it', { txHash: signed.txHash, reason });
    }
    return 'unchanged';
  };
  const market = async (): Promise<Eip1559Fees> => {
    const { parameters } = await gateway.estimateFee({ from: wallets.settlementAddress, to: withdrawal.recipient, asset, amount });
    return { maxFeePerGas: BigInt(parameters.maxFeePerGas ?? '0'), maxPriorityFeePerGas: BigInt(parameters.maxPriorityFeePerGas ?? '0') };
  };

  const gas = await withdrawalGasTopUps(services, withdrawal, wallets, metadata);
  const toppedUp = gas.state.status !== 'None' && gas.state.replacing === signed.txHash ? gas.state : null;
  if (toppedUp?.status === 'Signed') {
    const followed = await gas.follow();
    if (followed.kind !== 'confirmed') return 'waiting';
  }
  if (toppedUp?.status === 'Signed' || toppedUp?.status === 'Confirmed') {
    // the replacement offers what the top-up pays for: at most the stuck fee plus the top-up per gas
    const paidFor = stuck.maxFeePerGas + BigInt(toppedUp.step.amount) / gasLimit;
    const fees = bumpedEip1559Fees(stuck, await market(), paidFor);
    if (!fees) return unreplaceable(`the top-up pays for ${paidFor} wei per gas, under 10 % above ${stuck.maxFeePerGas}`);
    const raw = signer.signEvmTransfer(chain, { branch: 'settlement', index: wallets.index }, { to: withdrawal.recipient, asset, amount, nonce: signed.nonce, gasLimit, ...fees });
    const { hash } = transactionCodecs.evm.decodeSignedTransaction(raw, { chain });
    const fee = gasLimit * fees.maxFeePerGas;
    await record({
      type: 'RecordReplacementTransaction',
      id: withdrawal.id,
      raw,
      txHash: hash,
      replacedTxHash: signed.txHash,
      fee: fee.toString(),
      headBlockNumber: head.number,
      nonce: signed.nonce,
      maxFeePerGas: fees.maxFeePerGas.toString(),
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
    });
    unreplaceableLogged.delete(withdrawal.id);
    log.info('withdrawal: pending; replaced at higher fees', { txHash: hash, replacedTxHash: signed.txHash, nonce: signed.nonce, ...fees, blocksWaited: head.number - signed.headBlockNumber! });
    return 'replaced';
  }

  // priced now: 10 % above the stuck one at least, the market's if higher, within the fee cap
  const fees = bumpedEip1559Fees(stuck, await market(), services.maxFeePerGas);
  if (!fees) return unreplaceable(`10 % above ${stuck.maxFeePerGas} wei per gas is above the chain's fee cap (${services.maxFeePerGas})`);
  let sent;
  try {
    sent = await gas.send(gasLimit * (fees.maxFeePerGas - stuck.maxFeePerGas), signed.txHash);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'GAS_TOP_UP_LIMIT') return unreplaceable(error.message);
    throw error;
  }
  return sent.kind === 'failed' ? unreplaceable(sent.error) : 'waiting';
};
