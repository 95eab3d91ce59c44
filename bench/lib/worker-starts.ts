import { sleep, type ApiClient } from './api.js';

/** What the wait for the chain workers' first passes saw (GET /metrics of the service). */
export interface WorkerStarts {
  /** deposit watchers and withdrawal processors that ended their first pass (two per running chain) */
  workers: number;
  /** the slowest one: from its creation to the end of its first pass, checkpoint saved */
  slowestMs: number;
  /** events their first passes read, all together: the whole history each without a checkpoint, only what follows it with one */
  eventsRead: number;
  /** from the start of the wait until every worker had ended its first pass */
  waitedMs: number;
}

/** what the bench waits for before it restarts the service, in words for its output */
export const WORKER_STARTS_WAITED_FOR =
  'every running chain’s deposit watcher and withdrawal processor through its first pass, its checkpoint saved (GET /metrics: ledgergate_worker_first_pass_seconds)';

const WORKERS = ['deposit-watcher', 'withdrawal-processor'] as const;

/** `ledgergate_worker_first_pass_*{worker, chain}` samples of a Prometheus text exposition */
const firstPassSamples = (text: string, name: string) =>
  [...text.matchAll(new RegExp(`^ledgergate_worker_first_pass_${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))].map((match) => {
    const labels = Object.fromEntries([...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((label) => [label[1]!, label[2]!]));
    return { worker: labels.worker ?? '', chain: labels.chain ?? '', value: Number(match[2]) };
  });

/**
 * Polls `metricsUrl`'s /metrics (the process that runs the workers; the API's by default) until the deposit watcher and the withdrawal processor of every
 * chain the organization sees running (GET /chains) have ended their first pass: each has read the
 * history it had to (all of it, on a store without their checkpoints) and saved its checkpoint, so
 * a restart after this reads only what follows. Throws naming the workers still missing.
 */
export const untilWorkersStarted = async (api: ApiClient, timeoutMs: number, signal?: AbortSignal, metricsUrl = api.url): Promise<WorkerStarts> => {
  const startedAt = performance.now();
  const { chains } = await api.expect<{ chains: { id: string }[] }>(200, 'GET', '/chains?enabledOnly=true');
  const expected = chains.flatMap((chain) => WORKERS.map((worker) => `${worker} ${chain.id}`));
  for (;;) {
    const text = await (await fetch(`${metricsUrl}/metrics`)).text();
    const seconds = firstPassSamples(text, 'seconds');
    const started = new Set(seconds.map((sample) => `${sample.worker} ${sample.chain}`));
    const missing = expected.filter((worker) => !started.has(worker));
    if (missing.length === 0) {
      const eventsRead = firstPassSamples(text, 'events_read').reduce((sum, sample) => sum + sample.value, 0);
      const slowestMs = Math.max(0, ...seconds.map((sample) => sample.value * 1000));
      return { workers: expected.length, slowestMs, eventsRead, waitedMs: performance.now() - startedAt };
    }
    if (performance.now() - startedAt > timeoutMs) throw new Error(`workers without a first pass after ${timeoutMs} ms: ${missing.join(', ')}`);
    await sleep(100, signal);
  }
};
