import { classifyAnswer, type AnswerRow, type BroadcastAnswer } from '../transfers/refusals.js';

/**
 * How an EVM node's answer to eth_sendRawTransaction is read. Nodes (geth, erigon, nethermind,
 * besu, anvil) answer JSON-RPC error -32000/-32003/-32010 with their own words, so the words decide;
 * the codes are kept for the rows whose code is specific.
 */
export const EVM_BROADCAST_ANSWERS: readonly AnswerRow[] = [
  { matches: /already known|known transaction|already imported|ALREADY_EXISTS|transaction already in (pool|mempool)/i, answer: 'known', why: 'the node holds these bytes already', example: 'already known' },
  { matches: /nonce too low|nonce has already been used|OldNonce|nonce is too low/i, answer: 'conflict', why: 'the nonce is taken: by this transaction (mined, or seen first by another endpoint) or by another one; only the chain at depth tells which', example: 'nonce too low: next nonce 8, tx nonce 7' },
  { matches: /replacement (transaction )?underpriced|ReplacementUnderpriced/i, answer: 'conflict', why: 'a transaction with this nonce is pending: this one or a rival; the chain decides', example: 'replacement transaction underpriced' },
  { matches: /nonce too high|NonceTooHigh|future transaction/i, answer: 'transient', why: 'an earlier nonce is still pending; these bytes become valid once it is mined', example: 'nonce too high' },
  { matches: /underpriced|fee cap less than block base fee|max fee per gas less than block base fee|FeeCapTooLow|gas price too low/i, answer: 'transient', why: 'below the fee market of the moment, which can fall', example: 'max fee per gas less than block base fee: maxFeePerGas: 1, baseFee: 7' },
  { matches: /txpool is full|mempool is full|too many transactions|rate limit|busy|try again/i, answer: 'transient', why: 'the node cannot take it now', example: 'txpool is full' },
  { matches: /insufficient funds|InsufficientFunds|LackOfFundForMaxFee/i, answer: 'invalid', why: 'the sender cannot pay now; funds may arrive later, so the bytes stay valid until their nonce is used', example: 'insufficient funds for gas * price + value' },
  { matches: /intrinsic gas too low|gas limit reached|exceeds block gas limit|invalid sender|invalid signature|chain ?id/i, answer: 'invalid', why: 'the node refuses the transaction itself', example: 'intrinsic gas too low' },
];

/** Unknown words are read as `invalid`: the transaction is then made impossible by one of ours on its nonce, which is safe whichever is mined. */
export const classifyEvmAnswer = (message: string): BroadcastAnswer => classifyAnswer(EVM_BROADCAST_ANSWERS, message, 'invalid');
