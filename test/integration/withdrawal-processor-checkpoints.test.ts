import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devnetDb } from '../../src/chains/devnet/index.js';
import { findChain } from '../../src/catalog/registry.js';
import { nativeToken } from '../../src/catalog/tokens.js';
import { streams } from '../../src/domain/streams.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { awaitingApprovalsOf } from '../../src/processes/withdrawal-processor/awaiting-approvals.js';
import { OpenWithdrawals, readyWithdrawalEvents } from '../../src/processes/withdrawal-processor/open-withdrawals.js';
import { externalAddress, startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';

const ETHEREUM = 'eip155:1';
const XRP = 'xrpl:mainnet';
/** the chain of the followers' own tests, with withdrawals nobody processes */
const XRP_TESTNET = 'xrpl:testnet';
/** another chain nobody processes here, for the shared reader's test */
const SEPOLIA = 'eip155:11155111';
/** the organization of those withdrawals: not the fixture's, whose withdrawals are paid in the last test */
const OTHER_ORG = randomUUID();
const meta = { actor: 'test', at: '2026-11-26T07:00:00.000Z' };

describe('withdrawal processor checkpoints', () => {
  let fixture: ChainWorkerFixture;

  beforeAll(async () => {
    fixture = await startChainWorkerFixture('processor_checkpoints', { projections: 'none' });
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  const open = (chainId: string) => new OpenWithdrawals({ store: fixture.infrastructure.store, chain: findChain(chainId)!, db: fixture.infrastructure.db });
  const checkpoint = async (chainId: string) =>
    (await sql<{ position: string }>`select position::text as position from withdrawal_processor_checkpoints where chain_id = ${chainId}`.execute(fixture.infrastructure.db)).rows[0]?.position;

  /** the events that open a withdrawal or not, appended as the service appends them */
  const history = () => {
    let ready = 0;
    const append = async (id: string, type: string, data: Record<string, unknown>) => {
      await fixture.infrastructure.store.append(streams.withdrawal(id), 'any', [{ id: randomUUID(), type, data: { id, ...data }, metadata: meta }]);
      ready++;
    };
    const requested = async (chainId: string, status: 'Pending' | 'PendingApproval') => {
      const id = randomUUID();
      await append(id, 'WithdrawalRequested', {
        orgId: OTHER_ORG,
        chainId,
        tokenId: nativeToken(chainId).id,
        amount: '5',
        recipient: 'somebody',
        memo: null,
        reference: `ref-${id}`,
        internalNote: '',
        externalUserId: null,
        initiator: fixture.userId,
        minWithdrawalSigners: status === 'Pending' ? 1 : 2,
        status,
        requestedAt: meta.at,
      });
      return id;
    };
    const approved = (id: string, status: 'Pending' | 'PendingApproval') => append(id, 'WithdrawalApproved', { userId: randomUUID(), approvers: ['a', 'b'], status, approvedAt: meta.at });
    const other = (id: string) => append(id, 'WithdrawalBroadcast', { txHash: '0x01', broadcastAt: meta.at });
    return { requested, approved, other, readyEvents: () => ready };
  };

  it('restarted from its checkpoint, the open list is the one followed from 0, in the same order, and only the events after it are read', async () => {
    const events = history();
    const first = await events.requested(ETHEREUM, 'Pending');
    const waiting = await events.requested(ETHEREUM, 'PendingApproval');
    await events.requested(XRP_TESTNET, 'Pending'); // another chain's
    const finishedEarly = await events.requested(ETHEREUM, 'Pending');
    const follower = open(ETHEREUM);
    await follower.follow();
    follower.finish(finishedEarly);
    await follower.saveCheckpoint(new Date());

    // between the saves: an approval to the threshold (opens it, placed where it became Pending), one that does not
    const twoSigners = await events.requested(ETHEREUM, 'PendingApproval');
    await events.approved(twoSigners, 'PendingApproval');
    await events.approved(waiting, 'Pending');
    await events.other(first); // not followed (not a ready event)
    await follower.follow();
    await follower.saveCheckpoint(new Date());
    expect(follower.list().map(([id]) => id)).toEqual([first, waiting]);

    // after the last save
    const before = events.readyEvents();
    const later = await events.requested(ETHEREUM, 'Pending');
    await events.approved(twoSigners, 'Pending');
    await events.requested(XRP_TESTNET, 'Pending');
    const readAfter = events.readyEvents() - before;

    const restarted = open(ETHEREUM);
    await restarted.follow();
    expect(restarted.eventsRead).toBe(readAfter);
    expect(restarted.list()).toEqual([
      [first, OTHER_ORG],
      [waiting, OTHER_ORG],
      [later, OTHER_ORG],
      [twoSigners, OTHER_ORG],
    ]);
    // the one followed all along (and finished one) knows the same
    await follower.follow();
    expect(follower.list()).toEqual(restarted.list());
    expect(follower.eventsRead).toBe(events.readyEvents() - 1);
  });

  /** the fixture's event store, with `spy` called before each call of `method` */
  const storeSpying = (method: 'readStream' | 'readAllScanned', spy: () => void): EventStore => {
    const store = fixture.infrastructure.store;
    return new Proxy(store, {
      get: (target, key) => {
        const value = Reflect.get(target, key, target) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (key === method) spy();
          return (value as (...args: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  };

  it('an approval of a withdrawal it saw requested opens it without reading its stream, on its own chain only', async () => {
    let streamReads = 0;
    const follower = new OpenWithdrawals({ store: storeSpying('readStream', () => streamReads++), chain: findChain(ETHEREUM)!, db: fixture.infrastructure.db });
    await follower.follow();
    const openBefore = follower.list();
    const events = history();
    const mine = await events.requested(ETHEREUM, 'PendingApproval');
    const others = await events.requested(XRP_TESTNET, 'PendingApproval');
    await events.approved(others, 'Pending');
    await events.approved(mine, 'Pending');
    streamReads = 0;
    await follower.follow();
    expect(streamReads).toBe(0);
    expect(follower.list()).toEqual([...openBefore, [mine, OTHER_ORG]]);
    // one that started after the requests reads their streams, and comes to the same list
    const fresh = open(ETHEREUM);
    await fresh.follow();
    expect(fresh.list()).toEqual(follower.list());
  });

  it('a stop request ends a follow between two events; the next follow goes on from the last event applied', async () => {
    const events = history();
    for (let n = 0; n < 3; n++) await events.requested(ETHEREUM, 'Pending');
    const stop = new AbortController();
    stop.abort();
    const stopped = new OpenWithdrawals({ store: storeSpying('readAllScanned', () => undefined), chain: findChain(ETHEREUM)!, db: fixture.infrastructure.db });
    await expect(stopped.follow(stop.signal)).rejects.toThrow();
    expect(stopped.eventsRead).toBe(0);
    // stopped in the middle of a batch: after its first read, before its second event
    const midway = new AbortController();
    let reads = 0;
    const interrupted = new OpenWithdrawals({ store: storeSpying('readAllScanned', () => reads++ === 0 && queueMicrotask(() => midway.abort())), chain: findChain(ETHEREUM)!, db: fixture.infrastructure.db });
    await expect(interrupted.follow(midway.signal)).rejects.toThrow();
    await interrupted.follow();
    const fresh = open(ETHEREUM);
    await fresh.follow();
    expect(interrupted.list()).toEqual(fresh.list());
  });

  it('the processors of a process share one read: each ready event is read once, and each list is the one its own read would give', async () => {
    const events = history();
    await events.requested(ETHEREUM, 'Pending');
    const approvedLater = await events.requested(XRP_TESTNET, 'PendingApproval');
    await events.requested(XRP_TESTNET, 'Pending');
    await events.approved(approvedLater, 'Pending');
    await events.requested(SEPOLIA, 'PendingApproval');
    const reader = readyWithdrawalEvents(fixture.infrastructure.store);
    const chains = [ETHEREUM, XRP_TESTNET, SEPOLIA];
    const shared = chains.map((chainId) => new OpenWithdrawals({ store: fixture.infrastructure.store, chain: findChain(chainId)!, db: fixture.infrastructure.db }, reader));
    // each follows in turn, as each processor's pass does (each from its own checkpoint)
    for (const list of shared) await list.follow();
    for (const [n, chainId] of chains.entries()) {
      const own = open(chainId);
      await own.follow();
      expect(shared[n]!.list()).toEqual(own.list());
      expect(shared[n]!.position).toBe(own.position);
    }
    expect(shared[1]!.list().map(([id]) => id)).toContain(approvedLater);
    // what follows is read once for all of them, by whichever follows first
    const readBefore = reader.eventsRead;
    const later = [await events.requested(ETHEREUM, 'Pending'), await events.requested(XRP_TESTNET, 'Pending'), await events.requested(SEPOLIA, 'Pending')];
    await shared[2]!.follow();
    expect(reader.eventsRead - readBefore).toBe(3);
    await shared[0]!.follow();
    await shared[1]!.follow();
    expect(reader.eventsRead - readBefore).toBe(3);
    for (const [n, id] of later.entries()) expect(shared[n]!.list().map(([open]) => open)).toContain(id);
    expect(shared[0]!.position).toBe(shared[2]!.position);
  });

  it('the processors sharing a read remember a request awaiting approval once: its approval opens it on its chain with no read of its stream, and each then forgets it', async () => {
    const events = history();
    const store = fixture.infrastructure.store;
    const streamsRead: string[] = [];
    const counting: EventStore = Object.create(store, {
      readStream: { value: (stream: string, ...rest: [never?]) => (streamsRead.push(stream), store.readStream(stream, ...rest)) },
    });
    const reader = readyWithdrawalEvents(counting);
    const chains = [ETHEREUM, XRP_TESTNET, SEPOLIA];
    const lists = chains.map((chainId) => new OpenWithdrawals({ store: counting, chain: findChain(chainId)!, db: fixture.infrastructure.db }, reader));
    for (const list of lists) await list.follow();
    const kept = awaitingApprovalsOf(reader);
    const keptBefore = kept.size;
    const awaiting = await events.requested(XRP_TESTNET, 'PendingApproval');
    await lists[0]!.follow(); // one read hands the request to every list
    expect(kept.size).toBe(keptBefore + 1); // once for the three
    await events.approved(awaiting, 'Pending');
    streamsRead.length = 0;
    await lists[2]!.follow();
    expect(lists[1]!.list().map(([id]) => id)).toContain(awaiting);
    expect(lists[0]!.list().map(([id]) => id)).not.toContain(awaiting);
    expect(streamsRead).not.toContain(streams.withdrawal(awaiting));
    // every list took the approval: nothing of it is kept
    expect(kept.size).toBe(keptBefore);
    expect(kept.approved(awaiting)).toBeUndefined();
  });

  it('a save while the shared read is between two events of a batch saves the list as it stood at the last event taken; the rest is saved by the next', async () => {
    const events = history();
    const approvedAfterRestart = await events.requested(ETHEREUM, 'PendingApproval');
    const before = open(ETHEREUM);
    await before.follow();
    await before.saveCheckpoint(new Date());
    // the next batch: an approval this list never saw requested (its stream is read), between two requests
    const first = await events.requested(ETHEREUM, 'Pending');
    await events.approved(approvedAfterRestart, 'Pending');
    const last = await events.requested(ETHEREUM, 'Pending');

    let reachedStreamRead!: () => void;
    const streamRead = new Promise<void>((resolve) => (reachedStreamRead = resolve));
    let releaseStreamRead!: () => void;
    const released = new Promise<void>((resolve) => (releaseStreamRead = resolve));
    const store = fixture.infrastructure.store;
    const gated: EventStore = new Proxy(store, {
      get: (target, key) => {
        const value = Reflect.get(target, key, target) as unknown;
        if (typeof value !== 'function') return value;
        if (key !== 'readStream') return (...args: unknown[]) => (value as (...args: unknown[]) => unknown).apply(target, args);
        return async (...args: unknown[]) => {
          reachedStreamRead();
          await released;
          return (value as (...args: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const restarted = new OpenWithdrawals({ store: gated, chain: findChain(ETHEREUM)!, db: fixture.infrastructure.db });
    const following = restarted.follow();
    await streamRead;
    // the read stands between the first request and the approval: a save now holds the first, at its position
    await restarted.saveCheckpoint(new Date());
    const midway = open(ETHEREUM);
    await midway.follow();
    expect(midway.list().map(([id]) => id)).toEqual(expect.arrayContaining([first, approvedAfterRestart, last]));
    expect(midway.eventsRead).toBe(2);
    releaseStreamRead();
    await following;
    await restarted.saveCheckpoint(new Date());
    const after = open(ETHEREUM);
    await after.follow();
    expect(after.eventsRead).toBe(0);
    expect(after.list()).toEqual(restarted.list());
    expect(after.list().map(([id]) => id).slice(-3)).toEqual([first, approvedAfterRestart, last]);
  });

  it('a save behind the checkpoint writes nothing; a save that dies before its commit leaves the previous one whole', async () => {
    const events = history();
    const behind = open(XRP_TESTNET);
    await behind.follow();
    const opened = await events.requested(XRP_TESTNET, 'Pending');
    const ahead = open(XRP_TESTNET);
    await ahead.follow();
    await ahead.saveCheckpoint(new Date());
    const saved = await checkpoint(XRP_TESTNET);
    behind.finish(opened); // as if it had finished it: nothing of it is written
    await behind.saveCheckpoint(new Date());
    expect(await checkpoint(XRP_TESTNET)).toBe(saved);
    const restarted = open(XRP_TESTNET);
    await restarted.follow();
    expect(restarted.eventsRead).toBe(0);
    expect(restarted.list().map(([id]) => id)).toContain(opened);

    // a save dying inside its transaction, after the position moved
    const another = await events.requested(XRP_TESTNET, 'Pending');
    await ahead.follow();
    await sql`create function fail_processor_checkpoint() returns trigger language plpgsql as $$ begin raise exception 'crash inside the checkpoint'; end $$`.execute(fixture.infrastructure.db);
    await sql`create trigger fail_processor_checkpoint before insert on withdrawal_processor_open execute function fail_processor_checkpoint()`.execute(fixture.infrastructure.db);
    try {
      await expect(ahead.saveCheckpoint(new Date())).rejects.toThrow('crash inside the checkpoint');
    } finally {
      await sql`drop trigger fail_processor_checkpoint on withdrawal_processor_open`.execute(fixture.infrastructure.db);
      await sql`drop function fail_processor_checkpoint()`.execute(fixture.infrastructure.db);
    }
    expect(await checkpoint(XRP_TESTNET)).toBe(saved);
    const again = open(XRP_TESTNET);
    await again.follow();
    expect(again.eventsRead).toBe(1);
    expect(again.list()).toEqual(ahead.list());
    expect(again.list().map(([id]) => id)).toContain(another);
  });

  it('a processor dying before its save or right after it pays each withdrawal once, and the ledger is exact', async () => {
    const token = nativeToken(XRP);
    await fixture.credit(XRP, 'native', 100_000_000n);
    const before = await fixture.ledger(token.id);
    const recipient = externalAddress(XRP);
    const paidOnce = async () => (await devnetDb(fixture.infrastructure.db).selectFrom('devnet_transfers').select(['tx_hash', 'amount']).where('chain_id', '=', XRP).where('to_address', '=', recipient).execute()).length;

    // the first withdrawal is signed, sent and saved in the open list; the process dies right after the save
    const first = await fixture.withdraw({ chainId: XRP, tokenId: token.id, amount: 5_000_000n, recipient });
    await fixture.withdrawalProcessor(XRP).runPass();
    expect(await fixture.withdrawal(first.id)).toMatchObject({ status: 'Processing' });

    // the second is followed (and taken as far as the organization's turn allows), then the process dies before the save
    const second = await fixture.withdraw({ chainId: XRP, tokenId: token.id, amount: 7_000_000n, recipient });
    const saved = await checkpoint(XRP);
    await sql`create function fail_processor_save() returns trigger language plpgsql as $$ begin raise exception 'crash before the save'; end $$`.execute(fixture.infrastructure.db);
    await sql`create trigger fail_processor_save before update on withdrawal_processor_checkpoints execute function fail_processor_save()`.execute(fixture.infrastructure.db);
    try {
      await expect(fixture.withdrawalProcessor(XRP).runPass()).rejects.toThrow('crash before the save');
    } finally {
      await sql`drop trigger fail_processor_save on withdrawal_processor_checkpoints`.execute(fixture.infrastructure.db);
      await sql`drop function fail_processor_save()`.execute(fixture.infrastructure.db);
    }
    expect(await checkpoint(XRP)).toBe(saved);

    // a new process starts from the old checkpoint: both followed to Completed, each paid once
    const restarted = fixture.withdrawalProcessor(XRP);
    const completed = async () => (await fixture.withdrawal(first.id)).status === 'Completed' && (await fixture.withdrawal(second.id)).status === 'Completed';
    for (let pass = 0; pass < 4 && !(await completed()); pass++) {
      await fixture.mineConfirmations(XRP);
      await restarted.runPass();
    }
    const [one, two] = [await fixture.withdrawal(first.id), await fixture.withdrawal(second.id)];
    expect(one).toMatchObject({ status: 'Completed' });
    expect(two).toMatchObject({ status: 'Completed' });
    expect(restarted.open.size).toBe(0);
    expect(await paidOnce()).toBe(2);
    const fees = [one, two].reduce((sum, withdrawal) => sum + (withdrawal.status === 'Completed' ? BigInt(withdrawal.fee ?? 0) : 0n), 0n);
    expect(fees).toBeGreaterThan(0n);
    expect(await fixture.ledger(token.id)).toEqual({ available: before.available - 12_000_000n - fees, pending: 0n, held: 0n });
    // and the next start knows nothing is open
    const next = fixture.withdrawalProcessor(XRP);
    await next.runPass();
    expect(next.open.size).toBe(0);
    expect(next.open.eventsRead).toBe(0);
  });
});
