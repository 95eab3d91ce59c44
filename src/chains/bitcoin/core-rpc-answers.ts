import { classifyAnswer, type AnswerRow, type BroadcastAnswer } from '../transfers/refusals.js';

/**
 * How Bitcoin Core's own answers to a signed transaction are read, over its JSON-RPC: an error of
 * `sendrawtransaction` ("<reject reason> (code <n>)", as JsonRpcError words it) or the
 * `reject-reason` of `testmempoolaccept`. RPC codes: -22 decode failed, -25 transaction error
 * (inputs missing or spent, or a fee above the node's maxfeerate), -26 rejected by mempool policy
 * or consensus, -27 already in the chain. Reasons before codes: -25 carries two meanings.
 */
export const BITCOIN_CORE_RPC_ANSWERS: readonly AnswerRow[] = [
  { matches: /txn-already-in-mempool|txn-already-known|txn-same-nonwitness-data-in-mempool|already in block ?chain|outputs already in utxo set|\(code -27\)/i, answer: 'known', why: 'the node holds this transaction already (its mempool or its chain)', example: 'sendrawtransaction: Transaction outputs already in utxo set (code -27)' },
  { matches: /max-fee-exceeded|fee exceeds maximum/i, answer: 'invalid', why: "its fee is above the node's maxfeerate: these bytes never pass that node", example: 'sendrawtransaction: Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate) (code -25)' },
  { matches: /bad-txns-inputs-missingorspent|missing-inputs|missingorspent|\(code -25\)/i, answer: 'conflict', why: 'an input is spent (by this transaction or another) or not yet known: the chain at depth tells which', example: 'sendrawtransaction: bad-txns-inputs-missingorspent (code -25)' },
  { matches: /txn-mempool-conflict|insufficient fee|replacement-adds-unconfirmed|too many potential replacements|bip125-replacement-disallowed/i, answer: 'conflict', why: 'another pending transaction spends the same inputs and is not replaced: the chain decides which', example: 'testmempoolaccept: txn-mempool-conflict' },
  { matches: /min relay fee not met|mempool min fee not met|mempool full|too-long-mempool-chain|non-BIP68-final|non-final|premature-spend-of-coinbase/i, answer: 'transient', why: 'a mempool policy of the moment (fee floor, chain limits, time locks), which can change', example: 'sendrawtransaction: mempool min fee not met, 110 < 141 (code -26)' },
  { matches: /dust|scriptsig|script-verify|bad-txns|tx-size|scriptpubkey|multi-op-return|bare-multisig|TX decode failed|\(code -2[26]\)/i, answer: 'invalid', why: 'the node refuses the transaction itself (form, signature, amounts, standardness)', example: 'sendrawtransaction: mandatory-script-verify-flag-failed (Signature must be zero for failed CHECK(MULTI)SIG operation) (code -26)' },
];

/** Unknown words are `invalid`: the transaction is made impossible before it can end, never failed as it is. */
export const classifyBitcoinCoreAnswer = (text: string): BroadcastAnswer => classifyAnswer(BITCOIN_CORE_RPC_ANSWERS, text, 'invalid');
