import { DUST_LIMIT_SATS, signBitcoinTransfer } from '../bitcoin/transactions.js';
import { signEvmTransfer } from '../evm/transactions.js';
import { signTronTransfer } from '../tron/transactions.js';
import { signXrpPayment } from '../xrp/transactions.js';
import { nextSyntheticNumber, type ChainState } from './chain-state.js';
import { bitcoinVirtualSize, BITCOIN_FEE_RATE_SAT_PER_VBYTE, estimateTransferFee, TRON_TOKEN_FEE_LIMIT_SUN, XRP_FEE_DROPS } from './fees.js';
import { faucetKey } from './faucet-keys.js';
import { syntheticTransactionHash } from './hashes.js';
import { accountBalance, firstNonce, unspentOutputsOf, usedNonces, WHOLE_MEMPOOL } from './ledger.js';
import { enqueue } from './mempool.js';
import type { DevnetDb } from './tables.js';

export interface FaucetTransfer {
  to: string;
  /** 'native' or the token contract (as DecodedTransfer names it) */
  asset: string;
  amount: bigint;
  destinationTag: number | null;
}

/** Bitcoin coinbase credits carry this much more than needed, so that the faucet's later deposits spend change. */
const BITCOIN_CREDIT_HEADROOM_SATS = 10_000_000n;
/** Tron transactions expire a minute after they are made; XRP payments a few ledgers after the head. */
const TRON_EXPIRATION_MS = 60_000;
const XRP_LEDGER_WINDOW = 20;

/**
 * Mints `amount` of `asset` to the faucet: an unsigned, genesis-style credit (a coinbase output on
 * Bitcoin) queued in the mempool, mined in the same block as the transfer that spends it.
 */
const credit = async (trx: DevnetDb, state: ChainState, asset: string, amount: bigint): Promise<string> => {
  const { chain } = state;
  const hash = syntheticTransactionHash(chain, 'credit', await nextSyntheticNumber(trx, chain.id));
  const to = faucetKey(chain).address;
  await enqueue(
    trx,
    chain.id,
    { hash, kind: 'credit', raw: null, sender: null, nonce: null, fee: 0n, spends: [], error: null, transfers: [{ index: 0, from: '', to, asset, amount, destinationTag: null }] },
    false,
  );
  return hash;
};

/** Tops the faucet up so it can send `amount` of `asset` and pay `fee`, counting what the mempool already holds. */
const fundAccountFaucet = async (trx: DevnetDb, state: ChainState, asset: string, amount: bigint, fee: bigint) => {
  const { chain } = state;
  const address = faucetKey(chain).address;
  const needs = asset === 'native' ? [['native', amount + fee] as const] : [[asset, amount] as const, ['native', fee] as const];
  for (const [needed, required] of needs) {
    const balance = await accountBalance(trx, chain.id, address, needed, WHOLE_MEMPOOL);
    if (balance < required) await credit(trx, state, needed, required - balance);
  }
};

const signBitcoin = async (trx: DevnetDb, state: ChainState, transfer: FaucetTransfer): Promise<string> => {
  const { chain } = state;
  const key = faucetKey(chain);
  const feeFor = (inputs: number) => bitcoinVirtualSize(inputs, 2) * BITCOIN_FEE_RATE_SAT_PER_VBYTE;
  const inputs: { txHash: string; index: number; amount: bigint }[] = [];
  let total = 0n;
  for (const output of await unspentOutputsOf(trx, chain.id, [key.address], WHOLE_MEMPOOL, 50)) {
    if (total >= transfer.amount + feeFor(inputs.length)) break;
    inputs.push(output);
    total += output.amount;
  }
  if (total < transfer.amount + feeFor(inputs.length)) {
    const shortfall = transfer.amount + feeFor(inputs.length + 1) - total + BITCOIN_CREDIT_HEADROOM_SATS;
    const txHash = await credit(trx, state, 'native', shortfall);
    inputs.push({ txHash, index: 0, amount: shortfall });
    total += shortfall;
  }
  const change = total - transfer.amount - feeFor(inputs.length);
  const outputs = [{ address: transfer.to, amount: transfer.amount }];
  // change below the dust limit is left to the miner, as wallets do
  if (change >= DUST_LIMIT_SATS) outputs.push({ address: key.address, amount: change });
  return signBitcoinTransfer({ network: chain.network, inputs: inputs.map((input) => ({ ...input, privateKey: key.privateKey })), outputs }).raw;
};

/**
 * A transfer signed by the faucet with the family's library (inside withLockedChain), the faucet
 * topped up first. The caller offers the raw transaction to the node like any broadcast.
 */
export const signFaucetTransfer = async (trx: DevnetDb, state: ChainState, transfer: FaucetTransfer, now: Date): Promise<string> => {
  const { chain } = state;
  const key = faucetKey(chain);
  if (chain.family === 'bitcoin') return signBitcoin(trx, state, transfer);

  const estimate = estimateTransferFee(chain.family, transfer.asset);
  await fundAccountFaucet(trx, state, transfer.asset, transfer.amount, estimate.fee);
  const nonce = firstNonce(chain) + (await usedNonces(trx, chain.id, key.address, WHOLE_MEMPOOL));
  switch (chain.family) {
    case 'evm':
      return signEvmTransfer(key.privateKey, {
        chainId: chain.evmChainId!,
        to: transfer.to,
        asset: transfer.asset,
        amount: transfer.amount,
        nonce,
        gasLimit: BigInt(estimate.parameters.gasLimit!),
        maxFeePerGas: BigInt(estimate.parameters.maxFeePerGas!),
        maxPriorityFeePerGas: BigInt(estimate.parameters.maxPriorityFeePerGas!),
      });
    case 'tron': {
      // the counter makes two otherwise identical transfers distinct transactions (Tron has no nonce)
      const timestamp = now.getTime() + (await nextSyntheticNumber(trx, chain.id));
      return signTronTransfer(key.privateKey, {
        to: transfer.to,
        amount: transfer.amount,
        ...(transfer.asset === 'native' ? {} : { trc20: { contract: transfer.asset, feeLimit: TRON_TOKEN_FEE_LIMIT_SUN } }),
        refBlock: { number: state.head.number, hash: state.head.hash },
        timestamp,
        expiration: timestamp + TRON_EXPIRATION_MS,
      });
    }
    case 'xrp':
      return signXrpPayment(key.privateKey, {
        account: key.address,
        destination: transfer.to,
        amountDrops: transfer.amount,
        ...(transfer.destinationTag === null ? {} : { destinationTag: transfer.destinationTag }),
        fee: XRP_FEE_DROPS,
        sequence: nonce,
        lastLedgerSequence: state.head.number + XRP_LEDGER_WINDOW,
      });
  }
};
