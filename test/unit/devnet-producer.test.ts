import { describe, expect, it } from 'vitest';
import { waitForJoiningChains } from '../../src/chains/devnet/producer.js';

describe('the block producer bringing drifted chains back into one look', () => {
  const seen = new Date('2026-11-27T12:00:00.000Z');
  const headsAt = (...msBeforeSeen: number[]) => new Map(msBeforeSeen.map((ms, index) => [`chain-${index}`, new Date(seen.getTime() - ms)]));

  it('waits for the chains due within a quarter of a block time after the first due one, then mines them together', () => {
    // block time 200 ms: the first is due now, the second in 30 ms, the third in 45 ms, the fourth in 60 (past the quarter)
    expect(waitForJoiningChains(headsAt(200, 170, 155, 140), seen, 200)).toBe(45);
  });

  it('waits for nothing when every chain within the quarter is due already, or none is due', () => {
    expect(waitForJoiningChains(headsAt(230, 210, 100), seen, 200)).toBe(0);
    expect(waitForJoiningChains(headsAt(150, 100), seen, 200)).toBe(0);
  });

  it('delays no block past a quarter of a block time: a chain due long ago is mined at once', () => {
    // the first was passed over for a while (its lock held): the others are beyond its quarter
    expect(waitForJoiningChains(headsAt(400, 190), seen, 200)).toBe(0);
  });
});
