import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadLedger } from '../../src/application/ledgers.js';
import { LedgerBatcher, type LedgerView } from '../../src/application/ledger-batches.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { EventStore, StreamAppend } from '../../src/eventstore/port.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { ledgerDecisions, type Unscoped } from '../support/ledger-decisions.js';

const ORG = 'org-pipelining';
const TOKEN = 'eip155:1/slip44:60';
const metadata = { actor: 'test' };
const clock = () => new Date();

const { onLedgerOnly } = ledgerDecisions(ORG, TOKEN);

/** a promise and the function that resolves it */
const signal = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
};

/**
 * Pipelined ledger batches (src/application/ledger-batches.ts): while one batch's append is in
 * flight, the commands that arrive are decided on the ledger that append will leave, and appended
 * only once it landed. Here the first append is held at a gate (no timing: the test opens it once
 * the next decisions were made), and the ledger is moved under it, or its answer lost.
 */
describe('pipelined ledger batches (real PostgreSQL)', () => {
  let database: TestDatabase;
  let store: EventStore;
  let ledgerCounter = 0;

  beforeAll(async () => {
    database = await createTestDatabase('ledger_pipelining');
    await migrateToLatest(database.pool, eventStoreMigrations);
    store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger: createLogger('silent') });
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  const newLedger = () => `ledger-${ORG}-${++ledgerCounter}`;

  /** holds the next append that writes `stream` until `open()`; `loseAnswer`: that append is written, then fails as a lost connection would */
  const gatedStore = (stream: string) => {
    const reached = signal();
    const gate = signal();
    const gated = { armed: false, loseAnswer: false, appends: 0 };
    const wrapped: EventStore = {
      ...store,
      appendMany: async (appends: StreamAppend[]) => {
        gated.appends++;
        if (!gated.armed || !appends.some((append) => append.stream === stream)) return store.appendMany(appends);
        gated.armed = false;
        reached.resolve();
        await gate.promise;
        const result = await store.appendMany(appends);
        if (gated.loseAnswer) throw new Error('connection lost after the commit');
        return result;
      },
    };
    return { gated, wrapped, reached: reached.promise, open: gate.resolve };
  };

  const fund = async (batcher: LedgerBatcher, services: { store: EventStore; clock: () => Date }, stream: string, amount: bigint) => {
    const deposit = { chainId: 'eip155:1', txHash: `0x${(++ledgerCounter).toString(16).padStart(64, '0')}`, index: 0 };
    await batcher.decide(services, stream, metadata, onLedgerOnly(stream, { type: 'AddPendingDeposit', amount, deposit }));
    await batcher.decide(services, stream, metadata, onLedgerOnly(stream, { type: 'CreditDeposit', amount, deposit }));
  };

  /** a ledger-only decision that tells `decided` each time it is decided */
  const counted = (stream: string, command: Unscoped, decided: () => void) => {
    const inner = onLedgerOnly(stream, command);
    return {
      decide: (ledger: LedgerView, now: Date) => {
        decided();
        return inner.decide(ledger, now);
      },
    };
  };

  /** resolves once `count` decisions were made */
  const decisionsMade = (count: number) => {
    const done = signal();
    let made = 0;
    return {
      made: done.promise,
      decided: () => {
        if (++made === count) done.resolve();
      },
    };
  };

  const heldIds = async (stream: string) =>
    (await store.readStream(stream)).filter((event) => event.type === 'FundsHeld').map((event) => (event.data as { withdrawalId: string }).withdrawalId);

  const neverNegative = async (stream: string) => {
    for (const event of await store.readStream(stream)) {
      const after = (event.data as { balancesAfter: Record<string, string> }).balancesAfter;
      for (const value of Object.values(after)) expect(BigInt(value)).toBeGreaterThanOrEqual(0n);
    }
  };

  /**
   * A funded ledger; a first hold of 10 whose append is held at the gate; then `count` holds of 10
   * queued behind it, all decided (on the ledger the held append will leave) before this returns.
   */
  const firstHeldNextDecided = async (funds: bigint, count: number, { loseAnswer = false } = {}) => {
    const stream = newLedger();
    const { gated, wrapped, reached, open } = gatedStore(stream);
    const services = { store: wrapped, clock };
    const batcher = new LedgerBatcher();
    await fund(batcher, services, stream, funds);
    Object.assign(gated, { armed: true, loseAnswer });
    const first = batcher.decide(services, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 10n, withdrawalId: 'w-first' }));
    await reached;
    const appendsWhileHeld = gated.appends;
    const { made, decided } = decisionsMade(count);
    const next = Array.from({ length: count }, (_, n) => batcher.decide(services, stream, metadata, counted(stream, { type: 'HoldFunds', amount: 10n, withdrawalId: `w-next-${n}` }, decided)));
    await made;
    // every one decided before the held append is answered, none appended yet
    expect(gated.appends).toBe(appendsWhileHeld);
    return { stream, gated, appendsWhileHeld, open, outcomes: () => Promise.allSettled([first, ...next]) };
  };

  it('decides the next batch while the first is in flight and appends it, in one append, once the first landed', async () => {
    const { stream, gated, appendsWhileHeld, open, outcomes } = await firstHeldNextDecided(100n, 5);
    open();
    expect((await outcomes()).every((outcome) => outcome.status === 'fulfilled')).toBe(true);
    expect(gated.appends).toBe(appendsWhileHeld + 1);
    expect(await heldIds(stream)).toEqual(['w-first', 'w-next-0', 'w-next-1', 'w-next-2', 'w-next-3', 'w-next-4']);
    expect(await loadLedger(store, stream)).toEqual({ state: { available: 40n, pending: 0n, held: 60n }, expectedRevision: 7n });
  });

  it('the append in flight conflicts (another process moved the ledger): the batch decided on it is put back, each hold lands once, in order, never negative', async () => {
    const { stream, open, outcomes } = await firstHeldNextDecided(100n, 5);
    // another process, on its own read of the store, holds 60 before the held append is written
    await new LedgerBatcher().decide({ store, clock }, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 60n, withdrawalId: 'w-there' }));
    open();
    const settled = await outcomes();
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected']);
    for (const outcome of settled.slice(4)) expect(outcome).toMatchObject({ reason: { code: 'INSUFFICIENT_BALANCE' } });
    expect(await heldIds(stream)).toEqual(['w-there', 'w-first', 'w-next-0', 'w-next-1', 'w-next-2']);
    expect((await loadLedger(store, stream)).state).toEqual({ available: 0n, pending: 0n, held: 100n });
    await neverNegative(stream);
  });

  it('the append in flight is written but its answer lost: the batch decided on it is decided again on the store, nothing held twice or on a ledger that was not written', async () => {
    const { stream, open, outcomes } = await firstHeldNextDecided(30n, 3, { loseAnswer: true });
    open();
    const settled = await outcomes();
    expect(settled[0]).toMatchObject({ status: 'rejected', reason: { message: 'connection lost after the commit' } });
    // the lost one was written: of the three decided on it, the two the store's ledger affords land
    expect(settled.slice(1).map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(settled[3]).toMatchObject({ reason: { code: 'INSUFFICIENT_BALANCE' } });
    expect(await heldIds(stream)).toEqual(['w-first', 'w-next-0', 'w-next-1']);
    expect((await loadLedger(store, stream)).state).toEqual({ available: 0n, pending: 0n, held: 30n });
    await neverNegative(stream);
  });

  it('a batch decided on the append in flight goes out as soon as that append landed, before what arrived meanwhile is read and decided', async () => {
    const stream = newLedger();
    const { gated, wrapped, reached, open } = gatedStore(stream);
    const services = { store: wrapped, clock };
    const batcher = new LedgerBatcher();
    await fund(batcher, services, stream, 100n);
    gated.armed = true;
    const first = batcher.decide(services, stream, metadata, onLedgerOnly(stream, { type: 'HoldFunds', amount: 10n, withdrawalId: 'w-first' }));
    await reached;
    const appendsWhileHeld = gated.appends;
    /** a hold whose read waits for `release`, and tells when it began */
    const heldRead = (withdrawalId: string) => {
      const began = signal();
      const release = signal();
      const decision = {
        ...onLedgerOnly(stream, { type: 'HoldFunds', amount: 10n, withdrawalId }),
        read: async () => {
          began.resolve();
          await release.promise;
        },
      };
      return { began: began.promise, release: release.resolve, settled: batcher.decide(services, stream, metadata, decision) };
    };
    // decided on the ledger the held append will leave, its read still running when that append lands
    const second = heldRead('w-second');
    await second.began;
    open();
    await first;
    // arrives after the first landed, while the second is being decided
    const third = heldRead('w-third');
    second.release();
    await third.began;
    // the second's append started before the third was read: nothing waits for it but the first
    expect(gated.appends).toBe(appendsWhileHeld + 1);
    third.release();
    await Promise.all([second.settled, third.settled]);
    expect(await heldIds(stream)).toEqual(['w-first', 'w-second', 'w-third']);
  });
});
