import { FetchRequest, JsonRpcProvider, Network } from 'ethers';
import type { Logger } from '../../log.js';
import { createFailover, RpcUnavailableError, type FailoverOptions } from '../rpc/failover.js';

/** A JSON-RPC error the node answered with: the node's word, not a transport failure, so no other endpoint is tried. */
export class NodeAnswerError extends Error {
  constructor(
    readonly method: string,
    readonly rpcCode: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'NodeAnswerError';
  }
}

export interface EvmRpc {
  /** one JSON-RPC call through the shared failover (src/chains/rpc/failover.ts); a node's error answer is thrown at once */
  send<T>(method: string, params: unknown[]): Promise<T>;
  destroy(): void;
}

export interface EvmRpcOptions extends Omit<FailoverOptions, 'timeoutMs' | 'onRetry'> {
  urls: readonly string[];
  evmChainId: number;
  /** per attempt, before the next endpoint is tried */
  timeoutMs: number;
  logger?: Logger;
}

/** The JSON-RPC error object ethers carries inside its own errors, when the node answered with one. */
const rpcErrorOf = (error: unknown): { code: number; message: string; data?: unknown } | null => {
  const candidates = [(error as { info?: { error?: unknown } })?.info?.error, (error as { error?: unknown })?.error];
  for (const candidate of candidates) {
    const value = candidate as { code?: unknown; message?: unknown; data?: unknown } | undefined;
    if (value && typeof value.code === 'number' && typeof value.message === 'string') return { code: value.code, message: value.message, data: value.data };
  }
  return null;
};

/** An endpoint as messages and logs name it: its host only, since RPC URLs often carry an API key in their path or query. */
const endpointName = (url: string): string => new URL(url).host;

const providerFor = (url: string, evmChainId: number, timeoutMs: number) => {
  const request = new FetchRequest(url);
  request.timeout = timeoutMs;
  // a 429 comes back at once: the shared failover backs off and moves on, not ethers' own throttle retries
  request.setThrottleParams({ maxAttempts: 1 });
  // no polling, no response cache (a cached block would hide a reorg), one request per call, the network fixed
  return new JsonRpcProvider(request, Network.from(evmChainId), { staticNetwork: true, cacheTimeout: -1, batchMaxCount: 1, polling: false });
};

/**
 * ethers JsonRpcProviders, one per configured endpoint, behind the failover every node client
 * shares (a timeout per attempt, bounded attempts with exponential backoff, a failing endpoint
 * moved to the back). A node's JSON-RPC error is final (NodeAnswerError); a transport failure, a
 * non-JSON-RPC HTTP error or an endpoint serving another chain id (a misconfiguration that would
 * otherwise watch the wrong chain) moves to the next endpoint.
 */
export const createEvmRpc = ({ urls, evmChainId, timeoutMs, logger, ...failover }: EvmRpcOptions): EvmRpc => {
  const endpoints = urls.map((url) => ({ url, name: endpointName(url), provider: providerFor(url, evmChainId, timeoutMs), checked: false }));
  const run = createFailover(endpoints, (endpoint) => endpoint.name, {
    ...failover,
    timeoutMs,
    onRetry: (failure) => logger?.warn('node request failed, retrying', { endpoint: failure.endpoint, attempt: failure.attempt, error: failure.error.message, delayMs: failure.delayMs }),
  });

  const call = async <T>(endpoint: (typeof endpoints)[number], method: string, params: unknown[]): Promise<T> => {
    try {
      if (!endpoint.checked) {
        const served = Number(await endpoint.provider.send('eth_chainId', []));
        if (served !== evmChainId) throw new RpcUnavailableError(endpoint.name, `serves chain id ${served}, not ${evmChainId}`);
        endpoint.checked = true;
      }
      return (await endpoint.provider.send(method, params)) as T;
    } catch (error) {
      if (error instanceof RpcUnavailableError) throw error;
      const answer = rpcErrorOf(error);
      if (answer) throw new NodeAnswerError(method, answer.code, answer.message, answer.data);
      // ethers' shortMessage: its full message may repeat the request, URL included
      const reason = (error as { shortMessage?: string }).shortMessage ?? String((error as Error).message).split('\n')[0];
      throw new RpcUnavailableError(endpoint.name, `${method}: ${reason}`);
    }
  };

  return {
    // ethers' send cannot be aborted: a timed-out call is left to its FetchRequest timeout (the same length)
    send: <T>(method: string, params: unknown[]) => run((endpoint) => call<T>(endpoint, method, params)),
    destroy: () => endpoints.forEach((endpoint) => endpoint.provider.destroy()),
  };
};
