import { describe, expect, it } from 'vitest';
import { TOKENS } from '../../src/catalog/tokens.js';
import type { BlockTransfer } from '../../src/chains/gateway.js';
import { LegacyLogDeposits } from '../../src/processes/deposit-watcher/legacy-log-deposits.js';

const ETHEREUM = 'eip155:1';
const usdt = TOKENS.find((token) => token.chainId === ETHEREUM && token.symbol === 'USDT')!;
const tx = `0x${'ab'.repeat(32)}`;
const alice = '0x00000000000000000000000000000000000A11cE';
const bob = '0x0000000000000000000000000000000000000B0b';
const sender = '0x000000000000000000000000000000000000dEaD';

const transfer = (index: number, to: string, amount: bigint, txHash = tx): BlockTransfer => ({
  txHash,
  index,
  blockNumber: 9,
  blockHash: '0x09',
  from: sender,
  to,
  asset: usdt.address.toLowerCase(),
  amount,
  destinationTag: null,
});
const legacy = (index: number, to: string, amount: bigint) => ({ txHash: tx, index, tokenId: usdt.id, senderAddress: sender, toAddress: to.toLowerCase(), amount: amount.toString() });

describe('LegacyLogDeposits: token deposits keyed by the log index in the block are found again by content', () => {
  it('keys a transfer of a transaction with no old deposit by its index within the transaction', () => {
    const deposits = new LegacyLogDeposits(ETHEREUM, 'evm');
    expect(deposits.keyAll([transfer(0, alice, 5n), { ...transfer(0, alice, 1n), asset: 'native' }])).toEqual([{ index: 0, logIndexInTransaction: true }, { index: 0 }]);
  });

  it('gives a transfer the old key of the deposit it matches, alike transfers paired in order, and refuses one whose new key an old deposit holds', () => {
    const deposits = new LegacyLogDeposits(ETHEREUM, 'evm');
    // recorded before the upgrade at block-wide indices 7, 8 and 9: two alike transfers to alice, one to bob
    deposits.note(legacy(7, alice, 5n));
    deposits.note(legacy(8, alice, 5n));
    deposits.note(legacy(9, bob, 6n));
    deposits.note(legacy(7, alice, 5n)); // detected again after a revert: nothing new
    // a deposit keyed the new way is no old one
    deposits.note({ ...legacy(1, bob, 6n), txHash: `0x${'cd'.repeat(32)}`, logIndexInTransaction: true });

    const seen = [transfer(2, bob, 6n), transfer(1, alice, 5n), transfer(0, alice, 5n), transfer(3, bob, 1n), transfer(7, bob, 2n), transfer(1, bob, 6n, `0x${'cd'.repeat(32)}`)];
    expect(deposits.keyAll(seen)).toEqual([
      { index: 9 },
      { index: 8 },
      { index: 7 },
      { index: 3, logIndexInTransaction: true }, // a transfer never seen: the new key is free
      { refused: expect.stringContaining('log 7') }, // never seen, and its new key is alice's old deposit's
      { index: 1, logIndexInTransaction: true },
    ]);
  });

  it('leaves other chains\' indices alone', () => {
    const deposits = new LegacyLogDeposits('tron:0x00000000000000000000000000000000', 'tron');
    deposits.note(legacy(7, alice, 5n));
    expect(deposits.keyAll([transfer(0, alice, 5n)])).toEqual([{ index: 0 }]);
  });
});
