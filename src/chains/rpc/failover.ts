import { backoffDelayMs } from '../../lib/pause.js';

/**
 * Resilience shared by every node client: a timeout per attempt, a bounded number of attempts
 * with exponential backoff between them, and failover across several endpoints (an attempt that
 * fails moves to the next endpoint, and later calls start there, so a dead endpoint is not asked
 * first again). Only transient failures are retried: a timeout, a network error, HTTP 5xx/429.
 * An answer the node gave on purpose (a JSON-RPC error, a 4xx) is final: asking another node the
 * same question would only repeat it.
 */

export class RpcTimeoutError extends Error {
  constructor(
    readonly endpoint: string,
    readonly timeoutMs: number,
  ) {
    super(`${endpoint} did not answer within ${timeoutMs} ms`);
    this.name = 'RpcTimeoutError';
  }
}

/** A transient failure of one endpoint (5xx, 429, connection refused…): the next endpoint is tried. */
export class RpcUnavailableError extends Error {
  constructor(
    readonly endpoint: string,
    message: string,
  ) {
    super(`${endpoint}: ${message}`);
    this.name = 'RpcUnavailableError';
  }
}

/** Every attempt failed; `causes` holds each attempt's error, in order. */
export class RpcExhaustedError extends Error {
  constructor(readonly causes: readonly Error[]) {
    super(`every RPC attempt failed (${causes.length}): ${causes.map((cause) => cause.message).join('; ')}`);
    this.name = 'RpcExhaustedError';
  }
}

/** Starts a timer that calls `onTimeout` after `ms`; returns its cancel function (injected in tests). */
export type TimerStart = (ms: number, onTimeout: () => void) => () => void;

export interface FailoverOptions {
  /** per attempt; the default 10 s */
  timeoutMs?: number;
  /** attempts in all, across endpoints; the default: each endpoint twice, at least 3 */
  maxAttempts?: number;
  /** backoff before the n-th retry: firstBackoffMs × 2ⁿ, capped at maxBackoffMs */
  firstBackoffMs?: number;
  maxBackoffMs?: number;
  /** the pause between attempts (tests inject one that returns at once) */
  sleep?: (ms: number) => Promise<void>;
  startTimer?: TimerStart;
  /** told of each failed attempt that will be retried (logging) */
  onRetry?: (failure: { endpoint: string; attempt: number; error: Error; delayMs: number }) => void;
}

export const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
export const realTimer: TimerStart = (ms, onTimeout) => {
  const timer = setTimeout(onTimeout, ms);
  return () => clearTimeout(timer);
};

/** Whether a failure is worth another endpoint's attempt. */
export const isTransient = (error: unknown): boolean =>
  error instanceof RpcTimeoutError ||
  error instanceof RpcUnavailableError ||
  // a client of one server that gave up: the next server may answer (a failover over failovers)
  error instanceof RpcExhaustedError ||
  (error instanceof TypeError && /fetch|network|socket/i.test(error.message));

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/**
 * Runs `attempt` against the endpoints: `call(request)` answers the first success, throws a final
 * error at once, and RpcExhaustedError when every attempt failed transiently. The attempt gets an
 * AbortSignal that fires on its timeout (a fetch stops; a client that cannot abort is raced).
 */
export const createFailover = <Endpoint>(endpoints: readonly Endpoint[], describe: (endpoint: Endpoint) => string, options: FailoverOptions = {}) => {
  if (endpoints.length === 0) throw new RangeError('a node client needs at least one endpoint');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxAttempts = options.maxAttempts ?? Math.max(3, endpoints.length * 2);
  const firstBackoffMs = options.firstBackoffMs ?? 250;
  const maxBackoffMs = options.maxBackoffMs ?? 5_000;
  const sleep = options.sleep ?? realSleep;
  const startTimer = options.startTimer ?? realTimer;
  let preferred = 0;

  const withTimeout = <Result>(endpoint: Endpoint, attempt: (endpoint: Endpoint, signal: AbortSignal) => Promise<Result>): Promise<Result> =>
    new Promise<Result>((resolve, reject) => {
      const controller = new AbortController();
      const timeout = new RpcTimeoutError(describe(endpoint), timeoutMs);
      const cancel = startTimer(timeoutMs, () => {
        controller.abort(timeout);
        reject(timeout);
      });
      attempt(endpoint, controller.signal).then(
        (result) => {
          cancel();
          resolve(result);
        },
        (error: unknown) => {
          cancel();
          reject(controller.signal.aborted ? timeout : error);
        },
      );
    });

  return async <Result>(attempt: (endpoint: Endpoint, signal: AbortSignal) => Promise<Result>): Promise<Result> => {
    const failures: Error[] = [];
    for (let attemptNumber = 0; attemptNumber < maxAttempts; attemptNumber++) {
      const index = preferred;
      const endpoint = endpoints[index]!;
      try {
        return await withTimeout(endpoint, attempt);
      } catch (error) {
        if (!isTransient(error)) throw error;
        failures.push(asError(error));
        // the failing endpoint goes to the back of the line for this and later calls
        if (preferred === index) preferred = (index + 1) % endpoints.length;
        if (attemptNumber + 1 < maxAttempts) {
          const delayMs = backoffDelayMs(attemptNumber, firstBackoffMs, maxBackoffMs);
          options.onRetry?.({ endpoint: describe(endpoint), attempt: attemptNumber + 1, error: asError(error), delayMs });
          await sleep(delayMs);
        }
      }
    }
    throw new RpcExhaustedError(failures);
  };
};
