import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecidedAppend } from '../../src/application/command-handler.js';
import { loadLedger } from '../../src/application/ledgers.js';
import { LedgerBatcher, type LedgerView } from '../../src/application/ledger-batches.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { LedgerState } from '../../src/domain/ledger/ledger.js';
import type { EventStore, StreamAppend } from '../../src/eventstore/port.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { ledgerDecisions } from '../support/ledger-decisions.js';

const ORG = 'org-memory';
const TOKEN = 'eip155:1/slip44:60';
const metadata = { actor: 'test' };
const clock = () => new Date();

const { onLedgerOnly } = ledgerDecisions(ORG, TOKEN);

/**
 * The ledger kept in memory by the batcher (src/application/ledger-batches.ts), write-through. Two
 * batchers stand for two processes: what one appends, the other's memory does not know, and it
 * must never refuse, or decide a step the revision does not check, on that stale balance.
 */
describe('the ledger in the batcher’s memory (real PostgreSQL)', () => {
  let database: TestDatabase;
  let store: EventStore;
  let ledgerCounter = 0;

  beforeAll(async () => {
    database = await createTestDatabase('ledger_memory');
    await migrateToLatest(database.pool, eventStoreMigrations);
    store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger: createLogger('silent') });
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  /** counts the reads of `stream`, and fails the next append after writing it when `loseAnswer` is set */
  const watchedStore = (stream: string) => {
    const watch = { ledgerReads: 0, loseAnswer: false };
    const watched: EventStore = {
      ...store,
      readStream: (name, options) => {
        if (name === stream) watch.ledgerReads++;
        return store.readStream(name, options);
      },
      appendMany: async (appends: StreamAppend[]) => {
        const result = await store.appendMany(appends);
        if (watch.loseAnswer) {
          watch.loseAnswer = false;
          throw new Error('connection lost after the commit');
        }
        return result;
      },
    };
    return { watch, watched };
  };

  const credit = (batcher: LedgerBatcher, services: { store: EventStore; clock: () => Date }, stream: string, amount: bigint) => {
    const deposit = { chainId: 'eip155:1', txHash: `0x${(++ledgerCounter).toString(16).padStart(64, '0')}`, index: 0 };
    return batcher
      .decide(services, stream, metadata, onLedgerOnly(stream, { type: 'AddPendingDeposit', amount, deposit }))
      .then(() => batcher.decide(services, stream, metadata, onLedgerOnly(stream, { type: 'CreditDeposit', amount, deposit })));
  };
  const newLedger = () => `ledger-${ORG}-${++ledgerCounter}`;

  it('write-through: after its first read, the ledger is decided on from memory, and the store agrees with it', async () => {
    const stream = newLedger();
    const { watch, watched } = watchedStore(stream);
    const batcher = new LedgerBatcher();
    await credit(batcher, { store: watched, clock }, stream, 100n);
    for (let n = 0; n < 10; n++) await batcher.decide({ store: watched, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 1n, withdrawalId: `w-${n}` }));
    expect(watch.ledgerReads).toBe(1);
    expect(batcher.keptLedgers).toBe(1);
    expect(await loadLedger(store, stream)).toEqual({ state: { available: 90n, pending: 0n, held: 10n }, expectedRevision: 11n });
  });

  it('another process credited the ledger: a hold memory cannot afford is decided again on the store, not refused', async () => {
    const stream = newLedger();
    const here = new LedgerBatcher();
    const there = new LedgerBatcher();
    await credit(here, { store, clock }, stream, 10n);
    await here.decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 10n, withdrawalId: 'w-all' }));
    // memory here: nothing available. The other process credits 50.
    await credit(there, { store, clock }, stream, 50n);
    await expect(here.decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 30n, withdrawalId: 'w-after' }))).resolves.toMatchObject({});
    expect((await loadLedger(store, stream)).state).toEqual({ available: 20n, pending: 0n, held: 40n });
  });

  it('another process moved the ledger: an affordable hold decided on memory conflicts and lands once, on the store’s revision', async () => {
    const stream = newLedger();
    const here = new LedgerBatcher();
    const there = new LedgerBatcher();
    await credit(here, { store, clock }, stream, 100n);
    await there.decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 60n, withdrawalId: 'w-there' }));
    await expect(here.decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 50n, withdrawalId: 'w-here' }))).rejects.toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
    await here.decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 40n, withdrawalId: 'w-here-2' }));
    expect((await loadLedger(store, stream)).state).toEqual({ available: 0n, pending: 0n, held: 100n });
    expect(await store.readStream(stream)).toHaveLength(4);
  });

  it('a decision that leaves the ledger alone is made on the store’s ledger, never on memory no revision checks', async () => {
    const stream = newLedger();
    const here = new LedgerBatcher();
    const there = new LedgerBatcher();
    await credit(here, { store, clock }, stream, 5n);
    await credit(there, { store, clock }, stream, 70n);
    const seen: LedgerState[] = [];
    await here.decide({ store, clock }, stream, metadata, {
      decide: (ledger: LedgerView) => {
        seen.push(ledger.state);
        // records what the balance allows elsewhere, without moving the ledger (as a fee left uncharged would)
        return { appends: [{ stream: `note-${stream}`, expectedRevision: 'no_stream', events: [{ type: 'Noted', data: { available: ledger.state.available.toString() } }] }] as DecidedAppend[], result: {} };
      },
    });
    expect(seen.at(-1)).toEqual({ available: 75n, pending: 0n, held: 0n });
    const [note] = await store.readStream(`note-${stream}`);
    expect(note?.data).toEqual({ available: '75' });
  });

  it('an append whose answer is lost (written, then the connection failed) drops memory: the next decision reads the store', async () => {
    const stream = newLedger();
    const { watch, watched } = watchedStore(stream);
    const batcher = new LedgerBatcher();
    await credit(batcher, { store: watched, clock }, stream, 10n);
    watch.loseAnswer = true;
    await expect(batcher.decide({ store: watched, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 4n, withdrawalId: 'w-lost' }))).rejects.toThrow(/connection lost/);
    expect(batcher.keptLedgers).toBe(0);
    const readsBefore = watch.ledgerReads;
    await batcher.decide({ store: watched, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 6n, withdrawalId: 'w-next' }));
    expect(watch.ledgerReads).toBe(readsBefore + 1);
    expect((await loadLedger(store, stream)).state).toEqual({ available: 0n, pending: 0n, held: 10n });
  });

  it('keeps at most its limit of ledgers', async () => {
    const batcher = new LedgerBatcher(10_000, 256, 2);
    for (let n = 0; n < 3; n++) await credit(batcher, { store, clock }, newLedger(), 1n);
    expect(batcher.keptLedgers).toBe(2);
  });
});
