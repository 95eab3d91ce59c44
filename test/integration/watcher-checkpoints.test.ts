import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAggregate } from '../../src/application/command-handler.js';
import { getOrCreateDepositAccount, type DepositAccountServices } from '../../src/application/deposit-accounts.js';
import { createDepositAddressBook } from '../../src/chains/address-book.js';
import type { BlockTransfer } from '../../src/chains/gateway.js';
import { findChain } from '../../src/catalog/registry.js';
import { TOKENS } from '../../src/catalog/tokens.js';
import { ledgerDecider } from '../../src/domain/ledger/decide.js';
import { streams } from '../../src/domain/streams.js';
import type { Infrastructure } from '../../src/infrastructure.js';
import { createLogger } from '../../src/log.js';
import { WatcherCheckpoints } from '../../src/processes/deposit-watcher/checkpoint.js';
import { ChainEventFollower, type OrganizationWalletsAt } from '../../src/processes/deposit-watcher/event-follower.js';
import { FOLLOWED_CATEGORIES, FollowedEventsReader } from '../../src/processes/deposit-watcher/followed-events.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { waitUntil } from '../support/webhook-receiver.js';
import { ChainWatcher, WatcherLockSession } from '../../src/processes/deposit-watcher/index.js';
import { startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';

const ETHEREUM = 'eip155:1';
const XRP = 'xrpl:mainnet';
const TRON_SHASTA = 'tron:shasta'; // 5 confirmations: the chain the watcher runs on
const TRON = 'tron:0x00000000000000000000000000000000'; // the followers' own tests
const USDT = TOKENS.find((token) => token.chainId === ETHEREUM && token.symbol === 'USDT')!;
const logger = createLogger('silent');
const meta = { actor: 'test', at: '2026-11-26T07:00:00.000Z' };
const wallets: OrganizationWalletsAt = { space: 'wallets-test', addressesAt: (index) => [`0x5E771E${String(index).padStart(34, '0')}`, `0x6A5000${String(index).padStart(34, '0')}`] };

/** what a follower knows, in a form two followers can be compared by */
const knowledge = (follower: ChainEventFollower, probes: BlockTransfer[]) => ({
  byAddress: [...follower.watchSet.byAddress].sort(),
  byTaggedAddress: [...follower.watchSet.byTaggedAddress].sort(),
  addresses: [...follower.watchSet.addresses].sort(),
  serviceWallets: [...follower.watchSet.serviceWallets].sort(),
  // (what the watcher owes a verdict; a deposit followed live also carries its detection, which spares the confirmation a read)
  unconfirmed: [...follower.unconfirmed].map(([key, { ref, blockNumber, blockHash }]) => [key, ref, blockNumber, blockHash]).sort(),
  // the deposits keyed the old way, as the watcher uses them: the keys it gives a block's transfers
  legacyKeys: follower.legacyLogDeposits.keyAll(probes),
});

describe('deposit watcher checkpoints', () => {
  let fixture: ChainWorkerFixture;
  let infrastructure: Infrastructure;
  const orgId = randomUUID();

  beforeAll(async () => {
    fixture = await startChainWorkerFixture('watcher_checkpoints', { projections: 'none' });
    ({ infrastructure } = fixture);
  });
  afterAll(async () => fixture?.stop());

  /** one event of each kind a watcher follows, appended the way the service appends them */
  const history = () => {
    let appended = 0;
    const append = async (stream: string, type: string, data: Record<string, unknown>) => {
      await infrastructure.store.append(stream, 'any', [{ id: randomUUID(), type, data, metadata: meta }]);
      appended++;
    };
    const account = (chainId: string, user: string, address: string, destinationTag?: string) =>
      append(streams.account(orgId, chainId, user), 'AccountCreated', {
        orgId,
        chainId,
        externalUserId: user,
        orgDepositAccountId: randomUUID(),
        properties: destinationTag === undefined ? { address } : { address, destinationTag },
        derivation: { space: 'test', index: 0 },
        createdAt: meta.at,
      });
    const walletIndex = (index: number) =>
      append(streams.derivationOwner(wallets.space, orgId, `wallets-${index}`), 'DerivationIndexAssigned', { space: wallets.space, index, orgId, owner: `wallets-${index}`, assignedAt: meta.at });
    const detected = (chainId: string, txHash: string, index: number, fields: { tokenId?: string; to?: string; amount?: string; legacy?: boolean } = {}) =>
      append(streams.deposit(chainId, txHash, index), 'DepositDetected', {
        chainId,
        txHash,
        index,
        tokenId: fields.tokenId ?? `${chainId}/slip44:60`,
        amount: fields.amount ?? '1000',
        orgId,
        externalUserId: 'u',
        accountChainId: chainId,
        toAddress: fields.to ?? '0xto',
        destinationTag: null,
        senderAddress: '0x000000000000000000000000000000000000dEaD',
        blockNumber: 100 + index,
        blockHash: `0xblock${index}`,
        credit: 'credit',
        ...(fields.legacy ? {} : { logIndexInTransaction: true }),
        detectedAt: meta.at,
      });
    const verdict = (type: 'DepositConfirmed' | 'DepositReverted', chainId: string, txHash: string, index: number) =>
      append(streams.deposit(chainId, txHash, index), type, type === 'DepositConfirmed' ? { chainId, txHash, index, confirmations: 12, confirmedAt: meta.at, credited: true } : { chainId, txHash, index, reason: 'reorg', revertedAt: meta.at });
    return { account, walletIndex, detected, verdict, appended: () => appended };
  };

  const follower = (withCheckpoints: boolean, chainId = ETHEREUM, reader = new FollowedEventsReader(infrastructure.store)) =>
    new ChainEventFollower(findChain(chainId)!, reader, wallets, withCheckpoints ? new WatcherCheckpoints(infrastructure.db, chainId) : undefined);
  const savedCheckpoint = async (chainId: string) => ({
    position: (await sql<{ position: string }>`select position::text as position from chain_watcher_checkpoints where chain_id = ${chainId}`.execute(infrastructure.db)).rows[0]?.position,
    users: (await sql<{ user: string }>`select external_user_id as user from chain_watcher_addresses where chain_id = ${chainId} and org_id = ${orgId} order by 1`.execute(infrastructure.db)).rows.map((row) => row.user),
  });

  const legacyTx = `0x${'1e'.repeat(32)}`;
  const probes: BlockTransfer[] = [
    // matches the deposit recorded the old way at log 7 of its block: keyed 7, whatever its index now
    { txHash: legacyTx, index: 0, blockNumber: 300, blockHash: '0x300', from: '0x000000000000000000000000000000000000dEaD', to: '0xa11ce', asset: USDT.address, amount: 5n, destinationTag: null },
    { txHash: legacyTx, index: 7, blockNumber: 300, blockHash: '0x300', from: '0x000000000000000000000000000000000000dEaD', to: '0xb0b', asset: USDT.address, amount: 9n, destinationTag: null },
  ];

  it('restarted from its checkpoint, a follower knows exactly what one started from 0 knows, and reads only the events after it', async () => {
    const events = history();
    // before the first save: accounts (XRP with tags), the organizations' wallets, deposits of every fate, one keyed the old way
    await events.account(ETHEREUM, 'alice', '0xA11CE0000000000000000000000000000000A11CE');
    await events.account(XRP, 'xrp-1', 'rOrgAddress', '1001');
    await events.account(XRP, 'xrp-2', 'rOrgAddress', '1002');
    await events.account(TRON, 'tron', 'TTronAddress');
    await events.walletIndex(0);
    await events.detected(ETHEREUM, '0xd1', 0);
    await events.detected(ETHEREUM, '0xd2', 0);
    await events.detected(ETHEREUM, '0xd3', 0);
    await events.detected(ETHEREUM, legacyTx, 7, { tokenId: USDT.id, to: '0xa11ce', amount: '5', legacy: true });
    await events.verdict('DepositConfirmed', ETHEREUM, '0xd1', 0);
    await events.detected(TRON, '0xt1', 0);

    const first = follower(true);
    await first.refresh();
    await first.saveCheckpoint(new Date());

    // between the saves: a verdict on a deposit detected before, a revert, more accounts and wallets
    await events.verdict('DepositReverted', ETHEREUM, '0xd2', 0);
    await events.account(ETHEREUM, 'bob', '0xB0B0000000000000000000000000000000000B0B');
    await events.walletIndex(1);
    await events.detected(ETHEREUM, '0xd4', 0);
    await first.refresh();
    await first.saveCheckpoint(new Date());

    // after the last save
    const before = events.appended();
    await events.verdict('DepositConfirmed', ETHEREUM, '0xd3', 0);
    await events.detected(ETHEREUM, '0xd2', 0); // the reverted transfer mined again
    await events.account(XRP, 'xrp-3', 'rOrgAddress', '1003');
    await events.account(ETHEREUM, 'carol', '0xCA401000000000000000000000000000000CA401');
    await events.walletIndex(2);
    await events.detected(ETHEREUM, '0xd5', 0);
    const after = events.appended() - before;

    const restarted = follower(true);
    await restarted.refresh();
    const fromZero = follower(false);
    await fromZero.refresh();

    expect(restarted.eventsRead).toBe(after);
    expect(fromZero.eventsRead).toBe(events.appended());
    expect(knowledge(restarted, probes)).toEqual(knowledge(fromZero, probes));
    expect([...restarted.unconfirmed.keys()].sort()).toEqual([`${ETHEREUM}:0xd2:0`, `${ETHEREUM}:0xd4:0`, `${ETHEREUM}:0xd5:0`, `${ETHEREUM}:${legacyTx}:7`].sort());
    expect(restarted.watchSet.serviceWallets.size).toBe(6);
    expect(knowledge(restarted, probes).legacyKeys).toEqual([{ index: 7 }, { refused: expect.any(String) }]);

    // XRP: the tags and the organization address, from its own checkpoint
    const xrp = follower(true, XRP);
    await xrp.refresh();
    await xrp.saveCheckpoint(new Date());
    const xrpRestarted = follower(true, XRP);
    await xrpRestarted.refresh();
    expect(xrpRestarted.eventsRead).toBe(0);
    const xrpFromZero = follower(false, XRP);
    await xrpFromZero.refresh();
    expect(knowledge(xrpRestarted, [])).toEqual(knowledge(xrpFromZero, []));
    expect([...xrpRestarted.watchSet.byTaggedAddress.keys()].sort()).toEqual(['rOrgAddress#1001', 'rOrgAddress#1002', 'rOrgAddress#1003']);
  });

  it('a stop request ends a refresh before its next read; the next refresh knows what one started from 0 knows', async () => {
    const stop = new AbortController();
    stop.abort();
    const stopped = follower(false);
    await expect(stopped.refresh(stop.signal)).rejects.toThrow();
    expect(stopped.eventsRead).toBe(0);
    await stopped.refresh();
    const fromZero = follower(false);
    await fromZero.refresh();
    expect(knowledge(stopped, probes)).toEqual(knowledge(fromZero, probes));
  });

  it('a save behind the checkpoint (another watcher that believed it was active) writes nothing: the checkpoint only moves forward', async () => {
    const events = history();
    const behind = follower(true, TRON);
    await behind.refresh();
    await events.detected(TRON, '0xt2', 0);
    await events.verdict('DepositConfirmed', TRON, '0xt1', 0);
    const ahead = follower(true, TRON);
    await ahead.refresh();
    await ahead.saveCheckpoint(new Date());
    const saved = await sql<{ position: string }>`select position::text as position from chain_watcher_checkpoints where chain_id = ${TRON}`.execute(infrastructure.db);

    // the one behind saves the state of its older position: refused, the rows stay those of the newer one
    await behind.saveCheckpoint(new Date());
    const kept = await sql<{ position: string }>`select position::text as position from chain_watcher_checkpoints where chain_id = ${TRON}`.execute(infrastructure.db);
    expect(kept.rows).toEqual(saved.rows);
    const restarted = follower(true, TRON);
    await restarted.refresh();
    expect(restarted.eventsRead).toBe(0);
    expect([...restarted.unconfirmed.keys()]).toEqual([`${TRON}:0xt2:0`]);
    const fromZero = follower(false, TRON);
    await fromZero.refresh();
    expect(knowledge(restarted, [])).toEqual(knowledge(fromZero, []));
  });

  it('a save that dies before its commit leaves the previous checkpoint whole: a restart reads from there and knows everything', async () => {
    const events = history();
    const first = follower(true);
    await first.refresh();
    await first.saveCheckpoint(new Date());
    const before = events.appended();
    await events.account(ETHEREUM, 'dave', '0xDA7E000000000000000000000000000000000DA7E');
    await events.detected(ETHEREUM, '0xd6', 0);
    await events.verdict('DepositConfirmed', ETHEREUM, '0xd4', 0);
    await first.refresh();
    // the process dies inside the save's transaction, after the position moved and the addresses were written
    await sql`create function fail_checkpoint() returns trigger language plpgsql as $$ begin raise exception 'crash inside the checkpoint'; end $$`.execute(infrastructure.db);
    await sql`create trigger fail_checkpoint before insert or delete on chain_watcher_unconfirmed execute function fail_checkpoint()`.execute(infrastructure.db);
    try {
      await expect(first.saveCheckpoint(new Date())).rejects.toThrow('crash inside the checkpoint');
    } finally {
      await sql`drop trigger fail_checkpoint on chain_watcher_unconfirmed`.execute(infrastructure.db);
      await sql`drop function fail_checkpoint()`.execute(infrastructure.db);
    }
    const addresses = await sql<{ count: string }>`select count(*)::text as count from chain_watcher_addresses where chain_id = ${ETHEREUM} and org_id is not null and external_user_id = 'dave'`.execute(infrastructure.db);
    expect(addresses.rows).toEqual([{ count: '0' }]);

    const restarted = follower(true);
    await restarted.refresh();
    expect(restarted.eventsRead).toBe(events.appended() - before);
    const fromZero = follower(false);
    await fromZero.refresh();
    expect(knowledge(restarted, probes)).toEqual(knowledge(fromZero, probes));
    expect(restarted.unconfirmed.has(`${ETHEREUM}:0xd6:0`)).toBe(true);
    expect(restarted.unconfirmed.has(`${ETHEREUM}:0xd4:0`)).toBe(false);
  });

  it('followers of several chains sharing one reader each know what one alone from 0 knows; every event is read once', async () => {
    const events = history();
    await events.account(ETHEREUM, 'erin', '0xE41E000000000000000000000000000000000E41E');
    await events.account(XRP, 'xrp-4', 'rOrgAddress', '1004');
    await events.detected(TRON, '0xt3', 0);
    // one chain starts from a checkpoint, the others from 0: the reader reads from the lowest position
    const saved = follower(true, TRON);
    await saved.refresh();
    await saved.saveCheckpoint(new Date());
    await events.account(TRON, 'tron-2', 'TTronAddress2');
    await events.detected(ETHEREUM, '0xd7', 0);
    await events.walletIndex(3);

    const reader = new FollowedEventsReader(infrastructure.store);
    const shared = [follower(false, ETHEREUM, reader), follower(false, XRP, reader), follower(true, TRON, reader)];
    await Promise.all(shared.map((each) => each.refresh()));
    const head = await infrastructure.store.headPosition();
    // once, but for the events after the checkpoint when its follower joined after the first read began
    const followed = (await infrastructure.store.readAll({ maxCount: 10_000, filter: { categories: FOLLOWED_CATEGORIES } })).length;
    expect(reader.eventsRead).toBeGreaterThanOrEqual(followed);
    expect(reader.eventsRead).toBeLessThanOrEqual(followed + 3);
    expect(shared[2]!.eventsRead).toBe(3);
    for (const [index, chainId] of [ETHEREUM, XRP, TRON].entries()) {
      const alone = follower(false, chainId);
      await alone.refresh();
      expect(knowledge(shared[index]!, probes)).toEqual(knowledge(alone, probes));
      expect(shared[index]!.position).toBe(head);
    }
    // a refresh of one moves them all, each new event read once
    const readBefore = reader.eventsRead;
    await events.account(XRP, 'xrp-5', 'rOrgAddress', '1005');
    await events.detected(TRON, '0xt4', 0);
    await shared[0]!.refresh();
    expect(reader.eventsRead - readBefore).toBe(2);
    expect(shared[1]!.watchSet.byTaggedAddress.has('rOrgAddress#1005')).toBe(true);
    expect(shared[2]!.unconfirmed.has(`${TRON}:0xt4:0`)).toBe(true);
  });

  it('a save while the shared reader folds more in saves the position it was taken at: the checkpoint is never ahead, and the next save writes the rest', async () => {
    const events = history();
    const reader = new FollowedEventsReader(infrastructure.store);
    const saving = follower(true, ETHEREUM, reader);
    const other = follower(false, TRON, reader);
    await events.account(ETHEREUM, 'eve', '0xE7E0000000000000000000000000000000000E7E');
    await saving.refresh();
    await saving.saveCheckpoint(new Date());
    await events.account(ETHEREUM, 'frank', '0xF4A4C000000000000000000000000000000F4A4C');
    await saving.refresh();
    const frankAt = saving.position;

    // the save waits on the checkpoint's row while the other follower's refresh folds an account in
    let release!: () => void;
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holding = infrastructure.db.transaction().execute(async (trx) => {
      await sql`select 1 from chain_watcher_checkpoints where chain_id = ${ETHEREUM} for update`.execute(trx);
      locked();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await lockTaken;
    const save = saving.saveCheckpoint(new Date());
    try {
      const saveWaiting = async () =>
        (await sql<{ waiting: number }>`select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%chain_watcher_checkpoints%'`.execute(infrastructure.db)).rows[0]!.waiting > 0;
      await waitUntil(saveWaiting, 30_000, 'the save to wait on the checkpoint row');
      await events.account(ETHEREUM, 'grace', '0x64ACE000000000000000000000000000000064ACE');
      await other.refresh();
      expect(saving.position).toBeGreaterThan(frankAt);
    } finally {
      release();
      await holding;
      await save;
    }

    const first = await savedCheckpoint(ETHEREUM);
    expect(first.position).toBe(frankAt.toString());
    expect(first.users).toContain('frank');
    expect(first.users).not.toContain('grace');
    await saving.saveCheckpoint(new Date());
    const second = await savedCheckpoint(ETHEREUM);
    expect(second.position).toBe(saving.position.toString());
    expect(second.users).toContain('grace');
    const restarted = follower(true);
    await restarted.refresh();
    const fromZero = follower(false);
    await fromZero.refresh();
    expect(knowledge(restarted, probes)).toEqual(knowledge(fromZero, probes));
  });

  it('a stop request ends its waiter at once; the shared read ends between two batches once nobody waits, each follower at the last batch it took', async () => {
    await infrastructure.store.appendMany(
      Array.from({ length: 1100 }, (_, offset) => ({
        stream: streams.derivationOwner(wallets.space, orgId, `bulk-${offset}`),
        expectedRevision: 'no_stream' as const,
        events: [{ id: randomUUID(), type: 'DerivationIndexAssigned', data: { space: wallets.space, index: 100 + offset, orgId, owner: `bulk-${offset}`, assignedAt: meta.at }, metadata: meta }],
      })),
    );
    // the store's reads wait at a gate the test opens
    let reads = 0;
    let open!: () => void;
    let gate = new Promise<void>((resolve) => (open = resolve));
    const gated: EventStore = {
      ...infrastructure.store,
      readAllScanned: async (options) => {
        reads++;
        await gate;
        return infrastructure.store.readAllScanned(options);
      },
    };
    const reader = new FollowedEventsReader(gated);
    const stopping = follower(false, ETHEREUM, reader);
    const other = follower(false, TRON, reader);
    const stop = new AbortController();
    const stopped = stopping.refresh(stop.signal);
    await waitUntil(() => reads === 1, 30_000, 'the first read');
    stop.abort(new Error('stopped'));
    await expect(stopped).rejects.toThrow('stopped');
    open();
    await reader.idle();
    expect(reads).toBe(1);
    expect(stopping.eventsRead).toBe(1000);
    expect(other.eventsRead).toBe(0); // not joined yet: it joins at its first refresh

    gate = Promise.resolve();
    await other.refresh();
    await stopping.refresh();
    const fromZero = follower(false);
    await fromZero.refresh();
    expect(knowledge(stopping, probes)).toEqual(knowledge(fromZero, probes));
    expect(stopping.watchSet.serviceWallets.size).toBe(fromZero.watchSet.serviceWallets.size);
  });

  it('a follower that throws on a batch fails only its own refresh; the others take the batch', async () => {
    const events = history();
    await events.account(TRON, 'tron-3', 'TTronAddress3');
    const reader = new FollowedEventsReader(infrastructure.store);
    const healthy = follower(false, TRON, reader);
    const broken = follower(false, ETHEREUM, reader);
    await healthy.refresh();
    await broken.refresh();
    const brokenAt = broken.position;
    broken.take = () => {
      throw new Error('cannot fold');
    };
    await events.account(TRON, 'tron-4', 'TTronAddress4');
    await expect(broken.refresh()).rejects.toThrow('cannot fold');
    await healthy.refresh();
    expect(broken.position).toBe(brokenAt);
    const fromZero = follower(false, TRON);
    await fromZero.refresh();
    expect(knowledge(healthy, [])).toEqual(knowledge(fromZero, []));
  });

  it('a follower of quiet categories reads on from the head its last read reached, not from its last followed event, and still misses nothing', async () => {
    const events = history();
    await events.account(ETHEREUM, 'quiet-1', '0x00000000000000000000000000000000000a01e1');
    const readsFrom: bigint[] = [];
    const recording: EventStore = {
      ...infrastructure.store,
      readAllScanned: (options) => {
        readsFrom.push(options?.afterPosition ?? 0n);
        return infrastructure.store.readAllScanned(options);
      },
    };
    const quiet = follower(false, ETHEREUM, new FollowedEventsReader(recording));
    const busyElsewhere = () =>
      infrastructure.store.appendMany(Array.from({ length: 20 }, () => ({ stream: `busyElsewhere-${randomUUID()}`, expectedRevision: 'no_stream' as const, events: [{ id: randomUUID(), type: 'Busy', data: {}, metadata: meta }] })));
    await quiet.refresh();
    const lastFollowed = quiet.position;
    await busyElsewhere();
    const headBefore = await infrastructure.store.headPosition();
    await quiet.refresh(); // walks the other categories' events once
    await busyElsewhere();
    readsFrom.length = 0;
    await quiet.refresh();
    expect(quiet.position).toBe(lastFollowed);
    expect(readsFrom).toEqual([headBefore]); // not lastFollowed: the twenty events walked before are not walked again
    // a followed event appended later is still read, and the follower knows what one from 0 knows
    await events.account(ETHEREUM, 'quiet-2', '0x00000000000000000000000000000000000a02e1');
    await quiet.refresh();
    expect(quiet.position).toBe(await infrastructure.store.headPosition());
    const fromZero = follower(false, ETHEREUM);
    await fromZero.refresh();
    expect(knowledge(quiet, probes)).toEqual(knowledge(fromZero, probes));
  });

  describe('a chain watcher restarted from its checkpoint, crashed before and after the save', () => {
  let accounts: DepositAccountServices;
  const orgId = randomUUID();
  const lockSessions: WatcherLockSession[] = [];
  const clock = () => new Date();

  beforeAll(() => {
    accounts = { store: infrastructure.store, clock, addresses: createDepositAddressBook(infrastructure.signer!) };
  });
  afterAll(async () => {
    for (const locks of lockSessions) await locks.close();
  });

  const watcher = () => {
    const locks = new WatcherLockSession(infrastructure.databaseTarget, logger);
    lockSessions.push(locks);
    return new ChainWatcher({ gateway: fixture.devnet.gateway(TRON_SHASTA), services: { store: infrastructure.store, clock }, db: infrastructure.db, locks, logger, pollIntervalMs: 20 });
  };
  const address = async (user: string) => (await getOrCreateDepositAccount(accounts, { orgId, chainId: TRON_SHASTA, externalUserId: user }, { actor: 'test' })).account.properties.address;
  const depositEvents = async (type: string) =>
    (await infrastructure.store.readAll({ filter: { categories: ['deposit'] }, maxCount: 10_000 })).filter((event) => event.data.chainId === TRON_SHASTA && event.metadata.orgId === orgId && event.type === type).map((event) => String(event.data.txHash));
  const available = async () => (await loadAggregate(infrastructure.store, streams.ledger(orgId, 'tron:shasta/slip44:195'), ledgerDecider)).state;
  const checkpoint = async () => (await sql<{ position: string }>`select position::text as position from chain_watcher_checkpoints where chain_id = ${TRON_SHASTA}`.execute(infrastructure.db)).rows[0]?.position;

  it('every deposit is recorded once and confirmed once, the ledger exact, whichever side of the save the process dies on', async () => {
    const controls = fixture.devnet.controls(TRON_SHASTA);
    const first = await controls.deposit({ toAddress: await address('first'), asset: 'native', amount: 1_000_000n });
    expect(await watcher().catchUp()).toBe(true);
    const saved = await checkpoint();
    expect(saved).toBeDefined();

    // dies before the save: a new account's deposit recorded, then the cursor cannot move
    const second = await controls.deposit({ toAddress: await address('second'), asset: 'native', amount: 2_000_000n });
    await sql`create function fail_cursor() returns trigger language plpgsql as $$ begin raise exception 'crash before the save'; end $$`.execute(infrastructure.db);
    await sql`create trigger fail_cursor before update on chain_watcher_cursors execute function fail_cursor()`.execute(infrastructure.db);
    try {
      await expect(watcher().catchUp()).rejects.toThrow('crash before the save');
    } finally {
      await sql`drop trigger fail_cursor on chain_watcher_cursors`.execute(infrastructure.db);
      await sql`drop function fail_cursor()`.execute(infrastructure.db);
    }
    expect(await depositEvents('DepositDetected')).toEqual([first.txHash, second.txHash]);
    expect(await checkpoint()).toBe(saved);

    // a new process starts from the old checkpoint: scans the block again, records nothing twice
    await watcher().catchUp();
    expect(await depositEvents('DepositDetected')).toEqual([first.txHash, second.txHash]);
    const savedAfter = await checkpoint();
    expect(BigInt(savedAfter!)).toBeGreaterThan(BigInt(saved!));

    // dies right after the save: the next process starts from it, confirms each deposit once
    const third = await controls.deposit({ toAddress: await address('first'), asset: 'native', amount: 4_000_000n });
    await controls.mine(5);
    await watcher().catchUp();
    await watcher().catchUp();
    expect(await depositEvents('DepositDetected')).toEqual([first.txHash, second.txHash, third.txHash]);
    expect((await depositEvents('DepositConfirmed')).sort()).toEqual([first.txHash, second.txHash, third.txHash].sort());
    expect(await available()).toEqual({ available: 7_000_000n, pending: 0n, held: 0n });
  });
});
});
