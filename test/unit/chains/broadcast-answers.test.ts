import { describe, expect, it } from 'vitest';
import { BITCOIN_BROADCAST_ANSWERS, classifyBitcoinAnswer } from '../../../src/chains/bitcoin/broadcast-answers.js';
import { BITCOIN_CORE_RPC_ANSWERS, classifyBitcoinCoreAnswer } from '../../../src/chains/bitcoin/core-rpc-answers.js';
import { classifyDevnetAnswer, DEVNET_BROADCAST_ANSWERS } from '../../../src/chains/devnet/broadcast-answers.js';
import { classifyEvmAnswer, EVM_BROADCAST_ANSWERS } from '../../../src/chains/evm/broadcast-answers.js';
import { classifyTronAnswer, TRON_BROADCAST_ANSWERS } from '../../../src/chains/tron/broadcast-answers.js';
import type { AnswerRow, BroadcastAnswer } from '../../../src/chains/transfers/refusals.js';
import { classifyXrpAnswer, XRP_BROADCAST_ANSWERS } from '../../../src/chains/xrp/broadcast-answers.js';

const families: [string, readonly AnswerRow[], (text: string) => BroadcastAnswer][] = [
  ['EVM', EVM_BROADCAST_ANSWERS, classifyEvmAnswer],
  ['Bitcoin', BITCOIN_BROADCAST_ANSWERS, classifyBitcoinAnswer],
  ['Bitcoin Core RPC', BITCOIN_CORE_RPC_ANSWERS, classifyBitcoinCoreAnswer],
  ['XRP', XRP_BROADCAST_ANSWERS, classifyXrpAnswer],
  ['Tron', TRON_BROADCAST_ANSWERS, classifyTronAnswer],
  ['devnet', DEVNET_BROADCAST_ANSWERS, classifyDevnetAnswer],
];

describe.each(families)('%s broadcast answers: each row of the table, read as it says', (_family, table, classify) => {
  it.each(table.map((row) => [row.example, row.answer, row.why] as const))('%s → %s (%s)', (example, answer) => {
    expect(classify(example)).toBe(answer);
  });
});

describe('answers no table names', () => {
  it('EVM and Bitcoin: unknown words are invalid (made impossible, never failed as they are); XRP: transient', () => {
    expect(classifyEvmAnswer('something new under the sun')).toBe('invalid');
    expect(classifyBitcoinAnswer('sendrawtransaction RPC error: {"code":-1,"message":"??"}')).toBe('invalid');
    expect(classifyXrpAnswer('xyzUNKNOWN')).toBe('transient');
    expect(classifyTronAnswer('NEW_CODE: ?')).toBe('invalid');
  });

  it('EVM: "replacement transaction underpriced" is a conflict, a plain "underpriced" transient (row order matters)', () => {
    expect(classifyEvmAnswer('replacement transaction underpriced')).toBe('conflict');
    expect(classifyEvmAnswer('transaction underpriced')).toBe('transient');
  });

  it('Bitcoin Core RPC: -25 is a conflict unless the fee is above maxfeerate; unknown words are invalid; testmempoolaccept reasons read like sendrawtransaction errors', () => {
    expect(classifyBitcoinCoreAnswer('sendrawtransaction: Missing inputs (code -25)')).toBe('conflict');
    expect(classifyBitcoinCoreAnswer('sendrawtransaction: max-fee-exceeded (code -25)')).toBe('invalid');
    expect(classifyBitcoinCoreAnswer('testmempoolaccept: missing-inputs')).toBe('conflict');
    expect(classifyBitcoinCoreAnswer('testmempoolaccept: txn-already-known')).toBe('known');
    expect(classifyBitcoinCoreAnswer('testmempoolaccept: insufficient fee, rejecting replacement 0b…; new feerate 0.00001 <= old feerate 0.00002')).toBe('conflict');
    expect(classifyBitcoinCoreAnswer('sendrawtransaction: something new (code -26)')).toBe('invalid');
    expect(classifyBitcoinCoreAnswer('sendrawtransaction: ?? (code -1)')).toBe('invalid');
  });

  it('the devnet: a used nonce or sequence is a conflict, one ahead of the account transient', () => {
    expect(classifyDevnetAnswer("nonce 3 is not the account's next nonce (5)")).toBe('conflict');
    expect(classifyDevnetAnswer("sequence 9 is not the account's next sequence (7)")).toBe('transient');
  });

});
