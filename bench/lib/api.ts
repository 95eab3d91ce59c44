/** A small client for the service's HTTP API with one organization's API key (setup and polling, not load). */
export interface ApiClient {
  url: string;
  apiKey: string;
  /** the answer's status and JSON body, whatever the status */
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** the JSON body; throws naming the request unless the status is `expected` */
  expect<T = unknown>(expected: number, method: string, path: string, body?: unknown): Promise<T>;
}

export const createApiClient = (url: string, apiKey: string): ApiClient => {
  const call = async <T>(method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
  };
  return {
    url,
    apiKey,
    call,
    expect: async <T>(expected: number, method: string, path: string, body?: unknown) => {
      const answer = await call<T>(method, path, body);
      if (answer.status !== expected) throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      return answer.body;
    },
  };
};

/** Runs `task` over `items` with at most `concurrency` at a time; answers the results in order. */
export const mapConcurrently = async <T, R>(items: readonly T[], concurrency: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> => {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
};

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    signal?.throwIfAborted();
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Polls `check` every `intervalMs` until it answers true; throws after `timeoutMs` naming `what`. */
export const pollUntil = async (what: string, check: () => Promise<boolean>, options: { timeoutMs: number; intervalMs?: number; signal?: AbortSignal }) => {
  const deadline = Date.now() + options.timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${what}`);
    await sleep(options.intervalMs ?? 200, options.signal);
  }
};
