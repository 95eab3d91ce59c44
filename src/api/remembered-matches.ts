import type { Result, Router } from 'hono/router';
import { TrieRouter } from 'hono/router/trie-router';
import { BoundedMap } from '../lib/bounded-map.js';

/** how many matches of paths without parameters a router keeps (the API has about 60 such method and path pairs) */
const REMEMBERED_MATCHES = 1_000;

const hasNoParameters = (params: object): boolean => {
  for (const _ in params) return false;
  return true;
};

/**
 * hono's trie router (the one the API's paths need: the RegExp router refuses a literal segment
 * beside a parameter at the same depth, as /payments/deposit-address beside
 * /payments/:userId/deposits), with the match of a path that carries no parameters kept by method
 * and path: POST /withdrawals and every other fixed path match once, instead of each request
 * building the same handler list (which it then holds, and a minor collection copies, for as long
 * as it runs). A match is only read after it is made (its parameter objects are made anew by the
 * next search), so one kept match serves every request; one with parameters is never kept.
 * Adding a route forgets what was kept.
 */
export class RememberingTrieRouter<T> implements Router<T> {
  readonly name = 'RememberingTrieRouter';
  private readonly trie = new TrieRouter<T>();
  private readonly matches = new BoundedMap<string, Result<T>>(REMEMBERED_MATCHES);

  add(method: string, path: string, handler: T): void {
    this.matches.clear();
    this.trie.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    const key = `${method} ${path}`;
    const kept = this.matches.get(key);
    if (kept) return kept;
    const result = this.trie.match(method, path);
    if ((result[0] as [T, object][]).every(([, params]) => hasNoParameters(params))) this.matches.set(key, result);
    return result;
  }
}
