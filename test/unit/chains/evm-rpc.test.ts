import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvmRpc, NodeAnswerError } from '../../../src/chains/evm/rpc.js';
import { RpcExhaustedError } from '../../../src/chains/rpc/failover.js';
import { createLogger } from '../../../src/log.js';

type Answer = { status: number; body?: unknown } | 'hang';

/**
 * Local JSON-RPC endpoints (real sockets, real ethers JsonRpcProviders) scripted per method: the
 * EVM client behind the shared failover. Each server records the methods it was asked.
 */
const endpoint = (answers: Record<string, (params: unknown[]) => Answer>) => {
  const asked: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { id, method, params } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number; method: string; params: unknown[] };
      asked.push(method);
      const answer = answers[method]?.(params) ?? { status: 200, body: { error: { code: -32601, message: `no ${method}` } } };
      if (answer === 'hang') return; // never answers; closed with the server
      response.writeHead(answer.status, { 'content-type': 'application/json' });
      response.end(typeof answer.body === 'string' ? answer.body : JSON.stringify({ jsonrpc: '2.0', id, ...(answer.body as object) }));
    });
  });
  return {
    asked,
    start: () => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)),
    url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3/secret-key`,
    stop: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
};

const chainId = (id: number) => () => ({ status: 200, body: { result: `0x${id.toString(16)}` } });
let height = 100;
const healthy = endpoint({ eth_chainId: chainId(1), eth_blockNumber: () => ({ status: 200, body: { result: `0x${(height++).toString(16)}` } }), eth_call: () => ({ status: 200, body: { error: { code: 3, message: 'execution reverted', data: '0x08c379a0' } } }) });
const overloaded = endpoint({ eth_chainId: () => ({ status: 503, body: 'upstream busy' }) });
const throttled = endpoint({ eth_chainId: () => ({ status: 429, body: 'slow down' }) });
const otherChain = endpoint({ eth_chainId: chainId(137) });
const silent = endpoint({ eth_chainId: () => 'hang' });

describe('EVM JSON-RPC over the shared failover (ethers providers on local endpoints)', () => {
  beforeAll(async () => {
    for (const server of [healthy, overloaded, throttled, otherChain, silent]) await server.start();
  });
  afterAll(async () => {
    for (const server of [healthy, overloaded, throttled, otherChain, silent]) await server.stop();
  });

  const rpcOver = (urls: string[], lines: Record<string, unknown>[] = [], timeoutMs = 2_000) =>
    createEvmRpc({ urls, evmChainId: 1, timeoutMs, sleep: async () => {}, logger: createLogger('debug', {}, (line) => lines.push(JSON.parse(line) as Record<string, unknown>)) });

  it('answers from the node every time: no response cache (a reorg must be seen at once)', async () => {
    const rpc = rpcOver([healthy.url()]);
    const first = Number(await rpc.send<string>('eth_blockNumber', []));
    expect(Number(await rpc.send<string>('eth_blockNumber', []))).toBe(first + 1);
    rpc.destroy();
  });

  it('a 503, a 429 and an endpoint serving another chain each move to the next endpoint, logged without the URL\'s key; later calls start at the one that answered', async () => {
    const lines: Record<string, unknown>[] = [];
    const before = healthy.asked.length;
    const rpc = rpcOver([overloaded.url(), throttled.url(), otherChain.url(), healthy.url()], lines);
    expect(Number(await rpc.send<string>('eth_blockNumber', []))).toBeGreaterThan(0);
    expect(lines.map((line) => [line.msg, line.endpoint])).toEqual([
      ['node request failed, retrying', overloaded.url().replace(/^http:\/\/|\/v3.*$/g, '')],
      ['node request failed, retrying', throttled.url().replace(/^http:\/\/|\/v3.*$/g, '')],
      ['node request failed, retrying', otherChain.url().replace(/^http:\/\/|\/v3.*$/g, '')],
    ]);
    expect(lines[2]?.error).toMatch(/serves chain id 137, not 1/);
    expect(JSON.stringify(lines)).not.toContain('secret-key');
    await rpc.send('eth_blockNumber', []);
    expect(healthy.asked.slice(before)).toEqual(['eth_chainId', 'eth_blockNumber', 'eth_blockNumber']);
    expect(throttled.asked).toEqual(['eth_chainId']); // ethers' own 429 retries are off: the failover decides
    rpc.destroy();
  });

  it('an endpoint that does not answer in time is left for the next', async () => {
    const rpc = rpcOver([silent.url(), healthy.url()], [], 300);
    expect(Number(await rpc.send<string>('eth_blockNumber', []))).toBeGreaterThan(0);
    rpc.destroy();
  });

  it('a JSON-RPC error is the node\'s answer: thrown at once, no other endpoint asked', async () => {
    const rpc = rpcOver([healthy.url(), otherChain.url()]);
    const asked = otherChain.asked.length;
    await expect(rpc.send('eth_call', [{ to: '0x0000000000000000000000000000000000000001', data: '0x' }, 'latest'])).rejects.toEqual(expect.objectContaining({ name: 'NodeAnswerError', rpcCode: 3, message: 'execution reverted', data: '0x08c379a0' }));
    await expect(rpc.send('eth_call', [{}, 'latest'])).rejects.toBeInstanceOf(NodeAnswerError);
    expect(otherChain.asked.length).toBe(asked);
    rpc.destroy();
  });

  it('when every attempt fails, RpcExhaustedError names each endpoint\'s reason', async () => {
    const rpc = rpcOver([overloaded.url(), otherChain.url()]);
    const error = await rpc.send('eth_blockNumber', []).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RpcExhaustedError);
    expect((error as RpcExhaustedError).causes).toHaveLength(4); // each endpoint twice
    expect((error as Error).message).toMatch(/serves chain id 137, not 1/);
    rpc.destroy();
  });
});
