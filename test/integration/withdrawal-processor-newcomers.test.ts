import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeToken } from '../../src/catalog/tokens.js';
import { applicationName } from '../../src/db/application-name.js';
import { streams } from '../../src/domain/streams.js';
import type { WithdrawalRecord } from '../../src/domain/withdrawal/withdrawal.js';
import type { EventStore, StreamAppend } from '../../src/eventstore/port.js';
import { WithdrawalProcessor } from '../../src/processes/withdrawal-processor/index.js';
import { externalAddress, startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';
import { waitUntil } from '../support/webhook-receiver.js';

const XRP = 'xrpl:mainnet';

/**
 * The withdrawal processor's book of what is in flight learns a withdrawal it has not seen by
 * reading its stream, unless the withdrawal became ready after the processor took the chain's lock:
 * no other processor can have recorded a transaction for it. A successor that takes the lock after
 * a processor died between recording a transaction and sending it still reads that withdrawal.
 * What is read is counted through a store that tells its reads; what happens when is forced (a
 * processor's state, a fault), never timed.
 */
describe('the withdrawal processor reads a withdrawal it has not seen only when a processor before it may have recorded a transaction for it', () => {
  let fixture: ChainWorkerFixture;

  beforeAll(async () => {
    fixture = await startChainWorkerFixture('withdrawal_processor_newcomers', { projections: 'none' });
    await fixture.credit(XRP, 'native', 10n ** 12n); // XRP pays from the organization's deposit address itself
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  const withdraw = async () => fixture.withdraw({ chainId: XRP, tokenId: nativeToken(XRP).id, amount: BigInt(nativeToken(XRP).properties.minimumWithdrawal), recipient: externalAddress(XRP) });

  const record = async (id: string): Promise<WithdrawalRecord> => {
    const state = await fixture.withdrawal(id);
    if (state.status === 'None') throw new Error(`no withdrawal ${id}`);
    return state;
  };

  /**
   * The real store, counting each withdrawal stream's reads made before the processor's first
   * append to it (the reads an append's own decision makes, in the ledger's queue, are the append's,
   * not counted). The ledger's queue appends one batch through the store of one of its decisions: a
   * withdrawal requested beside the processor's step can land in a batch appended through this
   * store, and that append is the requester's, not the processor's.
   */
  const storeCountingReads = () => {
    const reads = new Map<string, number>();
    const appended = new Set<string>();
    const appending = (appends: readonly Pick<StreamAppend, 'stream' | 'events'>[]) => {
      for (const { stream, events } of appends) if (events.some((event) => String(event.metadata.actor).startsWith('withdrawal-processor:'))) appended.add(stream);
    };
    const store = new Proxy(fixture.infrastructure.store, {
      get: (target, property, receiver) => {
        if (property === 'readStream')
          return (stream: string, options?: Parameters<EventStore['readStream']>[1]) => {
            if (!appended.has(stream) && !new Error().stack?.includes('ledger-batches')) reads.set(stream, (reads.get(stream) ?? 0) + 1);
            return target.readStream(stream, options);
          };
        if (property === 'append')
          return (stream: string, ...rest: Parameters<EventStore['append']> extends [string, ...infer Rest] ? Rest : never) => {
            appending([{ stream, events: rest[1] }]);
            return target.append(stream, ...rest);
          };
        if (property === 'appendMany')
          return (appends: StreamAppend[]) => {
            appending(appends);
            return target.appendMany(appends);
          };
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    return { store, readsBeforeFirstAppend: (id: string) => reads.get(streams.withdrawal(id)) ?? 0 };
  };

  it('one that became ready before the lock was taken is read before its first step; one that became ready after it is not', async () => {
    const before = await withdraw();
    const counting = storeCountingReads();
    const processor = fixture.withdrawalProcessor(XRP, { store: counting.store });
    processor.start();
    try {
      // running: the lock is taken and the store's head read; what becomes ready from here on joins the list marked
      await waitUntil(() => processor.state === 'running', 30_000, 'the processor to take the lock');
      const after = await withdraw();
      await waitUntil(async () => (await record(after.id)).status === 'Processing', 30_000, 'the later withdrawal sent');
      await waitUntil(async () => (await record(before.id)).status === 'Processing', 30_000, 'the earlier withdrawal sent');
      // the earlier one: read by the book, then by its step; the later one: by its step only
      expect(counting.readsBeforeFirstAppend(before.id)).toBe(2);
      expect(counting.readsBeforeFirstAppend(after.id)).toBe(1);
    } finally {
      await processor.stop();
    }
  });

  it('a processor that dies between recording a withdrawal’s transaction and sending it: the successor that takes the lock reads that withdrawal before its first step, and sends the recorded bytes', async () => {
    let crashed = false;
    const predecessorCounting = storeCountingReads();
    const predecessor = fixture.withdrawalProcessor(XRP, {
      store: predecessorCounting.store,
      faults: {
        // the process dies right after the transaction is recorded: it stops, nothing of it sent
        afterRecord: (type: string) => {
          if (type !== 'WithdrawalTransactionSigned') return;
          crashed = true;
          void predecessor.stop();
          throw new Error('crash');
        },
      },
    });
    predecessor.start();
    await waitUntil(() => predecessor.state === 'running', 30_000, 'the predecessor to take the lock');
    // ready after the predecessor took the lock: it signs and records it without a read of its own book
    const created = await withdraw();
    await waitUntil(() => crashed, 30_000, 'the predecessor to record the transaction');
    await predecessor.stop();
    expect(predecessorCounting.readsBeforeFirstAppend(created.id)).toBe(1);
    const recorded = (await record(created.id)).signedTransaction!;
    expect(recorded).not.toBeNull();
    expect(await fixture.devnet.gateway(XRP).transactionStatus(recorded.txHash)).toEqual({ status: 'not_found' });

    // it died before its list was saved: the successor follows the events from the start, so the withdrawal joins its list by its ready event
    await sql`delete from withdrawal_processor_open where chain_id = ${XRP}`.execute(fixture.infrastructure.db);
    await sql`delete from withdrawal_processor_checkpoints where chain_id = ${XRP}`.execute(fixture.infrastructure.db);
    // the successor: the withdrawal became ready before it took the lock, so its book reads it (a recorded sequence it must not take again)
    const successorCounting = storeCountingReads();
    const successor = fixture.withdrawalProcessor(XRP, { store: successorCounting.store });
    await successor.runPass();
    expect(successorCounting.readsBeforeFirstAppend(created.id)).toBe(2);
    const sent = await record(created.id);
    expect(sent).toMatchObject({ status: 'Processing', signedTransaction: recorded });
    expect(await fixture.devnet.gateway(XRP).transactionStatus(recorded.txHash)).toMatchObject({ status: 'pending' });
  });

  it('a processor whose lock session the server ended works no further under that lock: the tenure ends, and the lock is taken again as a new one', async () => {
    class CountingTenures extends WithdrawalProcessor {
      tenures = 0;
      protected override async lockTaken(): Promise<void> {
        this.tenures++;
        await super.lockTaken();
      }
    }
    const processor = new CountingTenures({ services: fixture.workerServices(XRP), database: fixture.infrastructure.databaseTarget, failureDelayMs: () => 0, pollMs: 50 });
    processor.start();
    try {
      await waitUntil(() => processor.tenures === 1 && processor.state === 'running', 30_000, 'the processor to take the lock');
      // the lock's session ends (an operator, a server restart): a standby could take the lock at once
      const ended = await sql<{ ended: boolean }>`select pg_terminate_backend(pid) as ended from pg_stat_activity
        where datname = current_database() and application_name = ${applicationName(`withdrawal-processor:${XRP}`)}`.execute(fixture.infrastructure.db);
      expect(ended.rows).toEqual([{ ended: true }]);
      await waitUntil(() => processor.tenures >= 2 && processor.state === 'running', 30_000, 'a new tenure');
      // and it works under the new lock: a withdrawal that becomes ready now is sent
      const created = await withdraw();
      await waitUntil(async () => (await record(created.id)).status === 'Processing', 30_000, 'the withdrawal sent');
    } finally {
      await processor.stop();
    }
  });
});
