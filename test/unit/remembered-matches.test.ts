import { TrieRouter } from 'hono/router/trie-router';
import { describe, expect, it } from 'vitest';
import { RememberingTrieRouter } from '../../src/api/remembered-matches.js';

const routes: [string, string, string][] = [
  ['ALL', '*', 'context'],
  ['ALL', '/withdrawals/*', 'authenticate'],
  ['POST', '/withdrawals', 'create'],
  ['POST', '/withdrawals/approve', 'approve many'],
  ['GET', '/withdrawals/:id', 'get'],
  ['POST', '/withdrawals/:id/approve', 'approve'],
];

const both = () => {
  const trie = new TrieRouter<string>();
  const remembering = new RememberingTrieRouter<string>();
  for (const [method, path, handler] of routes) {
    trie.add(method, path, handler);
    remembering.add(method, path, handler);
  }
  return { trie, remembering };
};

describe('RememberingTrieRouter', () => {
  it('matches as the trie router does, the first time and every time after', () => {
    const { trie, remembering } = both();
    for (const [method, path] of [['POST', '/withdrawals'], ['GET', '/withdrawals/w-1'], ['GET', '/withdrawals/w-2'], ['POST', '/withdrawals/approve'], ['POST', '/withdrawals/w-1/approve'], ['DELETE', '/nothing']] as const) {
      expect(remembering.match(method, path)).toEqual(trie.match(method, path));
      expect(remembering.match(method, path)).toEqual(trie.match(method, path));
    }
  });

  it('keeps the match of a path without parameters, never one with them', () => {
    const { remembering } = both();
    expect(remembering.match('POST', '/withdrawals')).toBe(remembering.match('POST', '/withdrawals'));
    const first = remembering.match('GET', '/withdrawals/w-1');
    const second = remembering.match('GET', '/withdrawals/w-2');
    expect(first).not.toBe(second);
    expect(first[0].at(-1)).toEqual(['get', { id: 'w-1' }]);
    expect(second[0].at(-1)).toEqual(['get', { id: 'w-2' }]);
  });

  it('forgets what it kept when a route is added', () => {
    const { remembering } = both();
    expect(remembering.match('GET', '/health')[0].map(([handler]) => handler)).toEqual(['context']);
    remembering.add('GET', '/health', 'health');
    expect(remembering.match('GET', '/health')[0].map(([handler]) => handler)).toEqual(['context', 'health']);
  });
});
