import { ConnectionError, RippledError, type Client, type Request } from 'xrpl';
import { createFailover, RpcUnavailableError, type FailoverOptions } from '../rpc/failover.js';
import type { HttpClient } from '../rpc/http.js';
import type { Logger } from '../../log.js';

/**
 * rippled requests over several servers (createFailover's timeouts, retries and failover). A
 * request function has the shape of xrpl's `Client.request`: a command object in, `{ result }`
 * out, a RippledError (with rippled's `error` code in `data`) when the server answers an error.
 * Tests replay recorded responses through the same shape.
 */
export interface XrplCommand {
  command: string;
  [field: string]: unknown;
}
export type XrplRequest = (request: XrplCommand) => Promise<{ result: unknown }>;

/** rippled's error codes that say "this server, not now" (rippled's RPC error list): another server may answer */
const TRANSIENT_RIPPLED_ERRORS = new Set(['tooBusy', 'noNetwork', 'noCurrent', 'noClosed', 'amendmentBlocked', 'slowDown', 'internal']);

/** rippled's error code of a failed request, if it is one */
export const rippledErrorCode = (error: unknown): string | undefined => {
  if (!(error instanceof RippledError)) return undefined;
  const data = error.data as { error?: unknown } | undefined;
  return typeof data?.error === 'string' ? data.error : undefined;
};

/** The request function of an xrpl.js Client; it (re)connects a client that is not connected (a dropped WebSocket). */
export const clientRequest =
  (client: Client): XrplRequest =>
  async (request) => {
    if (!client.isConnected()) await client.connect();
    return (await client.request(request as unknown as Request)) as { result: unknown };
  };

export const createXrplRequester = (servers: readonly { name: string; request: XrplRequest }[], options: FailoverOptions & { logger?: Logger } = {}): XrplRequest => {
  const run = createFailover(servers, (server) => server.name, {
    ...options,
    onRetry:
      options.onRetry ??
      ((failure) => options.logger?.warn('rippled request failed, retrying', { endpoint: failure.endpoint, attempt: failure.attempt, error: failure.error.message, delayMs: failure.delayMs })),
  });
  return (request) =>
    run(
      (server, signal) =>
        new Promise((resolve, reject) => {
          // xrpl's request cannot be aborted: a timed-out one is left to finish on its own
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
          server.request(request).then(resolve, (error: unknown) => {
            const code = rippledErrorCode(error);
            if (error instanceof ConnectionError || (code !== undefined && TRANSIENT_RIPPLED_ERRORS.has(code))) {
              reject(new RpcUnavailableError(server.name, error instanceof Error ? error.message : String(error)));
            } else reject(error as Error);
          });
        }),
    );
};

/**
 * rippled's JSON-RPC over HTTP(S) (port 51234; what CHAINS_CONFIG's http(s) rpcUrls name): `{ method,
 * params: [fields] }` in, `{ result }` out, an error as `result.status: "error"` which becomes the
 * same RippledError xrpl.js's Client throws, so the gateway reads both transports alike.
 */
export const rippledJsonRpc =
  (http: HttpClient): XrplRequest =>
  async ({ command, ...fields }) => {
    const answer = await http.json<{ result?: Record<string, unknown> }>('', { method: command, params: [fields] });
    const result = answer?.result;
    if (!result) throw new RpcUnavailableError(command, 'rippled answered without a result');
    if (result.status === 'error') throw new RippledError(String(result.error_message ?? result.error), result);
    return { result };
  };
