/**
 * Fills a ledgergate DATA_DIR (or DATABASE_URL) with a realistic history of BENCH_HISTORY_EVENTS
 * events (1,000,000) across BENCH_HISTORY_ORGANIZATIONS organizations (1,000): what the service
 * itself writes for bootstraps, deposit accounts, deposits detected, confirmed, credited and swept,
 * withdrawals requested, approved, topped up with gas, signed, broadcast and completed (some failed
 * or cancelled), decided by the domain's deciders and sealed with the DATA_DIR's own keys
 * (bench/lib/history). Start the service on it afterwards: it catches its projections up and runs
 * with that history. Fill a store no service is writing to: a stream moved meanwhile makes the
 * fill fail rather than write a wrong history.
 *
 *   DATA_DIR=/tmp/history npm run bench:fill
 *   DATA_DIR=/tmp/history BENCH_HISTORY_EVENTS=100000 npm run bench:fill
 */
import { fillConfiguredStore } from './lib/history/data-dir.js';
import { runBenchmark } from './lib/lifecycle.js';
import { positive } from './lib/settings.js';
import { num } from './lib/table.js';

const progress = (message: string) => console.error(`· ${new Date().toISOString().slice(11, 19)} ${message}`);

await runBenchmark(async (lifecycle) => {
  const events = Math.round(positive('BENCH_HISTORY_EVENTS', 1_000_000));
  const organizations = Math.round(positive('BENCH_HISTORY_ORGANIZATIONS', 1_000));
  const figures = await fillConfiguredStore(process.env, { events, organizations, progress, signal: lifecycle.signal });
  const seconds = figures.ms / 1000;
  console.log(
    `history: ${num(figures.events)} events (${num(figures.steps)} appends of the service, written in ${num(figures.batches)} store appends) ` +
      `across ${num(figures.organizations)} organizations in ${num(seconds, 1)} s (${num(figures.events / seconds)} events/s)`,
  );
});
