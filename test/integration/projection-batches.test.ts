import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withdrawalLifecycles } from '../../bench/lib/withdrawal-lifecycles.js';
import { nativeToken } from '../../src/catalog/tokens.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { LedgerEvent } from '../../src/domain/ledger/ledger.js';
import { streams } from '../../src/domain/streams.js';
import type { WithdrawalEvent } from '../../src/domain/withdrawal/withdrawal.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import type { EventStore, NewEvent } from '../../src/eventstore/port.js';
import { createLogger } from '../../src/log.js';
import { auditStreamsProjection } from '../../src/projections/audit-streams.js';
import { balancesProjection } from '../../src/projections/balances.js';
import { rebuildProjection } from '../../src/projections/checkpoint.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { withdrawalsProjection } from '../../src/projections/withdrawals.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const logger = createLogger('silent');
const PROJECTIONS = [withdrawalsProjection, balancesProjection, auditStreamsProjection];
const token = nativeToken('eip155:1');
const orgA = 'org_batchA';
const orgB = 'org_batchB';

const event = (type: string, data: Record<string, unknown>, at: string): NewEvent => ({ id: randomUUID(), type, data, metadata: { actor: 'test', at } });
const withdrawalEvent = (domainEvent: WithdrawalEvent, at: string) => event(domainEvent.type, domainEvent.data, at);
const ledgerEvent = (domainEvent: LedgerEvent, at: string) => event(domainEvent.type, domainEvent.data, at);

/**
 * Beside the generator's lifecycles (two organizations, so two ledgers in most batches): a two-signer
 * withdrawal approved, signed, broadcast and failed with its hold released; one cancelled before
 * approval; a gas top-up stream and a deposit with its sweep (audit-streams' "same organization as").
 */
const appendScenario = async (store: EventStore) => {
  const generator = withdrawalLifecycles({ orgIds: [orgA, orgB], tokenId: token.id, chainId: token.chainId, start: new Date('2026-11-22T10:00:00Z') });
  for (let index = 0; index < 12; index++) for (const step of generator.lifecycle(index)) await store.appendMany(step);

  const balances = (available: bigint, held: bigint) => ({ available: available.toString(), pending: '0', held: held.toString() });
  const ledger = streams.ledger(orgB, 'eip155:137/slip44:60');
  const requested = (id: string, signers: number, at: string): WithdrawalEvent => ({
    type: 'WithdrawalRequested',
    data: {
      id,
      orgId: orgB,
      chainId: 'eip155:137',
      tokenId: 'eip155:137/slip44:60',
      amount: '500',
      recipient: '0x00000000000000000000000000000000000000aa',
      memo: null,
      reference: `ref-${id}`,
      internalNote: 'note',
      externalUserId: null,
      initiator: 'usr_1',
      minWithdrawalSigners: signers,
      status: signers > 1 ? 'PendingApproval' : 'Pending',
      requestedAt: at,
    },
  });
  const failing = 'wd_failing';
  const t = (second: number) => `2026-11-22T11:00:${String(second).padStart(2, '0')}.000Z`;
  await store.appendMany([
    { stream: streams.withdrawal(failing), expectedRevision: 'no_stream', events: [withdrawalEvent(requested(failing, 2, t(0)), t(0))] },
    { stream: ledger, expectedRevision: 'no_stream', events: [ledgerEvent({ type: 'FundsHeld', data: { orgId: orgB, tokenId: 'eip155:137/slip44:60', amount: '500', occurredAt: t(0), balancesAfter: balances(1500n, 500n), withdrawalId: failing } }, t(0))] },
  ]);
  await store.append(streams.withdrawal(failing), 0n, [
    withdrawalEvent({ type: 'WithdrawalApproved', data: { id: failing, userId: 'usr_2', approvers: ['usr_1', 'usr_2'], status: 'Pending', approvedAt: t(1) } }, t(1)),
    withdrawalEvent({ type: 'WithdrawalTransactionSigned', data: { id: failing, raw: '0xraw', txHash: '0xfeed', nonce: 3, fee: '21000', signedAt: t(2) } }, t(2)),
    withdrawalEvent({ type: 'WithdrawalBroadcast', data: { id: failing, txHash: '0xfeed', broadcastAt: t(3) } }, t(3)),
  ]);
  await store.append(streams.withdrawalGas(failing), 'no_stream', [event('GasTopUpSigned', { withdrawalId: failing }, t(3))]);
  await store.appendMany([
    { stream: streams.withdrawal(failing), expectedRevision: 3n, events: [withdrawalEvent({ type: 'WithdrawalFailed', data: { id: failing, txnError: 'reverted', failedAt: t(4) } }, t(4))] },
    { stream: ledger, expectedRevision: 0n, events: [ledgerEvent({ type: 'HoldReleased', data: { orgId: orgB, tokenId: 'eip155:137/slip44:60', amount: '500', occurredAt: t(4), balancesAfter: balances(2000n, 0n), withdrawalId: failing } }, t(4))] },
  ]);
  const cancelled = 'wd_cancelled';
  await store.append(streams.withdrawal(cancelled), 'no_stream', [
    withdrawalEvent(requested(cancelled, 2, t(5)), t(5)),
    withdrawalEvent({ type: 'WithdrawalCancelled', data: { id: cancelled, userId: 'usr_1', username: 'alice', txnError: 'cancelled by alice', cancelledAt: t(6) } }, t(6)),
  ]);
  await store.append(streams.deposit('eip155:1', '0xabc', 0), 'no_stream', [event('DepositDetected', { orgId: orgA, amount: '7' }, t(7))]);
  await store.append(streams.sweep('eip155:1', '0xabc', 0), 'no_stream', [event('SweepSigned', { txHash: '0xdef' }, t(8))]);
};

/** Everything the three projections wrote, minus what is random or the database's clock. */
const snapshot = async (db: Kysely<Database>) => ({
  withdrawals: await db.selectFrom('withdrawals').selectAll().orderBy('id').execute(),
  balances: await db.selectFrom('balances').selectAll().orderBy('org_id').orderBy('token_id').execute(),
  auditStreams: await db.selectFrom('audit_streams').selectAll().orderBy('stream').execute(),
  webhooks: await db
    .selectFrom('webhook_deliveries')
    .select(['seq', 'org_id', 'event_type', 'dedupe_key', 'body', 'event_timestamp', 'status', 'attempts'])
    .orderBy('seq')
    .execute(),
});

describe('projection batches', () => {
  let eventsDatabase: TestDatabase;
  let store: EventStore;
  const readModels: TestDatabase[] = [];

  /** a fresh read-model database, the three projections caught up on it in batches of `batchSize` */
  const projectedInBatchesOf = async (batchSize: number) => {
    const database = await createTestDatabase('batches');
    readModels.push(database);
    await migrateToLatest(database.pool, readModelMigrations);
    // one after the other, in a fixed order, so the outbox's seq is comparable between runs
    for (const projection of PROJECTIONS) {
      const runner = new ProjectionRunner({ projection, store, database: database.config, logger, batchSize });
      expect(await runner.catchUp()).toBe(true);
    }
    return createDatabase(database.pool);
  };

  beforeAll(async () => {
    eventsDatabase = await createTestDatabase('batch_events');
    await migrateToLatest(eventsDatabase.pool, eventStoreMigrations);
    store = createPostgresEventStore({ pool: eventsDatabase.pool, listenConfig: eventsDatabase.config, logger });
    await appendScenario(store);
  });
  afterAll(async () => {
    await store.close();
    await Promise.all([eventsDatabase, ...readModels].map((database) => database.drop()));
  });

  it('writes the same rows and webhooks whatever the batch size, and a rebuild gives them again', async () => {
    const one = await snapshot(await projectedInBatchesOf(1));
    const seven = await projectedInBatchesOf(7);
    const all = await snapshot(await projectedInBatchesOf(10_000));
    expect(await snapshot(seven)).toEqual(one);
    expect(all).toEqual(one);

    // a rebuild over the built tables: the same rows, and no webhook twice
    for (const projection of PROJECTIONS) await rebuildProjection(seven, store, projection);
    expect(await snapshot(seven)).toEqual(one);

    // a rebuild on an empty read model, in the same order: the same rows and webhooks
    const database = await createTestDatabase('batches_rebuild');
    readModels.push(database);
    await migrateToLatest(database.pool, readModelMigrations);
    const rebuilt = createDatabase(database.pool);
    for (const projection of PROJECTIONS) await rebuildProjection(rebuilt, store, projection);
    expect(await snapshot(rebuilt)).toEqual(one);
  });

  it('folds each withdrawal in event order and sends each event its webhook', async () => {
    const { withdrawals, balances, auditStreams, webhooks } = await snapshot(await projectedInBatchesOf(10_000));
    const positions = await store.readAll({ filter: { types: ['WithdrawalRequested'] }, maxCount: 100 });
    expect(withdrawals).toHaveLength(14);
    for (const row of withdrawals) expect(row.seq).toBe(positions.find((recorded) => recorded.data.id === row.id)!.position.toString());

    const failing = withdrawals.find((row) => row.id === 'wd_failing')!;
    expect(failing).toMatchObject({ status: 'Failed', txn_hash: '0xfeed', updated_at: new Date('2026-11-22T11:00:04.000Z') });
    expect(failing.state).toMatchObject({ approvers: ['usr_1', 'usr_2'], txnError: 'reverted', signedTransaction: { txHash: '0xfeed', nonce: 3 } });
    const typesOf = (id: string) => webhooks.filter((row) => row.body.includes(`"id":"${id}"`)).map((row) => row.event_type);
    expect(typesOf('wd_failing')).toEqual(['withdrawal.created', 'withdrawal.approved', 'withdrawal.processing', 'withdrawal.failed']);
    expect(typesOf('wd_cancelled')).toEqual(['withdrawal.created', 'withdrawal.cancelled']);
    expect(withdrawals.filter((row) => row.status === 'Completed')).toHaveLength(12);

    // every ledger event announced; each ledger's row is its last event's balances
    const ledgerEvents = await store.readAll({ filter: { categories: ['ledger'] }, maxCount: 1000 });
    const balanceUpdates = webhooks.filter((row) => row.event_type === 'balance.updated');
    expect(balanceUpdates.map((row) => row.dedupe_key)).toEqual(ledgerEvents.map((recorded) => `${recorded.data.orgId}:balance.updated:${recorded.id}`));
    expect(balances).toHaveLength(3);
    for (const row of balances) {
      const last = ledgerEvents.filter((recorded) => recorded.data.orgId === row.org_id && recorded.data.tokenId === row.token_id).at(-1)!;
      expect({ available: row.available, pending: row.pending, held: row.held }).toEqual(last.data.balancesAfter);
      expect(row.updated_at).toEqual(new Date(last.data.occurredAt as string));
    }
    expect(JSON.parse(balanceUpdates.at(-1)!.body)).toMatchObject({ type: 'balance.updated', payload: { available: '2000', pending: '0', reason: 'withdrawal' } });

    const ownerOf = (stream: string) => auditStreams.find((row) => row.stream === stream)?.org_id;
    expect(ownerOf(streams.withdrawalGas('wd_failing'))).toBe(orgB);
    expect(ownerOf(streams.sweep('eip155:1', '0xabc', 0))).toBe(orgA);
    // every stream here belongs to an organization, each from its first event's position
    const firsts = (await store.readAll({ maxCount: 1000 })).filter((recorded) => recorded.revision === 0n);
    const byStream = (a: string[], b: string[]) => (a[0]! < b[0]! ? -1 : 1);
    expect(auditStreams.map((row) => [row.stream, row.first_position]).sort(byStream)).toEqual(
      firsts.map((recorded) => [recorded.stream, recorded.position.toString()]).sort(byStream),
    );
  });
});
