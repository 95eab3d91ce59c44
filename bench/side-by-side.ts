/**
 * Event store append throughput side by side: ledgergate against pgbench running an equivalent
 * insert transaction (the hardware limit) and against Emmett's PostgreSQL event store, on one
 * throwaway embedded PostgreSQL. Progress goes to stderr, the table to stdout.
 *
 *   npm run bench:compare                    # 10 s per contender, 8 clients
 *   BENCH_SECONDS=5 BENCH_CLIENTS=16 npm run bench:compare
 */
import { runBenchmark } from './lib/lifecycle.js';
import { compareAppendThroughput, sideBySideTable } from './lib/side-by-side.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const clients = Number(process.env.BENCH_CLIENTS ?? 8);
const progress = (message: string) => console.error(`· ${message}`);

await runBenchmark(async (lifecycle) => {
  const figures = await compareAppendThroughput({ seconds, clients, lifecycle, progress });
  console.log(sideBySideTable(figures));
});
