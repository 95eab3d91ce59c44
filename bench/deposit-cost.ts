/**
 * What a deposit costs end to end, and where its time goes: the bench's deposits phase
 * (BENCH_DEPOSITS transfers, 5,000 by default, to many users' addresses over 20 tokens, injected
 * through the devnet's batch form) on a service whose embedded PostgreSQL the bench started with
 * `pg_stat_statements` loaded. It prints the phase's figures (injection/s, end to end/s), when each
 * stage was reached (detected, confirmed, listed, webhooks delivered, sweeps settled), and per
 * deposit, from the first injection until every deposit was listed and credited (the phase's
 * end): statements, transactions, service CPU and PostgreSQL CPU, with the statements that ran
 * most; the same per address for the addresses made before the clock starts; and what the idle
 * service costs a second (block production, polls), which the per-deposit figures include for
 * the phase's duration; and the workers process's ledger batches meanwhile (how many decisions
 * each carried, each stage's time per decision, the group commits), its CPU per deposit and its
 * garbage collections per 1,000 deposits.
 *
 *   npm run bench:deposit-cost
 *   BENCH_DEPOSITS=2000 npm run bench:deposit-cost
 *   BENCH_EXPLAIN=plans.log npm run bench:deposit-cost   # and the plans of statements over BENCH_EXPLAIN_MS (5), inside functions too
 */
import { sleep } from './lib/api.js';
import { runBenchmark } from './lib/lifecycle.js';
import { bootstrapWithOwnReceiver, fundOrganization, listTokens } from './lib/organization.js';
import { afterwardsLine, creditDelayLine, runDepositPhase } from './lib/phases/deposits.js';
import { machineLine } from './lib/report.js';
import { describeCollections, describeLedgerBatches, scrapeMetrics } from './lib/request-stages.js';
import { serverCpuMs, serviceCpuMs } from './lib/process-cpu.js';
import { benchBlockTimeMs, describePeakRss } from './lib/service.js';
import { forgottenStatements, startMeasuredService, statementsSinceReset, statementTable, transactionCount } from './lib/server-cost.js';
import { positive } from './lib/settings.js';
import { formatTable, num } from './lib/table.js';

const progress = (message: string) => console.error(`· ${new Date().toISOString().slice(11, 19)} ${message}`);
const IDLE_MS = 5000;
/** how long the stages are followed after the phase's end (webhooks, sweeps) */
const AFTER_MS = 120_000;

await runBenchmark(async (lifecycle) => {
  const count = Math.round(positive('BENCH_DEPOSITS', 5000));
  progress(machineLine());
  const { service, client, connect, postmaster } = await startMeasuredService(lifecycle, progress);
  const samplerClient = await connect();

  const org = await bootstrapWithOwnReceiver(lifecycle, service);
  const tokens = (await listTokens(org.api)).slice(0, 20);
  progress(`funding the organization on ${tokens.length} tokens`);
  await fundOrganization(lifecycle, org.api, tokens, progress);

  interface Reading {
    atMs: number;
    serviceMs: number;
    serverMs: number;
    transactions: bigint;
  }
  // the service's processes together (one, or the api and the workers)
  const serviceMs = async () => [...(await serviceCpuMs(service)).values()].reduce((total, ms) => total + ms, 0);
  const read = async (): Promise<Reading> => ({ atMs: performance.now(), serviceMs: await serviceMs(), serverMs: await serverCpuMs(postmaster), transactions: await transactionCount(client) });
  const statementsSince = async () => {
    const statements = await statementsSinceReset(client);
    await client.query('select pg_stat_statements_reset()');
    return statements;
  };

  let idle: { service: number; server: number; seconds: number; statements: Awaited<ReturnType<typeof statementsSince>>; blocks: { chains: number; mined: number } } | undefined;
  // every devnet chain's head together: the blocks mined meanwhile, on how many chains
  const blocksMined = async () => {
    const { rows } = await client.query<{ chains: number; heads: string }>('select count(*)::int as chains, coalesce(sum(head_number), 0)::text as heads from devnet_chains');
    return { chains: rows[0]!.chains, heads: Number(rows[0]!.heads), minus: (earlier: { heads: number }) => ({ chains: rows[0]!.chains, mined: Number(rows[0]!.heads) - earlier.heads }) };
  };
  let addresses: { reading: Reading; statements: Awaited<ReturnType<typeof statementsSince>> } | undefined;
  let injection: Reading | undefined;
  let end: Reading | undefined;
  let forgotten = 0;
  let statements: Awaited<ReturnType<typeof statementsSince>> = [];
  let workersMetrics: { before: Map<string, number>; after: Map<string, number> } | undefined;
  const figures = await runDepositPhase({
    lifecycle,
    api: org.api,
    tokens,
    count,
    progress,
    db: { read: async (text, values) => (await samplerClient.query(text, values)).rows, orgId: org.orgId, followMs: AFTER_MS },
    hooks: {
      beforeAddresses: async () => {
        await client.query('select pg_stat_statements_reset()');
        const before = await read();
        const blocksBefore = await blocksMined();
        await sleep(IDLE_MS, lifecycle.signal);
        const after = await read();
        const seconds = (after.atMs - before.atMs) / 1000;
        const blocks = (await blocksMined()).minus(blocksBefore);
        idle = { service: (after.serviceMs - before.serviceMs) / seconds, server: (after.serverMs - before.serverMs) / seconds, seconds, statements: await statementsSince(), blocks };
        addresses = { reading: await read(), statements: [] };
      },
      beforeInjection: async () => {
        const before = addresses!.reading;
        addresses!.statements = await statementsSince();
        workersMetrics = { before: await scrapeMetrics(service.workersUrl), after: new Map() };
        injection = await read();
        addresses!.reading = { atMs: injection.atMs - before.atMs, serviceMs: injection.serviceMs - before.serviceMs, serverMs: injection.serverMs - before.serverMs, transactions: injection.transactions - before.transactions };
      },
      afterCredited: async () => {
        end = await read();
        workersMetrics!.after = await scrapeMetrics(service.workersUrl);
        forgotten = await forgottenStatements(client);
        statements = await statementsSince();
      },
    },
  });
  const { stages: times, chains, credit } = figures.service!;

  const perUnit = (units: number) => (value: number) => value / units;
  const blockTimeMs = benchBlockTimeMs();
  const calls = (rows: readonly { call_count: string }[]) => rows.reduce((sum, row) => sum + Number(row.call_count), 0);
  const ms = (value: number | null) => (value === null ? 'not reached' : `${(value / 1000).toFixed(1)} s`);
  const perDeposit = perUnit(count);
  const perAddress = perUnit(figures.addresses);
  const a = addresses!.reading;

  console.log(`\ndeposits end to end, ${num(count)} transfers over ${tokens.length} tokens to ${figures.users} users — ${machineLine().replace(/^machine: /, '')}\n`);
  console.log(`injection ${num(figures.injectionPerSecond)}/s (${ms(figures.injectionMs)}), end to end ${num(figures.endToEndPerSecond)}/s (${ms(figures.endToEndMs)}: listed and credited)`);
  console.log(`stages after the first injection: detected ${ms(times.detectedMs)}, confirmed ${ms(times.confirmedMs)}, listed ${ms(times.listedMs)}`);
  console.log(afterwardsLine(figures.service!));
  console.log(creditDelayLine(credit));
  console.log(
    `idle service: ${num(idle!.service)} ms CPU a second, its PostgreSQL ${num(idle!.server)} ms a second, ` +
      `${num(calls(idle!.statements) / idle!.seconds)} statements a second (block production, watchers, polls); ` +
      `the devnet mined ${(idle!.blocks.mined / idle!.blocks.chains / idle!.seconds).toFixed(2)} blocks a second per chain (${idle!.blocks.chains} chains; a block every ${blockTimeMs} ms is ${(1000 / blockTimeMs).toFixed(2)})`,
  );
  console.log(
    `per deposit (first injection until all were listed and credited): ${perDeposit(calls(statements)).toFixed(2)} statements, ` +
      `${perDeposit(Number(end!.transactions - injection!.transactions)).toFixed(2)} transactions, service CPU ${perDeposit(end!.serviceMs - injection!.serviceMs).toFixed(2)} ms, ` +
      `PostgreSQL CPU ${perDeposit(end!.serverMs - injection!.serverMs).toFixed(2)} ms`,
  );
  console.log(
    `per address (${num(figures.addresses)} made before the clock, ${ms(a.atMs)}): ${perAddress(calls(addresses!.statements)).toFixed(2)} statements, ` +
      `${perAddress(Number(a.transactions)).toFixed(2)} transactions, service CPU ${perAddress(a.serviceMs).toFixed(2)} ms, PostgreSQL CPU ${perAddress(a.serverMs).toFixed(2)} ms`,
  );
  const workersName = service.workersUrl === service.url ? 'the service' : 'the workers process';
  console.log(describeLedgerBatches(`${workersName} (first injection until all were listed and credited)`, workersMetrics!.before, workersMetrics!.after));
  console.log(describeCollections(workersName, workersMetrics!.before, workersMetrics!.after, count, 'deposit'));
  console.log(await describePeakRss(service));
  const seconds = (value: number | null) => (value === null ? '–' : (value / 1000).toFixed(1));
  console.log(
    [
      '',
      `by chain (s after the first injection; depth wait: (the chain's confirmations − 1) × the ${blockTimeMs} ms block time, the least a credit waits after its block is mined):`,
      formatTable(
        [
          { header: 'chain', align: 'left' },
          { header: 'deposits', align: 'right' },
          { header: 'confirmations', align: 'right' },
          { header: 'depth wait', align: 'right' },
          { header: 'last block mined', align: 'right' },
          { header: 'last detected', align: 'right' },
          { header: 'last confirmed', align: 'right' },
        ],
        chains.map((chain) => [
          chain.chainId,
          num(chain.deposits),
          String(chain.confirmations),
          seconds((chain.confirmations - 1) * blockTimeMs),
          seconds(chain.lastBlockMs),
          seconds(chain.detectedMs),
          seconds(chain.confirmedMs),
        ]),
      ),
    ].join('\n'),
  );
  if (forgotten > 0) console.log(`pg_stat_statements forgot ${num(forgotten)} statements to make room: the counts below miss theirs`);
  console.log(['', 'the deposits:', ...statementTable(statements, perDeposit, 'deposit', 30)].join('\n'));
  console.log(['', 'the addresses:', ...statementTable(addresses!.statements, perAddress, 'address', 10)].join('\n'));
  console.log(['', 'the idle service, a second:', ...statementTable(idle!.statements, perUnit(idle!.seconds), 'second', 10)].join('\n'));
});
