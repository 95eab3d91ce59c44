import { AbiCoder, computeAddress, getAddress, getCreateAddress, hexlify, id, SigningKey, Transaction, type BytesLike } from 'ethers';
import { InvalidTransactionError, type ChainDefinition, type DecodedTransaction, type DecodedTransfer, type TransactionCodec } from '../../catalog/chain.js';

/** An EIP-1559 transfer of the native asset or of an ERC-20 token, with the fee parameters FeeEstimate gave. */
export interface EvmTransferParams {
  /** the recipient of the native value or of the tokens */
  to: string;
  /** 'native', or the ERC-20 contract address */
  asset: string;
  amount: bigint;
  nonce: number;
  gasLimit: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

const ERC20_TRANSFER_SELECTOR = id('transfer(address,uint256)').slice(0, 10);
const abi = AbiCoder.defaultAbiCoder();

const transferCallData = (recipient: string, amount: bigint) =>
  ERC20_TRANSFER_SELECTOR + abi.encode(['address', 'uint256'], [recipient, amount]).slice(2);

/** Builds and signs a type-2 transaction for one EIP-155 chain; returns the raw signed transaction (0x…). */
export const signEvmTransfer = (privateKey: Uint8Array, params: EvmTransferParams & { chainId: number }): string => {
  const recipient = getAddress(params.to);
  const isNative = params.asset === 'native';
  // the one transfer of nothing: a wallet taking its own nonce back (a cancellation, src/chains/transfers/cancellation.ts)
  const takesNonceBack = isNative && params.amount === 0n && recipient === computeAddress(new SigningKey(hexlify(privateKey)).publicKey);
  if (params.amount <= 0n && !takesNonceBack) throw new RangeError('a transfer moves a positive amount');
  const transaction = Transaction.from({
    type: 2,
    chainId: params.chainId,
    nonce: params.nonce,
    gasLimit: params.gasLimit,
    maxFeePerGas: params.maxFeePerGas,
    maxPriorityFeePerGas: params.maxPriorityFeePerGas,
    to: isNative ? recipient : getAddress(params.asset),
    value: isNative ? params.amount : 0n,
    data: isNative ? '0x' : transferCallData(recipient, params.amount),
  });
  transaction.signature = new SigningKey(hexlify(privateKey)).sign(transaction.unsignedHash);
  return transaction.serialized;
};

/** The recipient and amount of an ERC-20 `transfer(address,uint256)` call; undefined for any other call data. */
const erc20TransferIn = (data: BytesLike): { to: string; amount: bigint } | undefined => {
  const hex = hexlify(data);
  if (!hex.startsWith(ERC20_TRANSFER_SELECTOR)) return undefined;
  try {
    const [to, amount] = abi.decode(['address', 'uint256'], '0x' + hex.slice(ERC20_TRANSFER_SELECTOR.length)) as unknown as [string, bigint];
    return { to, amount };
  } catch {
    return undefined; // a call with that selector but arguments the token would not accept either
  }
};

/**
 * ethers throws on malformed RLP, a non-canonical (high) s, an r or s that is no curve point… All of
 * it is InvalidTransactionError here. A tampered but well-formed signature (or signed field) still
 * recovers an account, just another one: an EVM transaction names no sender to check it against, so
 * only that account's balance and nonce refuse it.
 */
const decode = (raw: string, chain: ChainDefinition): DecodedTransaction => {
  const transaction = Transaction.from(raw);
  // legacy (0), access-list (1) and EIP-1559 (2) transfers; blob (3) and set-code (4) carry more than a transfer
  if (transaction.type === null || transaction.type > 2) throw new InvalidTransactionError(`unsupported transaction type ${transaction.type}`);
  if (!transaction.signature || !transaction.hash) throw new InvalidTransactionError('the transaction is not signed');
  if (transaction.chainId !== BigInt(chain.evmChainId ?? -1)) {
    throw new InvalidTransactionError(`the transaction is for chain id ${transaction.chainId}, not ${chain.evmChainId} (${chain.id})`);
  }
  const from = transaction.from;
  if (!from) throw new InvalidTransactionError('the signature does not verify');

  const destination = transaction.to ?? getCreateAddress({ from, nonce: transaction.nonce });
  const transfers: DecodedTransfer[] = [];
  if (transaction.value > 0n) {
    transfers.push({ index: 0, from, to: destination, asset: 'native', amount: transaction.value, destinationTag: null });
  }
  const tokenTransfer = transaction.to ? erc20TransferIn(transaction.data) : undefined;
  if (tokenTransfer) {
    transfers.push({ index: 0, from, to: tokenTransfer.to, asset: destination.toLowerCase(), amount: tokenTransfer.amount, destinationTag: null });
  }
  const maxGasPrice = transaction.maxFeePerGas ?? transaction.gasPrice ?? 0n;
  return { hash: transaction.hash, from, transfers, fee: transaction.gasLimit * maxGasPrice, nonce: transaction.nonce, spends: [] };
};

/**
 * The hash of a signed EVM transaction, without recovering its signer (what decoding does, an
 * elliptic-curve computation of about 2 ms): for the service's own transactions, just signed, whose
 * hash is recorded before they are sent.
 */
export const evmTransactionHash = (raw: string): string => Transaction.from(raw).hash!;

export const evmTransactions: TransactionCodec = {
  family: 'evm',
  hashOfSigned: evmTransactionHash,
  decodeSignedTransaction: (raw, { chain }) => {
    try {
      return decode(raw, chain);
    } catch (error) {
      if (error instanceof InvalidTransactionError) throw error;
      throw new InvalidTransactionError(`malformed EVM transaction: ${(error as Error).message}`);
    }
  },
};
