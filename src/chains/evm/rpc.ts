import { FetchRequest, JsonRpcProvider, Network } from 'ethers';

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
  /** one JSON-RPC call: endpoints in order, each with the timeout, `attempts` rounds in all; a node's error answer is thrown at once */
  send<T>(method: string, params: unknown[]): Promise<T>;
  destroy(): void;
}

export interface EvmRpcOptions {
  urls: readonly string[];
  evmChainId: number;
  timeoutMs: number;
  /** rounds over all endpoints before a transport failure is thrown; default 2 */
  attempts?: number;
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
  // no polling, no response cache (a cached block would hide a reorg), one request per call, the network fixed
  return new JsonRpcProvider(request, Network.from(evmChainId), { staticNetwork: true, cacheTimeout: -1, batchMaxCount: 1, polling: false });
};

/**
 * ethers JsonRpcProviders over the configured endpoints with failover: a timeout or transport error
 * on one moves to the next; an endpoint serving another chain id is refused (a misconfiguration
 * that would otherwise watch the wrong chain).
 */
export const createEvmRpc = ({ urls, evmChainId, timeoutMs, attempts = 2 }: EvmRpcOptions): EvmRpc => {
  const endpoints = urls.map((url) => ({ url, provider: providerFor(url, evmChainId, timeoutMs), checked: false }));
  let preferred = 0;

  const call = async <T>(endpoint: (typeof endpoints)[number], method: string, params: unknown[]): Promise<T> => {
    try {
      if (!endpoint.checked) {
        const served = Number(await endpoint.provider.send('eth_chainId', []));
        if (served !== evmChainId) throw new Error(`${endpointName(endpoint.url)} serves chain id ${served}, not ${evmChainId}`);
        endpoint.checked = true;
      }
      return (await endpoint.provider.send(method, params)) as T;
    } catch (error) {
      const answer = rpcErrorOf(error);
      if (answer) throw new NodeAnswerError(method, answer.code, answer.message, answer.data);
      throw error;
    }
  };

  return {
    send: async <T>(method: string, params: unknown[]): Promise<T> => {
      const failures: string[] = [];
      for (let round = 0; round < attempts; round++) {
        for (let offset = 0; offset < endpoints.length; offset++) {
          const index = (preferred + offset) % endpoints.length;
          try {
            const result = await call<T>(endpoints[index]!, method, params);
            preferred = index; // stay on an endpoint that answers
            return result;
          } catch (error) {
            if (error instanceof NodeAnswerError) throw error;
            // ethers' shortMessage: its full message may repeat the request, URL included
            const reason = (error as { shortMessage?: string }).shortMessage ?? (error as Error).message.split('\n')[0];
            failures.push(`${endpointName(endpoints[index]!.url)}: ${reason}`);
          }
        }
      }
      throw new Error(`${method}: no RPC endpoint answered (${failures.join('; ')})`);
    },
    destroy: () => endpoints.forEach((endpoint) => endpoint.provider.destroy()),
  };
};
