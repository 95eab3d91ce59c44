import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { RippledError } from 'xrpl';
import type { FetchLike } from '../../src/chains/rpc/http.js';
import type { XrplCommand, XrplRequest } from '../../src/chains/xrp/requester.js';

/**
 * Replays recorded node exchanges (test/fixtures/<family>/*.json) to the gateways: an HTTP
 * exchange is matched by method, path and JSON body; a rippled one by its command object. A
 * request with no recorded answer fails the test, so a gateway cannot ask something the fixture
 * does not cover. Each fixture states in `_source` where its shapes come from.
 */

export interface HttpExchange {
  request: { method: 'GET' | 'POST'; path: string; body?: unknown };
  response: { status: number; body: unknown };
}
export interface XrplExchange {
  request: XrplCommand;
  /** `{ result }`, or `{ error, error_message }` as rippled answers a failed request */
  response: { result: unknown } | { error: string; error_message?: string };
}

export const loadFixture = <Exchange>(family: string, name: string): { _source: string; exchanges: Exchange[] } =>
  JSON.parse(readFileSync(new URL(`../fixtures/${family}/${name}.json`, import.meta.url), 'utf8')) as { _source: string; exchanges: Exchange[] };

const parsedBody = (body: string | undefined): unknown => {
  if (body === undefined) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
};

export const replayHttp = (exchanges: HttpExchange[], baseUrl = 'http://node.test') => {
  const asked: string[] = [];
  const fetch: FetchLike = async (url, init) => {
    if (!url.startsWith(baseUrl)) throw new Error(`the replay serves ${baseUrl}, not ${url}`);
    const path = url.slice(baseUrl.length);
    const body = parsedBody(init.body);
    asked.push(`${init.method} ${path}`);
    const match = exchanges.find((exchange) => exchange.request.method === init.method && exchange.request.path === path && isDeepStrictEqual(exchange.request.body, body));
    if (!match) throw new Error(`no recorded answer for ${init.method} ${path} ${init.body ?? ''}`);
    const text = typeof match.response.body === 'string' ? match.response.body : JSON.stringify(match.response.body);
    return { status: match.response.status, text: async () => text };
  };
  return { fetch, asked };
};

export const replayXrpl = (exchanges: XrplExchange[]) => {
  const asked: XrplCommand[] = [];
  const request: XrplRequest = async (command) => {
    asked.push(command);
    const match = exchanges.find((exchange) => isDeepStrictEqual(exchange.request, command));
    if (!match) throw new Error(`no recorded answer for ${JSON.stringify(command)}`);
    // xrpl.js's Client.request throws a RippledError carrying rippled's error response
    if ('error' in match.response) throw new RippledError(match.response.error_message ?? match.response.error, { ...match.response, status: 'error', type: 'response' });
    return { result: match.response.result };
  };
  return { request, asked };
};
