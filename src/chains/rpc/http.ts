import type { Logger } from '../../log.js';
import { createFailover, RpcUnavailableError, type FailoverOptions } from './failover.js';

/**
 * HTTP and JSON-RPC over several endpoints of one chain (createFailover's timeouts, retries and
 * failover). The transport is a `fetch`-like function: the real `fetch` in production, a replay
 * of recorded request→response pairs in tests.
 */

/** The part of `fetch` the clients use. */
export type FetchLike = (
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string; signal: AbortSignal },
) => Promise<{ status: number; text(): Promise<string> }>;

/** The node answered with an HTTP error that is its final word (4xx): not retried. */
export class RpcHttpError extends Error {
  constructor(
    readonly endpoint: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`${endpoint} answered HTTP ${status}: ${body.slice(0, 300)}`);
    this.name = 'RpcHttpError';
  }
}

/** A JSON-RPC error object: the node understood the call and refused it. Not retried. */
export class JsonRpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    readonly rpcMessage: string,
  ) {
    super(`${method}: ${rpcMessage} (code ${code})`);
    this.name = 'JsonRpcError';
  }
}

export interface HttpClientOptions extends FailoverOptions {
  /** base URLs, tried in order; the first is preferred */
  endpoints: readonly string[];
  fetch?: FetchLike;
  logger?: Logger;
  /** sent with every request; a function is asked each time (credentials a node rewrites, like Bitcoin Core's cookie) */
  headers?: Record<string, string> | (() => Record<string, string>);
}

export interface HttpClient {
  /** GET or POST `path` under an endpoint; the body's text (404 → null, other 4xx → RpcHttpError) */
  text(path: string, body?: string | object): Promise<string | null>;
  json<T = unknown>(path: string, body?: object): Promise<T | null>;
  /** JSON-RPC 2.0 POST to the endpoint itself; `error` in the answer → JsonRpcError */
  call<T = unknown>(method: string, params?: unknown[]): Promise<T>;
}

/** Credentials in a URL (https://user:pass@host) never reach the logs. */
const redact = (url: string) => url.replace(/\/\/[^/@]*@/, '//***@');
const join = (base: string, path: string) => (path === '' ? base : `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`);

export const createHttpClient = (options: HttpClientOptions): HttpClient => {
  const fetchLike: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
  const run = createFailover(options.endpoints, redact, {
    ...options,
    onRetry:
      options.onRetry ??
      ((failure) => options.logger?.warn('node request failed, retrying', { endpoint: failure.endpoint, attempt: failure.attempt, error: failure.error.message, delayMs: failure.delayMs })),
  });
  const extraHeaders = options.headers;
  const headersNow = (): Record<string, string> => ({ accept: 'application/json', ...(typeof extraHeaders === 'function' ? extraHeaders() : extraHeaders) });

  /** one exchange with one endpoint: status and body, transient statuses thrown for the failover */
  const exchange = (path: string, body: string | undefined) =>
    run(async (endpoint, signal) => {
      const url = join(endpoint, path);
      const headers = headersNow();
      let response;
      try {
        response = await fetchLike(url, {
          method: body === undefined ? 'GET' : 'POST',
          headers: body === undefined ? headers : { ...headers, 'content-type': body.startsWith('{') || body.startsWith('[') ? 'application/json' : 'text/plain' },
          ...(body === undefined ? {} : { body }),
          signal,
        });
      } catch (error) {
        if (signal.aborted) throw error; // the failover reports the timeout
        throw new RpcUnavailableError(redact(endpoint), error instanceof Error ? error.message : String(error));
      }
      const text = await response.text();
      if (response.status >= 500 || response.status === 429) {
        // Bitcoin Core answers a JSON-RPC error with HTTP 500 and an error body: that is the node's word, not an outage
        if (!isJsonRpcErrorBody(text)) throw new RpcUnavailableError(redact(endpoint), `HTTP ${response.status}`);
      }
      return { endpoint: redact(endpoint), status: response.status, text };
    });

  const text = async (path: string, body?: string | object): Promise<string | null> => {
    const answer = await exchange(path, body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body));
    if (answer.status === 404) return null;
    if (answer.status >= 400) throw new RpcHttpError(answer.endpoint, answer.status, answer.text);
    return answer.text;
  };

  return {
    text,
    json: async <T>(path: string, body?: object) => {
      const answer = await text(path, body);
      return answer === null ? null : (JSON.parse(answer) as T);
    },
    call: async <T>(method: string, params: unknown[] = []) => {
      const answer = await exchange('', JSON.stringify({ jsonrpc: '2.0', id: method, method, params }));
      let parsed: { result?: T; error?: { code: number; message: string } | null };
      try {
        parsed = JSON.parse(answer.text) as typeof parsed;
      } catch {
        throw new RpcHttpError(answer.endpoint, answer.status, answer.text);
      }
      if (parsed.error) throw new JsonRpcError(method, parsed.error.code, parsed.error.message);
      if (answer.status >= 400) throw new RpcHttpError(answer.endpoint, answer.status, answer.text);
      return parsed.result as T;
    },
  };
};

const isJsonRpcErrorBody = (text: string): boolean => {
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    return typeof parsed === 'object' && parsed !== null && typeof parsed.error === 'object' && parsed.error !== null;
  } catch {
    return false;
  }
};
