/**
 * The server's cost of one `eventstore.append_batch_positions` call (and of the previous
 * `eventstore.append_batch`, still installed), alone on one backend: its CPU per call (from /proc,
 * so other processes' load does not count) and, with pg_stat_statements tracking the statements
 * inside the function, where that time goes. Shapes: 1 stream × 1 event, 1 × 10, 8 appends of 1
 * event (a typical group commit) and 64 (group commit under load), and a ledger batch of 25 new
 * withdrawals as POST /withdrawals appends it (25 reference claims and 25 withdrawals opened, 25
 * holds on one ledger), without and with the check of the organization's stream its decisions were
 * made on (a stream given no events), and the deposits' group commits: 20 ledger batches of 25 or
 * 60 new deposits each (a deposit stream of 2 events, 2 events on its ledger). On an empty store,
 * then on one filled with `BENCH_FILL_EVENTS` synthetic events (default 1,000,000; 0 skips it).
 *
 *   npm run bench:append-cost
 *   BENCH_CALLS=500 BENCH_FILL_EVENTS=0 BENCH_TRACK=all npm run bench:append-cost   # and the statements inside
 *   BENCH_FORM=positions npm run bench:append-cost                                 # one function only
 *   BENCH_SHAPE=withdrawals BENCH_FILL_EVENTS=0 npm run bench:append-cost          # the shapes whose name holds it
 *   BENCH_SHAPE='1 event|deposits' BENCH_FILL_EVENTS=0 npm run bench:append-cost   # `|` between alternatives
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { migrateToLatest } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import type { StreamAppend } from '../src/eventstore/port.js';
import { APPEND_BATCH_SQL, appendBatchParameters, batchOutcomes, type AppendBatchRow, type BatchOutcome } from '../src/eventstore/postgres/append-batch-parameters.js';
import { eventStoreMigrations } from '../src/eventstore/postgres/migrations/index.js';
import { silentLogger } from '../src/log.js';
import { depositEvent } from './lib/deposit-event.js';
import { runBenchmark } from './lib/lifecycle.js';
import { cpuMs } from './lib/process-cpu.js';
import { shortened } from './lib/server-cost.js';
import { formatTable, num } from './lib/table.js';
import { startTempPostgres } from './lib/temp-postgres.js';

const calls = Number(process.env.BENCH_CALLS ?? 2000);
const fillEvents = Number(process.env.BENCH_FILL_EVENTS ?? 1_000_000);
const progress = (message: string) => console.error(`· ${message}`);

interface Shape {
  name: string;
  appends: number;
  eventsPerAppend: number;
  /** a ledger batch of this many new withdrawals (one item), instead of `appends` items of one stream */
  withdrawals?: number;
  /** the batch checks its organization's stream (only a function that checks runs it) */
  checked?: boolean;
  /** a group commit of this many ledger batches (one item each, on its own ledger) of `deposits` deposits each */
  ledgers?: number;
  deposits?: number;
  /** this shape makes BENCH_CALLS ÷ this many calls, its warm-up as many (a call of thousands of events takes a tenth of a second) */
  fewerCalls?: number;
}
/** the function the service calls, and the one before it (still installed), to compare them in one run */
interface Form {
  name: string;
  text: string;
  outcomes: (batch: StreamAppend[][], row: never) => BatchOutcome[];
  /** it checks a stream given no events (20261127T0900) */
  checks?: boolean;
}
const FORMS: Form[] = [
  {
    name: 'append_batch (20261126T1100)',
    text: 'select eventstore.append_batch($1::int[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[], $7::uuid[], $8::text[], $9::jsonb, $10::jsonb) as result',
    outcomes: (_batch, row: { result: BatchOutcome[] }) => row.result,
  },
  {
    name: 'append_batch_positions (20261126T1700)',
    text: 'select positions, revisions, refusals from eventstore.append_batch_positions($1::int[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[], $7::uuid[], $8::text[], $9::jsonb, $10::jsonb)',
    outcomes: (batch, row: AppendBatchRow) => batchOutcomes(batch, row),
  },
  { name: 'append_batch_checks', text: APPEND_BATCH_SQL, outcomes: (batch, row: AppendBatchRow) => batchOutcomes(batch, row), checks: true },
];

const SHAPES: Shape[] = [
  { name: '1 stream × 1 event', appends: 1, eventsPerAppend: 1 },
  { name: '1 stream × 10 events', appends: 1, eventsPerAppend: 10 },
  { name: '8 appends × 1 event', appends: 8, eventsPerAppend: 1 },
  { name: '64 appends × 1 event', appends: 64, eventsPerAppend: 1 }, // group commit under the service's 64-connection load
  { name: 'ledger batch of 25 withdrawals', appends: 1, eventsPerAppend: 75, withdrawals: 25 },
  { name: 'ledger batch of 25 withdrawals, checking its organization', appends: 1, eventsPerAppend: 75, withdrawals: 25, checked: true },
  // the deposits' group commits: each ledger batch records its deposits (a new stream of 2 events each) and moves its ledger twice a deposit
  { name: 'group commit of 20 ledger batches × 25 deposits', appends: 20, eventsPerAppend: 100, ledgers: 20, deposits: 25, fewerCalls: 20 },
  { name: 'group commit of 20 ledger batches × 60 deposits', appends: 20, eventsPerAppend: 240, ledgers: 20, deposits: 60, fewerCalls: 20 },
];

/** One group commit of ledger batches of new deposits per call, each on its own ledger (at its head). */
const depositBatches = (shape: Shape & { ledgers: number; deposits: number }) => {
  const ledgers = Array.from({ length: shape.ledgers }, () => `ledger-${randomUUID()}`);
  const heads = new Map<string, bigint | 'no_stream'>(ledgers.map((ledger) => [ledger, 'no_stream']));
  let turn = 0;
  return () => {
    const batch = ledgers.map((ledger): StreamAppend[] => {
      const appends: StreamAppend[] = Array.from({ length: shape.deposits }, () => {
        const stream = `deposit-${randomUUID()}`;
        return { stream, expectedRevision: 'no_stream', events: [depositEvent(stream, 0), depositEvent(stream, 1)] };
      });
      appends.push({ stream: ledger, expectedRevision: heads.get(ledger)!, events: Array.from({ length: 2 * shape.deposits }, () => depositEvent(ledger, turn++)) });
      return appends;
    });
    return {
      batch,
      settle: (outcomes: BatchOutcome[]) => {
        for (const [item, outcome] of outcomes.entries()) {
          if ('error' in outcome) throw new Error(`the bench's append was refused: ${JSON.stringify(outcome)}`);
          heads.set(ledgers[item]!, BigInt(outcome.streams.find(({ stream }) => stream === ledgers[item])!.revision));
        }
      },
    };
  };
};

/** One ledger batch of new withdrawals per call, on one ledger (at its head) and one organization stream (at 0). */
const withdrawalBatches = (shape: Shape & { withdrawals: number }, organization: string) => {
  const ledger = `ledger-${randomUUID()}`;
  let head: bigint | 'no_stream' = 'no_stream';
  let turn = 0;
  const opened = (category: string): StreamAppend => ({ stream: `${category}-${randomUUID()}`, expectedRevision: 'no_stream', events: [depositEvent(category, turn++)] });
  return () => {
    const appends = Array.from({ length: shape.withdrawals }, () => [opened('withdrawalReference'), opened('withdrawal')]).flat();
    appends.push({ stream: ledger, expectedRevision: head, events: Array.from({ length: shape.withdrawals }, () => depositEvent(ledger, turn++)) });
    if (shape.checked) appends.push({ stream: organization, expectedRevision: 0n, events: [] });
    return {
      batch: [appends],
      settle: ([outcome]: BatchOutcome[]) => {
        if (!outcome || 'error' in outcome) throw new Error(`the bench's append was refused: ${JSON.stringify(outcome)}`);
        head = BigInt(outcome.streams.find(({ stream }) => stream === ledger)!.revision);
      },
    };
  };
};

/** Each call appends to fresh streams half the time and to a known stream at its exact revision otherwise. */
const batches = (shape: Shape) => {
  const heads = new Map<string, bigint>();
  const known: string[] = [];
  let turn = 0;
  return (): { batch: StreamAppend[][]; settle: (result: BatchOutcome[]) => void } => {
    const batch = Array.from({ length: shape.appends }, (): StreamAppend[] => {
      turn++;
      const reuse = turn % 2 === 0 && known.length > 0;
      const stream = reuse ? known[turn % known.length]! : `account-${randomUUID()}`;
      const revision = heads.get(stream);
      return [{ stream, expectedRevision: revision ?? 'no_stream', events: Array.from({ length: shape.eventsPerAppend }, (_, i) => depositEvent(stream, turn + i)) }];
    });
    return {
      batch,
      settle: (result) => {
        for (const outcome of result) {
          if ('error' in outcome) throw new Error(`the bench's append was refused: ${JSON.stringify(outcome)}`);
          for (const { stream, revision } of outcome.streams) {
            if (!heads.has(stream) && known.length < 1000) known.push(stream);
            heads.set(stream, BigInt(revision));
          }
        }
      },
    };
  };
};

const fill = async (client: pg.Client, events: number) => {
  // 10 events a stream over a few categories, the shape of the service's history, written as the function would
  const categories = ['account', 'withdrawal', 'ledger', 'deposit', 'organization'];
  await client.query(
    `with filled as (
       insert into eventstore.streams (stream_id, category, revision)
       select c.name || '-filled-' || s, c.name, 9 from generate_series(1, $1::int / 10) s, unnest($2::text[]) with ordinality c(name, n) where s % 5 = c.n - 1
       returning stream_id, category
     )
     insert into eventstore.events (position, stream_id, revision, event_id, category, type, data, metadata)
     select nextval('eventstore.global_position_seq'), s.stream_id, r, gen_random_uuid(), s.category, 'Filled',
            jsonb_build_object('amount', '12.5', 'toAddress', md5(s.stream_id), 'n', r), jsonb_build_object('actor', 'bench', 'at', now()::text)
       from filled s, generate_series(0, 9) r
      order by s.stream_id, r`,
    [events, categories],
  );
  await client.query('vacuum analyze eventstore.events');
  await client.query('vacuum analyze eventstore.streams');
};

const measure = async (client: pg.Client, shape: Shape, form: Form, calls: number) => {
  const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const organization = `organization-${randomUUID()}`;
  if (shape.withdrawals) await client.query({ text: APPEND_BATCH_SQL, values: appendBatchParameters([[{ stream: organization, expectedRevision: 'no_stream', events: [depositEvent(organization, 0)] }]]) });
  const next = shape.withdrawals
    ? withdrawalBatches({ ...shape, withdrawals: shape.withdrawals }, organization)
    : shape.ledgers && shape.deposits
      ? depositBatches({ ...shape, ledgers: shape.ledgers, deposits: shape.deposits })
      : batches(shape);
  const call = async () => {
    const { batch, settle } = next();
    const { rows } = await client.query({ name: form.name, text: form.text, values: appendBatchParameters(batch) });
    settle(form.outcomes(batch, rows[0] as never));
  };
  for (let i = 0; i < Math.min(200, calls); i++) await call();
  await client.query('select pg_stat_statements_reset()');
  const cpuBefore = await cpuMs(pid);
  const started = performance.now();
  for (let i = 0; i < calls; i++) await call();
  const elapsed = performance.now() - started;
  const cpu = (await cpuMs(pid)) - cpuBefore;
  const { rows: statements } = await client.query<{ query: string; calls: string; total_exec_time: number; total_plan_time: number; plans: string; toplevel: boolean }>(
    `select query, calls::text, total_exec_time, total_plan_time, plans::text, toplevel from pg_stat_statements
      where query not like '%pg_stat_statements%' and query not like '%pg_backend_pid%' order by total_exec_time desc limit 12`,
  );
  return { cpuMsPerCall: cpu / calls, wallMsPerCall: elapsed / calls, statements };
};

await runBenchmark(async (lifecycle) => {
  const { server } = await startTempPostgres(lifecycle, silentLogger, {
    shared_preload_libraries: 'pg_stat_statements',
    'pg_stat_statements.track': process.env.BENCH_TRACK ?? 'top', // 'all' lists the statements inside the function (and costs a little per statement)
    'pg_stat_statements.track_planning': 'on',
  });
  const pool = createPool(server.connection('ledgergate'), { max: 1, purpose: 'bench-append-cost' });
  await migrateToLatest(pool, eventStoreMigrations);
  await pool.end();
  const client = new pg.Client(server.connection('ledgergate'));
  await client.connect();
  lifecycle.onTeardown('disconnect', () => client.end());
  await client.query('create extension if not exists pg_stat_statements');

  const rows: string[][] = [];
  for (const store of fillEvents > 0 ? ['empty', 'filled'] : ['empty']) {
    if (store === 'filled') {
      progress(`filling the store with ${num(fillEvents)} events`);
      await fill(client, fillEvents);
    }
    for (const shape of SHAPES.filter((s) => (process.env.BENCH_SHAPE ?? '').split('|').some((part) => s.name.includes(part)))) for (const form of FORMS.filter((f) => f.name.includes(process.env.BENCH_FORM ?? '') && (!shape.checked || f.checks))) {
      lifecycle.checkpoint();
      const shapeCalls = Math.max(1, Math.round(calls / (shape.fewerCalls ?? 1)));
      const figures = await measure(client, shape, form, shapeCalls);
      const events = (await client.query<{ n: string }>('select count(*)::text as n from eventstore.events')).rows[0]!.n;
      progress(`${store} store (${num(Number(events))} events), ${shape.name}, ${form.name}: server CPU ${num(figures.cpuMsPerCall, 3)} ms a call`);
      for (const statement of figures.statements) {
        progress(
          `   ${num((statement.total_exec_time / shapeCalls) * 1000, 0).padStart(5)} µs a call, ${num(Number(statement.calls) / shapeCalls, 2)} a call, planned ${num(Number(statement.plans) / shapeCalls, 2)} a call in ${num((statement.total_plan_time / shapeCalls) * 1000, 0)} µs${statement.toplevel ? '' : ' (inside)'}: ${shortened(statement.query)}`,
        );
      }
      rows.push([store, shape.fewerCalls ? `${shape.name} (${num(shapeCalls)} calls)` : shape.name, form.name, num(figures.cpuMsPerCall, 3), num(figures.cpuMsPerCall / (shape.appends * shape.eventsPerAppend), 3), num(figures.wallMsPerCall, 3)]);
    }
  }
  console.log(
    formatTable(
      [
        { header: 'store' },
        { header: 'append_batch call' },
        { header: 'function' },
        { header: 'server CPU ms a call', align: 'right' },
        { header: 'a event', align: 'right' },
        { header: 'wall ms a call', align: 'right' },
      ],
      rows,
    ),
  );
  console.log(`(${num(calls)} calls a row unless it says fewer, on one backend after as many warm-up calls, at most 200; default durability)`);
});
