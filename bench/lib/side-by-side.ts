/**
 * Side by side: the event store's append throughput against the hardware limit (pgbench running an
 * equivalent insert transaction) and against Emmett's PostgreSQL event store. All three run one
 * after another on the same throwaway PostgreSQL server (default durability), with the same number
 * of concurrent clients, the same duration and the same event: one deposit-like event with
 * metadata per append, each client appending to its own few streams with the exact expected
 * revision, so nothing conflicts.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import { createLogger } from '../../src/log.js';
import { countAppendCosts, describeAppendCosts } from './append-costs.js';
import { runClosedLoop, type AppendOnce, type ClosedLoopFigures } from './closed-loop.js';
import { depositEvent } from './deposit-event.js';
import { createEmmettContender } from './emmett-contender.js';
import type { Lifecycle } from './lifecycle.js';
import { EQUIVALENT_SCHEMA, createEquivalentSchema, equivalentScript, findPgbench, runPgbench, verifyEquivalentRows } from './pgbench-equivalent.js';
import { formatTable, num } from './table.js';
import { startTempPostgres } from './temp-postgres.js';

export interface SideBySideFigures {
  clients: number;
  seconds: number;
  eventsPerAppend: number;
  ledgergateAppendsPerSecond: number;
  pgbenchTps: number | null; // null when pgbench is not available; then pgbenchNote says why
  pgbenchNote?: string;
  emmettAppendsPerSecond: number;
}

export interface SideBySideOptions {
  /** measured seconds per contender, rounded to whole seconds (pgbench's -T takes no fractions) */
  seconds: number;
  clients: number;
  lifecycle: Lifecycle;
  progress: (message: string) => void;
}

const STREAMS_PER_CLIENT = 4;
const EVENTS_PER_APPEND = 1;
const WARMUP_SECONDS = 1;

/** Cleanup steps run in reverse, each even if an earlier one failed (a failure is reported, not thrown). */
const cleanupSteps = (progress: (message: string) => void) => {
  const steps: { label: string; step: () => Promise<unknown> }[] = [];
  return {
    add: (label: string, step: () => Promise<unknown>) => void steps.push({ label, step }),
    runAll: async () => {
      while (steps.length > 0) {
        const { label, step } = steps.pop()!;
        await step().catch((error: unknown) => progress(`cleanup: ${label} failed: ${(error as Error).message}`));
      }
    },
  };
};

/** `close` run once, however many times it is called */
const once = (close: () => Promise<unknown>) => {
  let closing: Promise<unknown> | undefined;
  return () => (closing ??= close());
};

const describe = (name: string, figures: ClosedLoopFigures) =>
  `${name}: ${num(figures.appendsPerSecond)} appends/s (${num(figures.appends)} in ${num(figures.elapsedMs / 1000, 2)} s), ` +
  `p50 ${num(figures.latency.p50, 2)} ms, p99 ${num(figures.latency.p99, 2)} ms`;

const measurePgbench = async (
  pool: pg.Pool,
  connection: pg.ClientConfig,
  { seconds, clients, lifecycle, progress }: SideBySideOptions,
): Promise<{ tps: number | null; note?: string }> => {
  const found = await findPgbench(progress, lifecycle.signal);
  if ('note' in found) {
    progress(`pgbench skipped: ${found.note}`);
    return { tps: null, note: found.note };
  }
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-pgbench-'));
  try {
    const scriptFile = path.join(dir, 'equivalent-append.sql');
    await fs.writeFile(scriptFile, equivalentScript(STREAMS_PER_CLIENT));
    const run = (runNumber: number, runSeconds: number) =>
      runPgbench({ binary: found.binary, scriptFile, connection, clients, seconds: runSeconds, run: runNumber, signal: lifecycle.signal });
    progress(`pgbench (${found.binary}): ${WARMUP_SECONDS} s warm-up`);
    await run(0, WARMUP_SECONDS);
    progress(`pgbench: ${seconds} s, ${clients} clients`);
    const costs = await countAppendCosts(pool, `${EQUIVALENT_SCHEMA}.events`);
    const result = await run(1, seconds);
    const cost = await costs();
    const events = await verifyEquivalentRows(pool);
    progress(`pgbench: ${num(result.tps)} tps (${num(result.transactions)} transactions; ${num(events)} event rows in all)`);
    progress(describeAppendCosts('pgbench', cost, false));
    return { tps: result.tps };
  } catch (error) {
    lifecycle.checkpoint(); // Ctrl-C ends the whole comparison; any other failure is reported as the figure's note
    const note = `pgbench failed: ${(error as Error).message}`;
    progress(note);
    return { tps: null, note };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
};

/** One ledgergate client: its own streams, each appended to with the revision the last append returned. */
const ledgergateClient = (store: EventStore) => (): AppendOnce => {
  const streams = Array.from({ length: STREAMS_PER_CLIENT }, () => ({ id: randomUUID(), revision: null as bigint | null }));
  let turn = 0;
  return async () => {
    const stream = streams[turn % streams.length]!;
    const events = Array.from({ length: EVENTS_PER_APPEND }, (_, index) => depositEvent(stream.id, turn + index));
    turn++;
    const result = await store.append(`account-${stream.id}`, stream.revision ?? 'no_stream', events);
    stream.revision = result.streams[0]!.revision;
  };
};

/** Average stored JSON size per event, to show the three wrote events of the same size. */
const eventSizes = async (pool: pg.Pool): Promise<string> => {
  const sizeOf = async (table: string, data: string, metadata: string) => {
    const { rows } = await pool.query<{ bytes: string | null }>(
      `select avg(octet_length(${data}::text) + octet_length(${metadata}::text))::text as bytes from ${table}`,
    );
    return num(Number(rows[0]?.bytes ?? Number.NaN));
  };
  const pgbench = await sizeOf(`${EQUIVALENT_SCHEMA}.events`, 'data', 'metadata');
  const ledgergate = await sizeOf('eventstore.events', 'data', 'metadata');
  const emmett = await sizeOf('emt_messages', 'message_data', 'message_metadata');
  return `average JSON bytes per event (data + metadata): pgbench ${pgbench}, ledgergate ${ledgergate}, Emmett ${emmett}`;
};

export const compareAppendThroughput = async (options: SideBySideOptions): Promise<SideBySideFigures> => {
  const { clients, lifecycle, progress } = options;
  if (!(options.seconds > 0)) throw new Error(`the duration must be a positive number of seconds, not ${options.seconds}`);
  if (!Number.isInteger(clients) || clients < 1) throw new Error(`clients must be a positive integer, not ${clients}`);
  const seconds = Math.max(1, Math.round(options.seconds));
  const measured = { ...options, seconds };
  const logger = createLogger('warn', { component: 'bench' }, (line) => process.stderr.write(line + '\n'));

  progress('side by side: starting a temporary embedded PostgreSQL (default durability)');
  const { server } = await startTempPostgres(lifecycle, logger);
  const cleanup = cleanupSteps(progress);
  cleanup.add('stop PostgreSQL', () => server.stop()); // now, not at the end of a longer run; the lifecycle step is then a no-op
  try {
    lifecycle.checkpoint();
    const connection = server.connection('ledgergate');
    const pool = createPool(connection, { max: clients, purpose: 'bench-side-by-side' });
    cleanup.add('close the pool', () => pool.end());
    await migrateToLatest(pool, eventStoreMigrations);
    await createEquivalentSchema(pool);
    lifecycle.checkpoint();

    // (a) the hardware limit
    const pgbench = await measurePgbench(pool, connection, measured);
    lifecycle.checkpoint();

    // (b) ledgergate, through the public EventStore port only
    const ledgergateCosts = await countAppendCosts(pool, 'eventstore.events');
    const store = createPostgresEventStore({ pool, listenConfig: connection, logger });
    const closeStore = once(() => store.close());
    cleanup.add('close the event store', closeStore);
    progress(`ledgergate: ${WARMUP_SECONDS} s warm-up + ${seconds} s, ${clients} clients`);
    const ledgergate = await runClosedLoop({
      clients,
      warmupSeconds: WARMUP_SECONDS,
      seconds,
      newClient: ledgergateClient(store),
      interrupt: lifecycle.signal,
    });
    await closeStore();
    progress(describe('ledgergate', ledgergate));
    progress(describeAppendCosts('ledgergate', await ledgergateCosts(), true));

    // (c) Emmett last: creating its store swaps pg's global JSON parsers until it is closed
    const emmett = await createEmmettContender(connection, { poolSize: clients, streamsPerClient: STREAMS_PER_CLIENT });
    const closeEmmett = once(() => emmett.close());
    cleanup.add('close the Emmett event store', closeEmmett);
    const emmettCosts = await countAppendCosts(pool, 'emt_messages');
    progress(`Emmett: ${WARMUP_SECONDS} s warm-up + ${seconds} s, ${clients} clients`);
    const emmettFigures = await runClosedLoop({
      clients,
      warmupSeconds: WARMUP_SECONDS,
      seconds,
      newClient: emmett.newClient,
      interrupt: lifecycle.signal,
    });
    await closeEmmett();
    progress(describe('Emmett', emmettFigures));
    progress(describeAppendCosts('Emmett', await emmettCosts(), true));
    progress(await eventSizes(pool));

    return {
      clients,
      seconds,
      eventsPerAppend: EVENTS_PER_APPEND,
      ledgergateAppendsPerSecond: ledgergate.appendsPerSecond,
      pgbenchTps: pgbench.tps,
      ...(pgbench.note === undefined ? {} : { pgbenchNote: pgbench.note }),
      emmettAppendsPerSecond: emmettFigures.appendsPerSecond,
    };
  } finally {
    await cleanup.runAll();
  }
};

const ratio = (ours: number, theirs: number | null) => (theirs === null || !(theirs > 0) ? Number.NaN : ours / theirs);

/** The comparison as a table plus a footnote, for bench/side-by-side.ts and the full bench run. */
export const sideBySideTable = (figures: SideBySideFigures): string => {
  const ours = figures.ledgergateAppendsPerSecond;
  const rows = [
    ['pgbench, equivalent insert transaction', num(figures.pgbenchTps ?? Number.NaN), num(ratio(ours, figures.pgbenchTps), 2), '≥ 1.00'],
    ['ledgergate PostgreSQL event store', num(ours), '1.00', ''],
    ['Emmett PostgreSQL event store', num(figures.emmettAppendsPerSecond), num(ratio(ours, figures.emmettAppendsPerSecond), 2), '≥ 2.00'],
  ];
  const table = formatTable(
    [{ header: 'appends of 1 event' }, { header: 'appends/s', align: 'right' }, { header: 'ledgergate ÷ this', align: 'right' }, { header: 'target', align: 'right' }],
    rows,
  );
  const footnote = [
    `(${figures.clients} concurrent clients, ${figures.seconds} s each after a warm-up, ${figures.eventsPerAppend} event per append, ` +
      `${STREAMS_PER_CLIENT} streams per client, exact expected revisions; one embedded PostgreSQL, default durability; ${os.cpus().length} cpus)`,
  ];
  if (figures.pgbenchNote) footnote.push(`pgbench: ${figures.pgbenchNote}`);
  return [table, ...footnote].join('\n');
};
