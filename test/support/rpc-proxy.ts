import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transaction } from 'ethers';

/** A decoded eth_sendRawTransaction, for a script to pick the transactions it meddles with. */
export interface SentTransaction {
  hash: string;
  from: string;
  nonce: number;
  raw: string;
}

/**
 * What the proxy does with one eth_sendRawTransaction:
 * - `forward`: as a node would;
 * - `forward-then-answer`: the node takes the bytes, the caller gets `error` instead of the answer
 *   (an endpoint whose answer was lost, or a second endpoint that already saw the block: "nonce too low");
 * - `forward-then-hang`: the node takes the bytes, the answer never comes (a time-out);
 * - `refuse`: the bytes never reach the node, the caller gets `error`.
 */
export type SendFault =
  | { kind: 'forward' }
  | { kind: 'forward-then-answer'; error: string }
  | { kind: 'forward-then-hang' }
  | { kind: 'refuse'; error: string };

/**
 * The faults of one or several endpoints: shared, so a fault meets the next matching broadcast
 * whichever endpoint the service's failover picks (it moves a failing one to the back).
 */
export interface ProxyScript {
  /** the fault for the next matching broadcast (once), e.g. the next one from an address */
  faultNext(matches: (sent: SentTransaction) => boolean, fault: SendFault): void;
  /** hides these transactions from lookups (receipt, by hash) for the next `lookups` asks: an endpoint that has not seen them yet */
  lag(hashes: (hash: string) => boolean, lookups: number): void;
  /** every broadcast that reached the node, in order */
  forwarded: SentTransaction[];
}

export interface RpcProxy {
  url: string;
  stop(): Promise<void>;
}

export const createProxyScript = (): ProxyScript & {
  takeFault(sent: SentTransaction): SendFault;
  lagging(hash: string): boolean;
} => {
  const faults: { matches: (sent: SentTransaction) => boolean; fault: SendFault }[] = [];
  const lags: { hashes: (hash: string) => boolean; remaining: number }[] = [];
  return {
    faultNext: (matches, fault) => faults.push({ matches, fault }),
    lag: (hashes, lookups) => lags.push({ hashes, remaining: lookups }),
    forwarded: [],
    takeFault: (sent) => {
      const index = faults.findIndex((candidate) => candidate.matches(sent));
      return index >= 0 ? faults.splice(index, 1)[0]!.fault : { kind: 'forward' };
    },
    lagging: (hash) => {
      const lag = lags.find((candidate) => candidate.remaining > 0 && candidate.hashes(hash));
      if (lag) lag.remaining--;
      return lag !== undefined;
    },
  };
};

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });

const LOOKUPS = new Set(['eth_getTransactionReceipt', 'eth_getTransactionByHash']);

/** A scripted JSON-RPC endpoint in front of a real node (anvil): it forwards everything, and injects the faults a test names. */
export const startRpcProxy = async (upstream: string, script: ReturnType<typeof createProxyScript>): Promise<RpcProxy> => {
  const hanging = new Set<() => void>();

  const forward = async (body: string) => {
    const response = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return response.text();
  };

  const server: Server = createServer(async (request, response) => {
    const body = await readBody(request);
    const call = JSON.parse(body) as { id: number; method: string; params: unknown[] };
    const answer = (text: string) => response.writeHead(200, { 'content-type': 'application/json' }).end(text);
    const error = (message: string) => answer(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32000, message } }));

    if (LOOKUPS.has(call.method)) {
      if (script.lagging(String(call.params[0]).toLowerCase())) return answer(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: null }));
    }
    if (call.method === 'eth_sendRawTransaction') {
      const raw = String(call.params[0]);
      const decoded = Transaction.from(raw);
      const sent = { hash: decoded.hash!.toLowerCase(), from: decoded.from!.toLowerCase(), nonce: decoded.nonce, raw };
      const fault = script.takeFault(sent);
      if (fault.kind === 'refuse') return error(fault.error);
      const upstreamAnswer = await forward(body);
      script.forwarded.push(sent);
      if (fault.kind === 'forward-then-answer') return error(fault.error);
      if (fault.kind === 'forward-then-hang') {
        await new Promise<void>((resolve) => hanging.add(resolve));
        return response.destroy();
      }
      return answer(upstreamAnswer);
    }
    return answer(await forward(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      for (const release of hanging) release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
