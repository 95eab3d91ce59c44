import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganizationStates, type OrganizationStates } from '../../src/application/organization-states.js';
import { StreamCache } from '../../src/application/stream-cache.js';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { streams } from '../../src/domain/streams.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitUntil } from '../support/webhook-receiver.js';

const at = '2026-11-26T06:00:00.000Z';
const metadata = { actor: 'test', at };
const event = (type: string, data: Record<string, unknown>) => ({ id: randomUUID(), type, data, metadata });

/** the threshold an organization's state holds, or null before it exists */
const thresholdOf = (loaded: Awaited<ReturnType<OrganizationStates['get']>>) => (loaded.state.status === 'Active' ? loaded.state.minWithdrawalSigners : null);

/** a deferred promise: a read held until the test lets it go */
const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
};

/**
 * Organizations kept in memory (src/application/organization-states.ts): two event stores on one
 * database stand for two processes, each with its own LISTEN session. What is kept is dropped at
 * once after this process's own append, when the other's notification arrives, and entirely when
 * the session is lost; a load that raced a change is never kept.
 */
describe('organization states in memory, dropped by the store’s change feed (real PostgreSQL)', () => {
  let database: TestDatabase;
  let here: EventStore;
  let there: EventStore;
  let states: OrganizationStates;

  beforeAll(async () => {
    database = await createTestDatabase('organization_states');
    await migrateToLatest(database.pool, eventStoreMigrations);
    here = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger: createLogger('silent') });
    there = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger: createLogger('silent') });
    states = createOrganizationStates(here);
    await waitUntil(() => here.changes!.following(), 10_000, 'the change feed following');
  });
  afterAll(async () => {
    await here.close();
    await there.close();
    await database.drop();
  });

  const newOrganization = async (store: EventStore, minWithdrawalSigners = 1) => {
    const orgId = randomUUID();
    await store.append(streams.organization(orgId), 'no_stream', [
      event('OrganizationCreated', { orgId, name: 'Acme', minWithdrawalSigners, webhookUrl: null, webhookSigningSecretEncrypted: 'sealed', createdAt: at }),
    ]);
    return orgId;
  };
  /** this process's own appends are notified too, and drop what they touch once more: memory holds the stream once that has passed */
  const keptInMemory = (cache: OrganizationStates, stream: string) =>
    waitUntil(async () => (await cache.get(stream)).fromMemory, 5_000, `${stream} kept in memory`);
  const raiseThreshold = (store: EventStore, orgId: string, revision: bigint, minWithdrawalSigners: number) =>
    store.append(streams.organization(orgId), revision, [event('MinWithdrawalSignersChanged', { orgId, minWithdrawalSigners, changedAt: at })]);

  it('answers from memory until this process appends; its own append is seen by the very next read', async () => {
    const orgId = await newOrganization(here);
    const stream = streams.organization(orgId);
    expect(await states.get(stream)).toMatchObject({ expectedRevision: 0n });
    await keptInMemory(states, stream);
    await raiseThreshold(here, orgId, 0n, 2);
    const after = await states.get(stream);
    expect(after).toMatchObject({ fromMemory: false, expectedRevision: 1n });
    expect(thresholdOf(after)).toBe(2);
  });

  it('drops what another process changed when its notification arrives', async () => {
    const orgId = await newOrganization(there);
    const stream = streams.organization(orgId);
    await keptInMemory(states, stream);
    await raiseThreshold(there, orgId, 0n, 3);
    // bounded: the notification takes milliseconds; this fails if memory keeps the old state
    await waitUntil(async () => thresholdOf(await states.get(stream)) === 3, 5_000, 'the other process’s change to reach memory');
    await keptInMemory(states, stream);
    expect(await states.get(stream)).toMatchObject({ expectedRevision: 1n });
  });

  it('a load in flight while its stream changes is answered but not kept', async () => {
    const orgId = await newOrganization(here);
    const stream = streams.organization(orgId);
    const held = gate();
    let reads = 0;
    const racing = new StreamCache(here, 'organization', async (name) => {
      const loaded = await states.get(name, { fresh: true });
      reads++; // counted once the read has its answer, so the change below comes after it
      await held.opened;
      return loaded;
    });
    try {
      const first = racing.get(stream);
      // the read is under way (its answer stands at revision 0) when this process changes the stream
      await waitUntil(() => reads === 1, 5_000, 'the read to have its answer');
      await raiseThreshold(here, orgId, 0n, 2);
      held.open();
      expect((await first).expectedRevision).toBe(0n);
      expect(racing.size).toBe(0);
      const next = await racing.get(stream);
      expect(next).toMatchObject({ fromMemory: false, expectedRevision: 1n });
      expect(reads).toBe(2);
    } finally {
      racing.close();
    }
  });

  it('a lost LISTEN session drops everything, and nothing stale is served while it is away', async () => {
    const orgId = await newOrganization(here);
    const stream = streams.organization(orgId);
    await keptInMemory(states, stream);
    expect(states.size).toBeGreaterThan(0);

    // every LISTEN session on the event store's channel is cut, as a network failure or a restart would
    const db = createDatabase(database.pool);
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where query ilike 'listen%eventstore_appended%' and pid <> pg_backend_pid()`.execute(db);
    await waitUntil(() => states.size === 0, 5_000, 'memory dropped when the session was lost');

    // meanwhile another process changes the organization: whatever the session does, the next read is fresh
    await raiseThreshold(there, orgId, 0n, 4);
    expect(thresholdOf(await states.get(stream))).toBe(4);
    // the session comes back (reopened by the reads), and memory is trusted again from there
    await waitUntil(async () => (await states.get(stream)).fromMemory, 10_000, 'the feed following again');
    expect(thresholdOf(await states.get(stream))).toBe(4);
  });

  it('holds at most its limit', async () => {
    const bounded = createOrganizationStates(here, 2);
    try {
      const organizations = [await newOrganization(here), await newOrganization(here), await newOrganization(here)];
      const loadAll = async () => {
        for (const orgId of organizations) await bounded.get(streams.organization(orgId));
        expect(bounded.size).toBeLessThanOrEqual(2);
        return bounded.size === 2;
      };
      await waitUntil(loadAll, 5_000, 'two organizations kept');
    } finally {
      bounded.close();
    }
  });

  it('without a change feed (an adapter that cannot tell) every read goes to the store', async () => {
    const orgId = await newOrganization(here);
    const { changes: _changes, ...withoutFeed } = here;
    const unfollowed = createOrganizationStates(withoutFeed as EventStore);
    await unfollowed.get(streams.organization(orgId));
    expect(await unfollowed.get(streams.organization(orgId))).toMatchObject({ fromMemory: false });
    expect(unfollowed.size).toBe(0);
  });
});
