import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { streams } from '../../src/domain/streams.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import type { EventStore, RecordedEvent } from '../../src/eventstore/port.js';
import { createLogger } from '../../src/log.js';
import { accountsProjection } from '../../src/projections/accounts.js';
import { rebuildProjection } from '../../src/projections/checkpoint.js';
import { depositsProjection } from '../../src/projections/deposits.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { sweepQueueProjection } from '../../src/projections/sweep-queue.js';
import { sweepsProjection } from '../../src/projections/sweeps.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { appendDepositScenario, SCENARIO_ORG_A, SCENARIO_ORG_B } from '../support/deposit-scenario.js';

const logger = createLogger('silent');
const PROJECTIONS = [accountsProjection, depositsProjection, sweepQueueProjection, sweepsProjection];

/** Everything the four projections wrote, minus what is random or the database's clock. */
const snapshot = async (db: Kysely<Database>) => ({
  accounts: await db.selectFrom('accounts').selectAll().orderBy('seq').execute(),
  deposits: await db.selectFrom('deposits').selectAll().orderBy('seq').execute(),
  sweepQueue: await db.selectFrom('sweep_queue').selectAll().orderBy('seq').execute(),
  sweeps: await db.selectFrom('sweeps').selectAll().orderBy('chain_id').orderBy('tx_hash').orderBy('output_index').execute(),
  webhooks: await db
    .selectFrom('webhook_deliveries')
    .select(['seq', 'org_id', 'event_type', 'dedupe_key', 'body', 'event_timestamp', 'status', 'attempts'])
    .orderBy('seq')
    .execute(),
});

describe('projection batches: accounts, deposits, sweep queue, sweeps', () => {
  let eventsDatabase: TestDatabase;
  let store: EventStore;
  let scenario: Awaited<ReturnType<typeof appendDepositScenario>>;
  const readModels: TestDatabase[] = [];

  const emptyReadModel = async (name: string) => {
    const database = await createTestDatabase(name);
    readModels.push(database);
    await migrateToLatest(database.pool, readModelMigrations);
    return database;
  };

  /** a fresh read model, the projections caught up on it in batches of `batchSize`, one after the other (the outbox's seq stays comparable) */
  const projectedInBatchesOf = async (batchSize: number) => {
    const database = await emptyReadModel('deposit_batches');
    for (const projection of PROJECTIONS) {
      const runner = new ProjectionRunner({ projection, store, database: database.config, logger, batchSize });
      expect(await runner.catchUp()).toBe(true);
    }
    return createDatabase(database.pool);
  };

  const eventsOf = async (filter: { categories?: string[]; types?: string[] }): Promise<RecordedEvent[]> => store.readAll({ filter, maxCount: 10_000 });

  beforeAll(async () => {
    eventsDatabase = await createTestDatabase('deposit_batch_events');
    await migrateToLatest(eventsDatabase.pool, eventStoreMigrations);
    store = createPostgresEventStore({ pool: eventsDatabase.pool, listenConfig: eventsDatabase.config, logger });
    scenario = await appendDepositScenario(store);
  });
  afterAll(async () => {
    await store.close();
    await Promise.all([eventsDatabase, ...readModels].map((database) => database.drop()));
  });

  it('writes the same rows and webhooks whatever the batch size, and a rebuild gives them again', async () => {
    const one = await snapshot(await projectedInBatchesOf(1));
    for (const size of [2, 3, 7]) expect(await snapshot(await projectedInBatchesOf(size))).toEqual(one);
    const seven = await projectedInBatchesOf(7);
    expect(await snapshot(await projectedInBatchesOf(10_000))).toEqual(one);

    // a rebuild over the built tables: the same rows, and no webhook twice
    for (const projection of PROJECTIONS) await rebuildProjection(seven, store, projection);
    expect(await snapshot(seven)).toEqual(one);

    // a rebuild on an empty read model, in the same order: the same rows and webhooks
    const rebuilt = createDatabase((await emptyReadModel('deposit_batches_rebuild')).pool);
    for (const projection of PROJECTIONS) await rebuildProjection(rebuilt, store, projection);
    expect(await snapshot(rebuilt)).toEqual(one);
  });

  it('folds each deposit and sweep in event order and sends each event its webhook', async () => {
    const { accounts, deposits, sweepQueue, sweeps, webhooks } = await snapshot(await projectedInBatchesOf(10_000));

    const created = await eventsOf({ types: ['AccountCreated'] });
    expect(accounts.map((row) => [row.seq, row.org_deposit_account_id])).toEqual(created.map((event) => [event.position.toString(), event.data.orgDepositAccountId]));
    expect(accounts.find((row) => row.chain_id === 'xrpl:mainnet')).toMatchObject({ destination_tag: '4242', external_user_id: 'user-2' });
    expect(webhooks.filter((row) => row.event_type === 'account.created').map((row) => row.dedupe_key)).toEqual(
      created.map((event) => `${event.data.orgId}:account.created:${event.id}`),
    );

    // a reverted deposit detected again: one row, from the second detection, confirmed
    const depositEvents = await eventsOf({ categories: ['deposit'] });
    const reorgedStream = streams.deposit(scenario.reorged.chainId, scenario.reorged.txHash, 0);
    const detections = depositEvents.filter((event) => event.stream === reorgedStream && event.type === 'DepositDetected');
    expect(detections).toHaveLength(2);
    const reorged = deposits.find((row) => row.tx_hash === scenario.reorged.txHash)!;
    expect(reorged).toMatchObject({ seq: detections[1]!.position.toString(), block_number: '1010', confirmations: 15, confirmed: true, org_id: SCENARIO_ORG_B });
    expect(deposits.map((row) => row.seq)).toEqual(
      depositEvents.filter((event) => event.type === 'DepositDetected' && event.id !== detections[0]!.id).map((event) => event.position.toString()),
    );
    expect(deposits.find((row) => row.tx_hash === scenario.pending.txHash)).toMatchObject({ confirmed: false, confirmations: 0 });
    expect(deposits.find((row) => row.tx_hash === scenario.unattributed.txHash)).toMatchObject({ credit: 'unattributed', org_id: null, confirmed: true });

    // webhooks: every credited detection and confirmation (the reorged one twice detected), in event order
    const announced = depositEvents.filter((event) => {
      if (event.type === 'DepositDetected') return event.data.credit === 'credit';
      return event.type === 'DepositConfirmed' && event.data.credited === true;
    });
    const depositWebhooks = webhooks.filter((row) => row.event_type.startsWith('deposit.'));
    expect(depositWebhooks.map((row) => row.dedupe_key)).toEqual(
      announced.map((event) => `${event.metadata.orgId}:${event.type === 'DepositDetected' ? 'deposit.detected' : 'deposit.confirmed'}:${event.id}`),
    );
    const confirmedBody = JSON.parse(depositWebhooks.find((row) => row.event_type === 'deposit.confirmed' && row.body.includes(scenario.reorged.txHash))!.body);
    expect(confirmedBody.payload).toMatchObject({ txnHash: scenario.reorged.txHash, amount: '2000000000000000', blockNumber: 1010, confirmations: 15, externalUserId: 'user-3' });

    // the queue: credited deposits on chains with sweeps only (not Bitcoin, not unattributed or dust)
    const queued = [scenario.ethereum, scenario.usdt, scenario.reorged, scenario.failing, scenario.skipped].map((transfer) => transfer.txHash).sort();
    expect(sweepQueue.map((row) => row.tx_hash).sort()).toEqual(queued);
    // a row is closed by its sweep's final event (confirmed, skipped, failed), at that event's time
    const sweepEnds = await eventsOf({ types: ['SweepConfirmed', 'SweepSkipped', 'SweepFailed'] });
    const endedAt = new Map(sweepEnds.map((event) => [(event.data as { txHash: string }).txHash, Object.entries(event.data as Record<string, unknown>).find(([key]) => /(confirmed|skipped|failed)At$/.test(key))![1]]));
    expect(endedAt.size).toBeGreaterThan(0);
    for (const row of sweepQueue) expect(row.done_at?.toISOString() ?? null).toBe(endedAt.get(row.tx_hash) ?? null);

    const sweepOf = (txHash: string) => sweeps.find((row) => row.tx_hash === txHash);
    expect(sweepOf(scenario.usdt.txHash)).toMatchObject({
      status: 'Confirmed',
      kind: 'token',
      reason: null,
      top_up_tx_hash: '0x52',
      top_up_amount: '130000000000000',
      gas_spent: '172000000000000',
      sweep_tx_hash: '0x53',
      swept_amount: '25000000',
      fee: '130000000000000',
      fee_charged: '0',
    });
    expect(sweepOf(scenario.ethereum.txHash)).toMatchObject({ status: 'Confirmed', kind: 'native', sweep_tx_hash: '0x51', fee_charged: '21000000000000', gas_spent: null });
    expect(sweepOf(scenario.failing.txHash)).toMatchObject({ status: 'Failed', reason: 'sweep: nonce too low' });
    expect(sweepOf(scenario.skipped.txHash)).toMatchObject({ status: 'Skipped', reason: 'the fee exceeds the deposit' });
    const lastSweepEvent = (await eventsOf({ categories: ['sweep'] })).filter((event) => event.data.txHash === scenario.usdt.txHash).at(-1)!;
    expect(sweepOf(scenario.usdt.txHash)!.updated_at).toEqual(new Date(lastSweepEvent.data.confirmedAt as string));
    expect(new Set(webhooks.map((row) => row.org_id))).toEqual(new Set([SCENARIO_ORG_A, SCENARIO_ORG_B]));
  });
});
