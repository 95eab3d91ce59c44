/**
 * `npm run bench:export`: the audit export of 1,000,000 events of one organization, through the
 * same code as GET /audit/events, in bounded memory. A fresh embedded PostgreSQL gets the events
 * (batched appends, plus another organization's every tenth batch, which the export must skip),
 * the `audit-streams` projection catches up, the export streams to a temporary file, and
 * `verifyExport` re-reads it. Prints events/s and peak RSS.
 *
 * BENCH_EVENTS (default 1000000) and BENCH_BATCH (events per append, default 1000) change the size.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { exportStream } from '../src/audit/export.js';
import { verifyExport } from '../src/audit/verify.js';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import type { NewEvent } from '../src/eventstore/port.js';
import { eventStoreMigrations } from '../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../src/eventstore/postgres/postgres-event-store.js';
import { createLogger } from '../src/log.js';
import { auditStreamsProjection } from '../src/projections/audit-streams.js';
import { readModelMigrations } from '../src/projections/migrations/index.js';
import { ProjectionRunner } from '../src/projections/runner.js';
import { runBenchmark, type Lifecycle } from './lib/lifecycle.js';
import { msSince, perSecond } from './lib/stats.js';
import { num } from './lib/table.js';
import { startTempPostgres } from './lib/temp-postgres.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 1000);
const WRITERS = 2;
const progress = (message: string) => process.stderr.write(`… ${message}\n`);
const mib = (bytes: number) => `${num(bytes / 1024 / 1024, 1)} MiB`;

/** peak resident set size of one phase, sampled every 20 ms (maxRSS covers the whole process) */
const sampleRss = () => {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  return () => {
    clearInterval(timer);
    return Math.max(peak, process.memoryUsage().rss);
  };
};

const ledgerEvent = (orgId: string, n: number, at: string): NewEvent => ({
  id: randomUUID(),
  type: 'FeeCharged',
  data: { orgId, tokenId: 'eip155:1/slip44:60', amount: String(1000 + (n % 997)), reason: 'withdrawal', reference: `w-${n}`, occurredAt: at, balancesAfter: { available: String(n * 7), pending: '0', held: '0' } },
  metadata: { actor: 'bench', at, requestId: randomUUID() },
});

const main = async (lifecycle: Lifecycle): Promise<void> => {
  const logger = createLogger('warn', { component: 'bench' }, (line) => process.stderr.write(line + '\n'));
  progress('starting embedded PostgreSQL in a temporary DATA_DIR');
  const { server, dataDir } = await startTempPostgres(lifecycle, logger);
  const config = server.connection('ledgergate');
  const pool = createPool(config, { max: WRITERS + 2, purpose: 'bench' });
  lifecycle.onTeardown('close the pool', () => pool.end());
  await migrateToLatest(pool, eventStoreMigrations);
  await migrateToLatest(pool, readModelMigrations);
  const store = createPostgresEventStore({ pool, listenConfig: config, logger });
  lifecycle.onTeardown('close the event store', () => store.close());
  const db = createDatabase(pool);

  const orgId = randomUUID();
  const otherOrgId = randomUUID();
  const at = new Date('2026-11-22T10:00:00.000Z').toISOString();
  const created = (id: string): NewEvent => ({
    id: randomUUID(),
    type: 'OrganizationCreated',
    data: { orgId: id, name: 'Bench', minWithdrawalSigners: 1, webhookUrl: null, webhookSigningSecretEncrypted: 'v1.sealed-secret-must-not-appear', createdAt: at },
    metadata: { actor: 'bench', at, orgId: id },
  });
  await store.append(`organization-${orgId}`, 'no_stream', [created(orgId)]);
  await store.append(`organization-${otherOrgId}`, 'no_stream', [created(otherOrgId)]);

  const batches = Math.ceil((EVENTS - 1) / BATCH);
  progress(`appending ${num(EVENTS)} events (${num(batches)} appends of ${BATCH}) + another organization's every tenth batch`);
  const appendStarted = process.hrtime.bigint();
  let next = 0;
  let written = 1;
  const writer = async () => {
    while (next < batches) {
      lifecycle.checkpoint();
      const batch = next++;
      const count = Math.min(BATCH, EVENTS - 1 - batch * BATCH);
      const stream = `ledger-${orgId}-bench${batch % 100}`;
      await store.append(stream, 'any', Array.from({ length: count }, (_, i) => ledgerEvent(orgId, batch * BATCH + i, at)));
      if (batch % 10 === 0) await store.append(`ledger-${otherOrgId}-bench`, 'any', Array.from({ length: BATCH }, (_, i) => ledgerEvent(otherOrgId, i, at)));
      written += count;
      if (batch % 100 === 0) progress(`  ${num(written)} events`);
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
  const appendMs = msSince(appendStarted);
  const storeHead = await store.headPosition();

  progress('audit-streams projection: catching up');
  const projectionStarted = process.hrtime.bigint();
  await new ProjectionRunner({ projection: auditStreamsProjection, store, database: config, logger, batchSize: 1000 }).catchUp();
  const projectionMs = msSince(projectionStarted);

  const file = path.join(dataDir, 'export.ndjson');
  progress(`exporting to ${file}`);
  global.gc?.();
  const baseline = process.memoryUsage().rss;
  const stopSampling = sampleRss();
  const exportStarted = process.hrtime.bigint();
  await pipeline(Readable.fromWeb(exportStream({ store, db }, { orgId }, 'ndjson') as Parameters<typeof Readable.fromWeb>[0]), fs.createWriteStream(file));
  const exportMs = msSince(exportStarted);
  const exportPeak = stopSampling();
  const size = (await fsp.stat(file)).size;
  // the organization's first line is OrganizationCreated, whose sealed webhook secret must be gone
  const handle = await fsp.open(file);
  const head = Buffer.alloc(4096);
  await handle.read(head, 0, head.length, 0).finally(() => handle.close());
  if (!head.toString('utf8').includes('OrganizationCreated') || head.toString('utf8').includes('sealed-secret-must-not-appear')) throw new Error('the first line is not the redacted OrganizationCreated');

  progress('verifying the export');
  const verifyStarted = process.hrtime.bigint();
  const result = await verifyExport(readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity }));
  const verifyMs = msSince(verifyStarted);
  if (!result.ok) throw new Error(`the export does not verify: line ${result.line}: ${result.reason}`);
  if (result.count !== EVENTS) throw new Error(`exported ${result.count} events, expected ${EVENTS}`);

  console.log(`events in the store          ${num(Number(storeHead))} (${num(EVENTS)} of the exported organization)`);
  console.log(`append                       ${num(perSecond(EVENTS, appendMs))} events/s (${num(appendMs / 1000, 1)} s, ${WRITERS} writers, ${BATCH} events/append)`);
  console.log(`audit-streams catch-up       ${num(perSecond(Number(storeHead), projectionMs))} events/s (${num(projectionMs / 1000, 1)} s)`);
  console.log(`export (NDJSON, to a file)   ${num(perSecond(result.count, exportMs))} events/s (${num(exportMs / 1000, 1)} s, ${mib(size)})`);
  console.log(`  RSS during the export      peak ${mib(exportPeak)} (before: ${mib(baseline)})`);
  console.log(`verify                       ${num(perSecond(result.count, verifyMs))} events/s (${num(verifyMs / 1000, 1)} s): OK ${result.count} ${result.lastHash}`);
  console.log(`process peak RSS (maxRSS)    ${mib(process.resourceUsage().maxRSS * 1024)} (whole run, appends included)`);
};

await runBenchmark(main);
