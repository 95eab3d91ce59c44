/**
 * The cost curve of POST /withdrawals: throughput and latency at several connection counts, with
 * several history sizes in the store. For each size, a fresh DATA_DIR is filled with that many
 * realistic events (bench/lib/history; 0: none) and `ledgergate serve` started on it: it catches
 * up (ready), an organization is bootstrapped and funded on one token, and the bench waits until
 * every chain's deposit watcher and withdrawal processor has read the history once and saved its
 * checkpoint. The service is then restarted (the measured one starts from those checkpoints, as a
 * service does on every start after its first), waited for until ready and its workers through
 * their first pass, and the load runs for BENCH_SECONDS at each connection count, one after the
 * other (load from its own process, as in `npm run bench`). Prints a Markdown table, and what was
 * waited for. Nothing asserts timing.
 *
 *   npm run bench:curve
 *   BENCH_SECONDS=15 BENCH_CURVE_CONNECTIONS=1,8,64,256 BENCH_CURVE_EVENTS=0,100000,1000000 npm run bench:curve
 *
 * Variables: BENCH_SECONDS (15 per cell), BENCH_CURVE_CONNECTIONS (1,8,64,256), BENCH_CURVE_EVENTS
 * (0,100000,1000000), BENCH_HISTORY_ORGANIZATIONS (1,000), BENCH_BLOCK_TIME_MS (200).
 */
import fs from 'node:fs/promises';
import { fillConfiguredStore } from './lib/history/data-dir.js';
import { runBenchmark } from './lib/lifecycle.js';
import { runLoad, summarizeLoad } from './lib/load.js';
import { withdrawalTemplates } from './lib/phases/withdrawals.js';
import { machineLine } from './lib/report.js';
import { describeStart, firstStartOnFilledStore, untilStarted } from './lib/restarted-service.js';
import { benchDataDir, startBenchService } from './lib/service.js';
import { positive } from './lib/settings.js';
import { num } from './lib/table.js';
import { WORKER_STARTS_WAITED_FOR } from './lib/worker-starts.js';

const progress = (message: string) => console.error(`· ${new Date().toISOString().slice(11, 19)} ${message}`);

/** A comma-separated list of whole numbers ≥ `min` from the environment, or `fallback`. */
const list = (name: string, fallback: number[], min: number): number[] => {
  const text = process.env[name]?.trim();
  if (!text) return fallback;
  const values = text.split(',').map((part) => Number(part.trim()));
  if (values.some((value) => !Number.isInteger(value) || value < min)) throw new Error(`${name} is a comma-separated list of whole numbers ≥ ${min}, not ${text}`);
  return values;
};

await runBenchmark(async (lifecycle) => {
  const seconds = positive('BENCH_SECONDS', 15);
  const connectionCounts = list('BENCH_CURVE_CONNECTIONS', [1, 8, 64, 256], 1);
  const historySizes = list('BENCH_CURVE_EVENTS', [0, 100_000, 1_000_000], 0);
  const organizations = Math.round(positive('BENCH_HISTORY_ORGANIZATIONS', 1_000));
  progress(machineLine());
  const rows: string[] = [];
  for (const events of historySizes) {
    lifecycle.checkpoint();
    const dataDir = await benchDataDir(lifecycle);
    const stored = events > 0 ? (await fillConfiguredStore({ ...process.env, DATA_DIR: dataDir, NODE_ENV: 'development' }, { events, organizations, progress, signal: lifecycle.signal })).events : 0;
    const { org, token } = await firstStartOnFilledStore(lifecycle, progress, dataDir, `curve, ${num(stored)} events`);
    lifecycle.checkpoint();
    const service = await startBenchService(lifecycle, progress, dataDir);
    progress(`curve: ${num(stored)} events in the store; restart ${describeStart(await untilStarted(service, org.api.apiKey, lifecycle.signal))}`);
    for (const connections of connectionCounts) {
      lifecycle.checkpoint();
      const report = await runLoad(lifecycle, { url: service.url, apiKey: org.api.apiKey, seconds, connections, referencePrefix: `curve-${events}-${connections}-${Date.now().toString(36)}`, templates: withdrawalTemplates([token]) });
      const load = summarizeLoad(report);
      progress(`curve: ${num(stored)} events, ${connections} connections: ${num(load.createdPerSecond)}/s, p50 ${report.latencyMs.p50} ms, p99 ${report.latencyMs.p99} ms, ${load.errors} errors`);
      rows.push(`| ${num(stored)} | ${connections} | ${num(load.createdPerSecond)}/s | ${report.latencyMs.p50} ms | ${report.latencyMs.p99} ms | ${num(load.errors)} |`);
    }
    await service.stop();
    await fs.rm(dataDir, { recursive: true, force: true }); // a million events take a few GiB: not kept until the end
  }
  console.log(`\n\`POST /withdrawals\`, one token, ${seconds} s a cell, on a restarted service — ${machineLine().replace(/^machine: /, '')}`);
  console.log(`before the restart, the bench waited for ${WORKER_STARTS_WAITED_FOR}; after it, for /readyz and the same again\n`);
  console.log(['| events in the store | connections | created | p50 | p99 | errors |', '|---:|---:|---:|---:|---:|---:|', ...rows].join('\n'));
});
