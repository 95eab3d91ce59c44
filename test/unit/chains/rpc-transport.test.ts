import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { RpcExhaustedError, RpcTimeoutError, type TimerStart } from '../../../src/chains/rpc/failover.js';
import { createHttpClient, JsonRpcError, RpcHttpError, type FetchLike } from '../../../src/chains/rpc/http.js';
import { logChainLag } from '../../../src/chains/rpc/lag.js';

/** What each endpoint does when asked, in order (the last behaviour repeats). */
type Behaviour = { status: number; body: string } | 'hang' | 'refuse';

/**
 * A scripted network: no sockets and no clock. A hanging endpoint fires the pending timeout timer
 * itself (as the clock would while it hangs), and the backoff pauses are only recorded.
 */
const network = (script: Record<string, Behaviour[]>) => {
  const asked: string[] = [];
  const slept: number[] = [];
  const timers = new Map<number, () => void>();
  let nextTimer = 0;
  const startTimer: TimerStart = (_ms, onTimeout) => {
    const id = nextTimer++;
    timers.set(id, onTimeout);
    return () => timers.delete(id);
  };
  const fetch: FetchLike = (url, init) => {
    const host = new URL(url).host;
    asked.push(`${host} ${init.method} ${new URL(url).pathname}`);
    const behaviours = script[host] ?? [];
    const behaviour = behaviours.length > 1 ? behaviours.shift()! : behaviours[0];
    if (behaviour === undefined) throw new Error(`nothing scripted for ${host}`);
    if (behaviour === 'refuse') return Promise.reject(new TypeError('fetch failed'));
    if (behaviour === 'hang') {
      return new Promise((_, reject) => {
        init.signal.addEventListener('abort', () => reject(init.signal.reason as Error));
        for (const fire of [...timers.values()]) fire();
      });
    }
    return Promise.resolve({ status: behaviour.status, text: async () => behaviour.body });
  };
  const client = (endpoints: string[], maxAttempts?: number) =>
    createHttpClient({ endpoints, fetch, startTimer, sleep: async (ms) => void slept.push(ms), firstBackoffMs: 250, maxBackoffMs: 2_000, timeoutMs: 5_000, ...(maxAttempts ? { maxAttempts } : {}) });
  return { asked, slept, client, pendingTimers: () => timers.size };
};

const ok = (body: unknown) => ({ status: 200, body: typeof body === 'string' ? body : JSON.stringify(body) });

describe('node transport: timeouts, retries, failover', () => {
  it('a 503 moves to the next endpoint after a backoff, and later requests start there', async () => {
    const net = network({ 'a.test': [{ status: 503, body: 'busy' }], 'b.test': [ok('840000')] });
    const client = net.client(['http://a.test', 'http://b.test']);

    expect(await client.text('/blocks/tip/height')).toBe('840000');
    expect(await client.text('/blocks/tip/height')).toBe('840000');

    expect(net.asked).toEqual(['a.test GET /blocks/tip/height', 'b.test GET /blocks/tip/height', 'b.test GET /blocks/tip/height']);
    expect(net.slept).toEqual([250]);
    expect(net.pendingTimers()).toBe(0);
  });

  it('an endpoint that does not answer in time is aborted and the next one asked', async () => {
    const net = network({ 'slow.test': ['hang'], 'fast.test': [ok({ height: 7 })] });
    const client = net.client(['http://slow.test', 'http://fast.test']);

    expect(await client.json('/block/abc')).toEqual({ height: 7 });
    expect(net.asked).toEqual(['slow.test GET /block/abc', 'fast.test GET /block/abc']);
    expect(net.slept).toEqual([250]);
  });

  it('a refused connection and a 429 are retried with doubling backoff', async () => {
    const net = network({ 'a.test': ['refuse', { status: 429, body: 'slow down' }, ok('done')] });
    const client = net.client(['http://a.test']);

    expect(await client.text('/x')).toBe('done');
    expect(net.asked).toHaveLength(3);
    expect(net.slept).toEqual([250, 500]);
  });

  it('gives up after the bounded number of attempts, with every cause', async () => {
    const net = network({ 'a.test': ['hang'], 'b.test': [{ status: 502, body: 'bad gateway' }] });
    const client = net.client(['http://a.test', 'http://b.test'], 4);

    const failure = await client.text('/x').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RpcExhaustedError);
    const causes = (failure as RpcExhaustedError).causes;
    expect(causes.map((cause) => cause.name)).toEqual(['RpcTimeoutError', 'RpcUnavailableError', 'RpcTimeoutError', 'RpcUnavailableError']);
    expect(causes[0]).toBeInstanceOf(RpcTimeoutError);
    expect(net.slept).toEqual([250, 500, 1000]);
  });

  it('a JSON-RPC error is the node\'s answer: not retried, even when it comes with HTTP 500 (Bitcoin Core)', async () => {
    const body = JSON.stringify({ result: null, error: { code: -5, message: 'No such mempool or blockchain transaction' }, id: 'getrawtransaction' });
    const net = network({ 'core.test': [{ status: 500, body }], 'spare.test': [ok({ result: 'never asked' })] });
    const client = net.client(['http://core.test', 'http://spare.test']);

    const failure = await client.call('getrawtransaction', ['00'.repeat(32), true]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(JsonRpcError);
    expect((failure as JsonRpcError).code).toBe(-5);
    expect(net.asked).toEqual(['core.test POST /']);
    expect(net.slept).toEqual([]);
  });

  it('a JSON-RPC result is returned; a 4xx is final; a 404 reads as nothing', async () => {
    const net = network({ 'a.test': [ok({ jsonrpc: '2.0', id: 'getblockcount', result: 840000, error: null }), { status: 400, body: 'bad txid' }, { status: 404, body: 'Transaction not found' }] });
    const client = net.client(['http://a.test']);

    expect(await client.call('getblockcount')).toBe(840000);
    await expect(client.text('/tx/zz')).rejects.toBeInstanceOf(RpcHttpError);
    expect(await client.text('/tx/00')).toBeNull();
    expect(net.slept).toEqual([]);
  });
});

describe('chain lag metric', () => {
  const capture = () => {
    const lines: Record<string, unknown>[] = [];
    return { lines, logger: createLogger('debug', {}, (line) => lines.push(JSON.parse(line) as Record<string, unknown>)) };
  };

  it('logs how many blocks the watcher is behind the head', () => {
    const { lines, logger } = capture();
    expect(logChainLag(logger, 'bip122:000000000019d6689c085ae165831e93', 839_990, 840_000)).toBe(10);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'info', msg: 'chain lag', chainId: 'bip122:000000000019d6689c085ae165831e93', scannedHeight: 839_990, headHeight: 840_000, lagBlocks: 10 });
  });

  it('warns past the threshold, and never reports a negative lag', () => {
    const { lines, logger } = capture();
    expect(logChainLag(logger, 'xrpl:mainnet', 1_000, 1_500, 100)).toBe(500);
    expect(logChainLag(logger, 'xrpl:mainnet', 1_501, 1_500, 100)).toBe(0);
    expect(lines.map((line) => [line.level, line.lagBlocks])).toEqual([['warn', 500], ['info', 0]]);
  });
});
