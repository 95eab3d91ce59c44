/**
 * Projection and webhook benchmark on a throwaway embedded PostgreSQL (default durability):
 * appends N synthetic withdrawal lifecycles (six events each, shaped as the application appends
 * them) and M deposit lifecycles (account created, deposit detected then confirmed with its ledger
 * events: five events each, decided by the real deciders), then times
 *   (a) live catch-up of the withdrawals, balances, audit-streams, accounts, deposits and sweepQueue
 *       projections, side by side (each a ProjectionRunner, as the service runs them);
 *   (b) rebuildProjection of each, one after the other, then all of them together (one read pass,
 *       as `ledgergate projections rebuild` does);
 *   (c) the real webhook dispatcher sending the outbox those projections filled (capped at
 *       BENCH_WEBHOOKS deliveries) to a local keep-alive HTTP receiver.
 * Prints figures only; nothing asserts timing.
 *
 *   npm run bench:projections
 *   BENCH_WITHDRAWALS=5000 BENCH_DEPOSITS=5000 BENCH_WEBHOOKS=5000 npm run bench:projections
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { sql } from 'kysely';
import { nativeToken } from '../src/catalog/tokens.js';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import { eventStoreMigrations } from '../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../src/eventstore/postgres/postgres-event-store.js';
import { createLogger } from '../src/log.js';
import { accountsProjection } from '../src/projections/accounts.js';
import { auditStreamsProjection } from '../src/projections/audit-streams.js';
import { balancesProjection } from '../src/projections/balances.js';
import { rebuildProjection, rebuildProjections } from '../src/projections/checkpoint.js';
import { depositsProjection } from '../src/projections/deposits.js';
import { readModelMigrations } from '../src/projections/migrations/index.js';
import type { Projection } from '../src/projections/projection.js';
import { ProjectionRunner } from '../src/projections/runner.js';
import { sweepQueueProjection } from '../src/projections/sweep-queue.js';
import { withdrawalsProjection } from '../src/projections/withdrawals.js';
import { encryptSecret, secretPurpose } from '../src/security/secret-box.js';
import { WebhookDispatcher } from '../src/webhooks/dispatcher.js';
import { runBenchmark, type Lifecycle } from './lib/lifecycle.js';
import { formatTable, num } from './lib/table.js';
import { startTempPostgres } from './lib/temp-postgres.js';
import { depositLifecycles } from './lib/deposit-lifecycles.js';
import { withdrawalLifecycles } from './lib/withdrawal-lifecycles.js';

const WITHDRAWALS = Number(process.env.BENCH_WITHDRAWALS ?? 20_000);
const DEPOSITS = Number(process.env.BENCH_DEPOSITS ?? 20_000);
const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? 20_000);
const WRITERS = 16;
const ORGANIZATIONS = 4;
const PROJECTIONS: Projection[] = [withdrawalsProjection, balancesProjection, auditStreamsProjection, accountsProjection, depositsProjection, sweepQueueProjection];

const progress = (message: string) => console.error(`· ${message}`);
const seconds = (startedMs: number) => (performance.now() - startedMs) / 1000;

/** A receiver that answers 200 at once on kept-alive connections, counting distinct x-webhook-id. */
const startReceiver = async () => {
  const seen = new Set<string>();
  let onCount: (() => void) | null = null;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      seen.add(String(request.headers['x-webhook-id']));
      response.writeHead(200, { 'content-length': '0' }).end();
      onCount?.();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    distinct: () => seen.size,
    until: (count: number) =>
      new Promise<void>((resolve) => {
        onCount = () => seen.size >= count && resolve();
        onCount();
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

const main = async (lifecycle: Lifecycle): Promise<void> => {
  const logger = createLogger('warn', { component: 'bench' }, (line) => process.stderr.write(line + '\n'));
  const token = nativeToken('eip155:1');
  progress('starting embedded PostgreSQL in a temporary DATA_DIR');
  const { server } = await startTempPostgres(lifecycle, logger);
  const config = server.connection('ledgergate');
  const pool = createPool(config, { max: 24, purpose: 'bench' });
  lifecycle.onTeardown('close the pool', () => pool.end());
  await migrateToLatest(pool, eventStoreMigrations);
  await migrateToLatest(pool, readModelMigrations);
  const store = createPostgresEventStore({ pool, listenConfig: config, logger });
  lifecycle.onTeardown('close the event store', () => store.close());
  const db = createDatabase(pool);

  const orgIds = Array.from({ length: ORGANIZATIONS }, (_, index) => `org_bench${index}`);
  const generator = withdrawalLifecycles({ orgIds, tokenId: token.id, chainId: token.chainId, start: new Date('2026-11-22T10:00:00Z') });
  progress(`appending ${num(WITHDRAWALS)} withdrawal lifecycles (${num(WITHDRAWALS * 6)} events) from ${WRITERS} writers`);
  let next = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (next < WITHDRAWALS) {
        const steps = generator.lifecycle(next++);
        for (const step of steps) await store.appendMany(step);
        lifecycle.checkpoint();
      }
    }),
  );
  const deposits = depositLifecycles({ orgIds, tokenId: token.id, chainId: token.chainId, start: new Date('2026-11-22T12:00:00Z') });
  progress(`appending ${num(DEPOSITS)} deposit lifecycles (${num(DEPOSITS * 5)} events) from ${WRITERS} writers`);
  let nextDeposit = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (nextDeposit < DEPOSITS) {
        for (const step of deposits.lifecycle(nextDeposit++)) await store.appendMany(step);
        lifecycle.checkpoint();
      }
    }),
  );

  const rows: string[][] = [];
  const countOf = async (projection: Projection) => {
    const { rows: counted } = await sql<{ count: string }>`
      select count(*) as count from eventstore.events
      where category = any(${projection.filter?.categories ?? []}) and (${projection.filter?.types ?? null}::text[] is null or type = any(${projection.filter?.types ?? []}))`.execute(db);
    return Number(counted[0]!.count);
  };
  const counts = new Map(await Promise.all(PROJECTIONS.map(async (projection) => [projection.name, await countOf(projection)] as const)));

  progress(`(a) live catch-up of ${PROJECTIONS.map((projection) => projection.name).join(', ')}, side by side`);
  const catchUpStarted = performance.now();
  const perProjection = await Promise.all(
    PROJECTIONS.map(async (projection) => {
      const started = performance.now();
      const runner = new ProjectionRunner({ projection, store, database: config, logger });
      if (!(await runner.catchUp())) throw new Error(`${projection.name}: lock taken`);
      return { projection, elapsed: seconds(started) };
    }),
  );
  const catchUpElapsed = seconds(catchUpStarted);
  const total = [...counts.values()].reduce((sum, count) => sum + count, 0);
  for (const { projection, elapsed } of perProjection) {
    const count = counts.get(projection.name)!;
    rows.push([`catch-up ${projection.name}`, num(count), elapsed.toFixed(2), num(Math.round(count / elapsed))]);
  }
  rows.push(['catch-up, all side by side (wall)', num(total), catchUpElapsed.toFixed(2), num(Math.round(total / catchUpElapsed))]);
  lifecycle.checkpoint();

  progress('(b) rebuildProjection of each');
  for (const projection of PROJECTIONS) {
    const started = performance.now();
    await rebuildProjection(db, store, projection);
    const elapsed = seconds(started);
    const count = counts.get(projection.name)!;
    rows.push([`rebuild ${projection.name}`, num(count), elapsed.toFixed(2), num(Math.round(count / elapsed))]);
    lifecycle.checkpoint();
  }
  const togetherStarted = performance.now();
  // a session per projection: what the CLI takes with the default pool of ten connections
  await rebuildProjections(db, store, PROJECTIONS, { sessions: PROJECTIONS.length });
  const togetherElapsed = seconds(togetherStarted);
  rows.push(['rebuild, all together (one read pass)', num(total), togetherElapsed.toFixed(2), num(Math.round(total / togetherElapsed))]);
  lifecycle.checkpoint();

  progress(`(c) webhook dispatcher → local keep-alive receiver (${num(WEBHOOKS)} deliveries)`);
  const receiver = await startReceiver();
  lifecycle.onTeardown('close the receiver', () => receiver.close());
  const encryptionKey = randomBytes(32);
  const now = new Date();
  for (const orgId of orgIds) {
    await db
      .insertInto('organizations')
      .values({
        id: orgId,
        name: orgId,
        webhook_url: receiver.url,
        webhook_signing_secret_encrypted: encryptSecret(encryptionKey, randomBytes(32).toString('hex'), secretPurpose.webhookSigningSecret(orgId)),
        min_withdrawal_signers: 1,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
  // keep the oldest WEBHOOKS deliveries, so the figure covers a bounded amount of work
  await sql`delete from webhook_deliveries where seq > (select seq from webhook_deliveries order by seq offset ${WEBHOOKS - 1} limit 1)`.execute(db);
  const deliveries = Number((await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll().as('count')).executeTakeFirstOrThrow()).count);
  const dispatcher = new WebhookDispatcher({ db, listen: config, encryptionKey, retryDelaysMs: [5_000, 25_000], logger });
  const dispatchStarted = performance.now();
  dispatcher.start();
  await receiver.until(deliveries);
  const dispatchElapsed = seconds(dispatchStarted);
  await dispatcher.stop();
  const delivered = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll().as('count')).where('status', '=', 'delivered').executeTakeFirstOrThrow();
  rows.push([`webhooks sent (${num(Number(delivered.count))} recorded delivered)`, num(deliveries), dispatchElapsed.toFixed(2), num(Math.round(deliveries / dispatchElapsed))]);

  console.log(`\nprojections and webhooks — ${num(WITHDRAWALS)} withdrawals, ${num(DEPOSITS)} deposits, ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? ''}\n`);
  console.log(formatTable([{ header: 'figure' }, { header: 'events / deliveries', align: 'right' }, { header: 'seconds', align: 'right' }, { header: 'per second', align: 'right' }], rows));
};

await runBenchmark(main);
