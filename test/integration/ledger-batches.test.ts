import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecidedAppend } from '../../src/application/command-handler.js';
import { loadLedger } from '../../src/application/ledgers.js';
import { LedgerBatcher } from '../../src/application/ledger-batches.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { DomainError } from '../../src/errors.js';
import { ledgerDecider } from '../../src/domain/ledger/decide.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { ledgerDecisions } from '../support/ledger-decisions.js';

const ORG = 'org-batch';
const TOKEN = 'eip155:1/slip44:60';
const metadata = { actor: 'test' };

/** An event store that counts its appends: how many commits the batches took. */
const countingStore = (store: EventStore) => {
  const counter = { appends: 0 };
  return {
    counter,
    store: { ...store, appendMany: (appends: Parameters<EventStore['appendMany']>[0]) => (counter.appends++, store.appendMany(appends)) } as EventStore,
  };
};

const { ledgerCommand, onLedgerOnly } = ledgerDecisions(ORG, TOKEN);

describe('ledger batches (real PostgreSQL)', () => {
  let database: TestDatabase;
  let store: EventStore;
  let ledgerCounter = 0;
  const clock = () => new Date();

  beforeAll(async () => {
    database = await createTestDatabase('ledger_batches');
    await migrateToLatest(database.pool, eventStoreMigrations);
    store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger: createLogger('silent') });
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  const fundedLedger = async (amount: bigint) => {
    const stream = `ledger-${ORG}-${++ledgerCounter}`;
    const batcher = new LedgerBatcher();
    const deposit = { chainId: 'eip155:1', txHash: `0x${ledgerCounter.toString(16).padStart(64, '0')}`, index: 0 };
    await batcher.decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'AddPendingDeposit', amount, deposit }));
    await batcher.decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'CreditDeposit', amount, deposit }));
    return stream;
  };

  it('decides 200 queued holds in a few appends, refusing exactly the unaffordable ones alone', async () => {
    const stream = await fundedLedger(150n);
    const { store: counted, counter } = countingStore(store);
    const batcher = new LedgerBatcher();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 200 }, (_, n) =>
        batcher.decide({ store: counted, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 1n, withdrawalId: `w-${n}` })),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(150);
    const refused = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    expect(refused.map((outcome) => (outcome.reason as DomainError).code)).toEqual(Array(50).fill('INSUFFICIENT_BALANCE'));
    expect(counter.appends).toBeLessThan(20); // batched: far fewer commits than decisions
    const ledger = await loadLedger(store, stream);
    expect(ledger.state).toEqual({ available: 0n, pending: 0n, held: 150n });
    expect(ledger.expectedRevision).toBe(1n + 150n); // two funding events, then one per hold
    expect(batcher.activeLedgers).toBe(0);
  });

  it('two batchers (two processes) on one ledger: every decision lands once, on the revision it read', async () => {
    const stream = await fundedLedger(400n);
    const [first, second] = [new LedgerBatcher(), new LedgerBatcher()];
    const hold = (batcher: LedgerBatcher, n: number) =>
      batcher.decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 2n, withdrawalId: `w-${n}` }));
    await Promise.all(Array.from({ length: 200 }, (_, n) => hold(n % 2 === 0 ? first : second, n)));
    const ledger = await loadLedger(store, stream);
    expect(ledger.state).toEqual({ available: 0n, pending: 0n, held: 400n });
    const events = await store.readStream(stream);
    expect(events).toHaveLength(202);
    expect(new Set(events.slice(2).map((event) => (event.data as { withdrawalId: string }).withdrawalId)).size).toBe(200);
  });

  it('never decides two writers of one other stream together: the later one reads what the first wrote and is refused alone', async () => {
    const stream = await fundedLedger(10n);
    const batcher = new LedgerBatcher();
    const claim = `claim-${ledgerCounter}`;
    // reads the claim after the ledger, in its turn: the second of one batch waits for the next one and finds it taken
    const claimAndHold = (n: number) =>
      batcher.decide({ store, clock }, stream, metadata, {
        stream: claim,
        read: async () => (await store.streamRevision(claim)) !== null,
        decide: (ledger, now, taken) => {
          if (taken) throw new DomainError('DUPLICATE_REFERENCE', 'taken');
          return {
            appends: [
              { stream: claim, expectedRevision: 'no_stream', events: [{ type: 'Claimed', data: { n } }] },
              { stream, expectedRevision: ledger.expectedRevision, events: ledgerDecider.decide(ledgerCommand({ type: 'HoldFunds', amount: 1n, withdrawalId: `w-${n}` }), ledger.state, { now }) },
            ] as DecidedAppend[],
            result: { n },
          };
        },
      });
    const others = Array.from({ length: 5 }, (_, n) =>
      batcher.decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 1n, withdrawalId: `other-${n}` })),
    );
    const outcomes = await Promise.allSettled([claimAndHold(1), claimAndHold(2), ...others]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(((outcomes[1] as PromiseRejectedResult).reason as DomainError).code).toBe('DUPLICATE_REFERENCE');
    expect((await loadLedger(store, stream)).state).toEqual({ available: 4n, pending: 0n, held: 6n });
    expect(await store.readStream(claim)).toHaveLength(1);
  });

  it('one decision the store refuses (a string jsonb cannot hold) fails alone: the others of its batch are decided again and land', async () => {
    const stream = await fundedLedger(10n);
    const batcher = new LedgerBatcher();
    const poisoned = () => batcher.decide({ store, clock }, stream, metadata, {
      decide: (ledger, now) => ({
        appends: [
          { stream: `note-${ledgerCounter}`, expectedRevision: 'no_stream', events: [{ type: 'Noted', data: { note: 'note\u0000' } }] },
          { stream, expectedRevision: ledger.expectedRevision, events: ledgerDecider.decide(ledgerCommand({ type: 'HoldFunds', amount: 1n, withdrawalId: 'poisoned' }), ledger.state, { now }) },
        ] as DecidedAppend[],
        result: {},
      }),
    });
    const neighbour = (n: number) => batcher.decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 1n, withdrawalId: `neighbour-${n}` }));
    // the first goes out alone (the ledger is idle); the rest queue behind it and are decided as one batch
    const outcomes = await Promise.allSettled([neighbour(0), neighbour(1), neighbour(2), poisoned(), neighbour(3), neighbour(4), neighbour(5)]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect((await loadLedger(store, stream)).state).toEqual({ available: 4n, pending: 0n, held: 6n });
  });

  it('reads other streams after the ledger: two credits of one deposit credit it once, neither is wrongly refused', async () => {
    const stream = `ledger-${ORG}-${++ledgerCounter}`;
    const batcher = new LedgerBatcher();
    const deposit = { chainId: 'eip155:1', txHash: `0x${ledgerCounter.toString(16).padStart(64, '0')}`, index: 0 };
    await batcher.decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'AddPendingDeposit', amount: 5n, deposit }));
    const marker = `credited-${ledgerCounter}`;
    // as a watcher's confirmation does: already credited → nothing; else credit it and mark it, atomically
    const credit = () =>
      batcher.decide({ store, clock }, stream, metadata, {
        stream: marker,
        read: () => store.streamRevision(marker),
        decide: (ledger, now, credited) => ({
          appends: (credited !== null
            ? []
            : [
                { stream: marker, expectedRevision: 'no_stream', events: [{ type: 'Credited', data: {} }] },
                { stream, expectedRevision: ledger.expectedRevision, events: ledgerDecider.decide(ledgerCommand({ type: 'CreditDeposit', amount: 5n, deposit }), ledger.state, { now }) },
              ]) as DecidedAppend[],
          result: {},
        }),
      });
    const outcomes = await Promise.allSettled([credit(), credit(), credit()]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect((await loadLedger(store, stream)).state).toEqual({ available: 5n, pending: 0n, held: 0n });
    expect(await store.readStream(marker)).toHaveLength(1);
  });

  it('refuses a command beyond its bound with SERVICE_UNAVAILABLE, and accepts again once drained', async () => {
    const stream = await fundedLedger(10n);
    const batcher = new LedgerBatcher(2);
    const queued = [1, 2, 3].map((n) => batcher.decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 1n, withdrawalId: `b-${n}` })));
    const fourth = batcher.decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 1n, withdrawalId: 'b-4' }));
    await expect(fourth).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await Promise.all(queued);
    await expect(batcher.decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 1n, withdrawalId: 'b-5' }))).resolves.toMatchObject({});
    expect((await loadLedger(store, stream)).state.held).toBe(4n);
  });
});
