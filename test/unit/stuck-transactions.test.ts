import { describe, expect, it } from 'vitest';
import { StuckTransactions } from '../../src/chains/transfers/stuck.js';
import { createLogger } from '../../src/log.js';

describe('StuckTransactions: a transaction without an outcome too long is reported, once per period', () => {
  const setup = (limitMs: number) => {
    const lines: string[] = [];
    let now = Date.parse('2026-11-24T00:00:00Z');
    const stuck = new StuckTransactions(createLogger('warn', {}, (line) => lines.push(line)), () => limitMs, () => new Date(now));
    return { stuck, lines, advance: (ms: number) => (now += ms) };
  };

  it('says nothing before the limit, warns once at it, again one period later, and forgets a settled one', () => {
    const { stuck, lines, advance } = setup(60_000);
    stuck.observe('eip155:1', '0xaa', true);
    advance(59_000);
    stuck.observe('eip155:1', '0xaa', true);
    expect(lines).toHaveLength(0);
    expect(stuck.list()).toEqual([]);
    advance(1_000);
    stuck.observe('eip155:1', '0xaa', true);
    stuck.observe('eip155:1', '0xaa', true);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'warn', chainId: 'eip155:1', txHash: '0xaa', minutes: 1 });
    expect(stuck.list()).toEqual([{ chainId: 'eip155:1', txHash: '0xaa', since: new Date('2026-11-24T00:00:00Z') }]);
    advance(60_000);
    stuck.observe('eip155:1', '0xaa', true);
    expect(lines).toHaveLength(2);
    stuck.observe('eip155:1', '0xaa', false);
    expect(stuck.list()).toEqual([]);
  });
});
