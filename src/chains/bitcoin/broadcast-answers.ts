import { classifyAnswer, type AnswerRow, type BroadcastAnswer } from '../transfers/refusals.js';

/**
 * How Bitcoin Core's reject reasons (sendrawtransaction, or an Esplora/electrs POST /tx that relays
 * them: `sendrawtransaction RPC error: {"code":-26,"message":"min relay fee not met"}`) are read.
 * RPC codes: -25 verify error (inputs), -26 rejected by policy or consensus, -27 already in chain.
 */
export const BITCOIN_BROADCAST_ANSWERS: readonly AnswerRow[] = [
  { matches: /"code":\s*-27|already in block ?chain|txn-already-known|txn-already-in-mempool|transaction already in/i, answer: 'known', why: 'the node holds this transaction already (mempool or chain)', example: 'sendrawtransaction RPC error: {"code":-27,"message":"Transaction already in block chain"}' },
  { matches: /bad-txns-inputs-missingorspent|missing-inputs|missingorspent|"code":\s*-25/i, answer: 'conflict', why: 'an input is spent: by this transaction or by another; the chain at depth tells which', example: 'sendrawtransaction RPC error: {"code":-25,"message":"bad-txns-inputs-missingorspent"}' },
  { matches: /txn-mempool-conflict|insufficient fee|replacement-adds-unconfirmed|too many potential replacements/i, answer: 'conflict', why: 'another pending transaction spends the same inputs; the chain decides which', example: 'sendrawtransaction RPC error: {"code":-26,"message":"txn-mempool-conflict"}' },
  { matches: /min relay fee not met|mempool min fee not met|mempool full|too-long-mempool-chain|too-long-mempool|non-BIP68-final|non-final/i, answer: 'transient', why: 'a mempool policy of the moment, which can change', example: 'sendrawtransaction RPC error: {"code":-26,"message":"min relay fee not met, 100 < 141"}' },
  { matches: /dust|scriptsig|script-verify|bad-txns|TX decode failed|non-mandatory|mandatory-script|"code":\s*-22|tx-size/i, answer: 'invalid', why: 'the node refuses the transaction itself', example: 'sendrawtransaction RPC error: {"code":-26,"message":"mandatory-script-verify-flag-failed (Signature must be zero for failed CHECK(MULTI)SIG operation)"}' },
];

export const classifyBitcoinAnswer = (message: string): BroadcastAnswer => classifyAnswer(BITCOIN_BROADCAST_ANSWERS, message, 'invalid');
