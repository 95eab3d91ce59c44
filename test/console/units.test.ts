import { describe, expect, it } from 'vitest';
import { formatUnits } from '../../src/console/browser/units.js';

/** The console shows amounts in token units through BigInt: every digit of any amount survives. */
describe('formatUnits', () => {
  it('writes token units without trailing zeros', () => {
    expect(formatUnits('1500000', 6)).toBe('1.5');
    expect(formatUnits('1000000', 6)).toBe('1');
    expect(formatUnits('1', 18)).toBe('0.000000000000000001');
    expect(formatUnits('0', 8)).toBe('0');
    expect(formatUnits('12345', 0)).toBe('12345');
  });

  it('keeps every digit of 2^256 − 1, which a JavaScript number would round', () => {
    const max = (2n ** 256n - 1n).toString();
    expect(formatUnits(max, 18)).toBe(`${max.slice(0, -18)}.${max.slice(-18)}`);
    expect(Number(max).toString()).not.toBe(max);
  });

  it('leaves what is not a decimal integer as it came', () => {
    expect(formatUnits('1e18', 18)).toBe('1e18');
    expect(formatUnits('-2500', 3)).toBe('-2.5');
  });
});
