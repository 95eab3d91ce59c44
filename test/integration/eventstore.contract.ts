import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuplicateEventIdError, InvalidAppendError, WrongExpectedRevisionError } from '../../src/eventstore/errors.js';
import type { EventStore, RecordedEvent } from '../../src/eventstore/port.js';
import { newEvent, newEvents, uniqueCategory } from '../support/events.js';

export interface ContractSubject {
  store: EventStore;
  teardown(): Promise<void>;
}

/** What an adapter guarantees beyond the port's minimum, declared so the suite says what it skips. */
export interface AdapterCapabilities {
  /** an event id stored in one stream is refused in any other (PostgreSQL: a unique index) */
  uniqueEventIdsAcrossStreams: boolean;
}

const collect = async (store: EventStore, category: string, count: number, afterPosition = 0n): Promise<RecordedEvent[]> => {
  const seen: RecordedEvent[] = [];
  const subscription = store.subscribeToAll({ afterPosition, filter: { categories: [category] }, maxBatchSize: 250 });
  for await (const batch of subscription) {
    seen.push(...batch);
    if (seen.length >= count) break;
  }
  await subscription.close();
  return seen;
};

const expectStrictlyIncreasing = (events: RecordedEvent[]) => {
  for (let index = 1; index < events.length; index++) {
    expect(events[index]!.position > events[index - 1]!.position).toBe(true);
  }
};

/**
 * One contract, every adapter. Tests isolate themselves by stream category, so the store may be
 * shared with other suites (as KurrentDB's $all is).
 */
export const describeEventStoreContract = (
  name: string,
  setup: () => Promise<ContractSubject>,
  capabilities: AdapterCapabilities = { uniqueEventIdsAcrossStreams: true },
) => {
  describe(`event store contract: ${name}`, () => {
    let subject: ContractSubject;
    let store: EventStore;
    beforeAll(async () => {
      subject = await setup();
      store = subject.store;
    });
    afterAll(async () => subject?.teardown());

    it('appends to a new stream and reads it forwards and backwards, with revisions from 0', async () => {
      const stream = `${uniqueCategory()}-1`;
      const events = newEvents(5);
      const result = await store.append(stream, 'no_stream', events);
      expect(result.streams).toEqual([{ stream, revision: 4n }]);
      const forwards = await store.readStream(stream);
      expect(forwards.map((event) => event.id)).toEqual(events.map((event) => event.id));
      expect(forwards.map((event) => event.revision)).toEqual([0n, 1n, 2n, 3n, 4n]);
      expect(forwards[4]!.position).toBe(result.position);
      expect(forwards[0]!.data).toEqual({ index: 0 });
      expect(forwards[0]!.metadata).toEqual(events[0]!.metadata);
      expect(forwards[0]!.stream).toBe(stream);
      expect(forwards[0]!.recordedAt).toBeInstanceOf(Date);
      const backwards = await store.readStream(stream, { direction: 'backwards', fromRevision: 3n, maxCount: 2 });
      expect(backwards.map((event) => event.revision)).toEqual([3n, 2n]);
      const fromTwo = await store.readStream(stream, { fromRevision: 2n, maxCount: 2 });
      expect(fromTwo.map((event) => event.revision)).toEqual([2n, 3n]);
      const lastOnly = await store.readStream(stream, { direction: 'backwards', maxCount: 1 });
      expect(lastOnly.map((event) => event.revision)).toEqual([4n]);
      expect(await store.streamRevision(stream)).toBe(4n);
    });

    it('reads an unknown stream as empty, with no revision', async () => {
      const stream = `${uniqueCategory()}-missing`;
      expect(await store.readStream(stream)).toEqual([]);
      expect(await store.streamRevision(stream)).toBeNull();
    });

    it('reads the revisions of several streams at once, in the order asked, none for a stream without events', async () => {
      const category = uniqueCategory();
      const [one, three, missing] = [`${category}-one`, `${category}-three`, `${category}-missing`];
      await store.append(one, 'no_stream', [newEvent()]);
      await store.append(three, 'no_stream', newEvents(3));
      expect(await store.streamRevisions([three, missing, one, three])).toEqual([2n, null, 0n, 2n]);
      expect(await store.streamRevisions([])).toEqual([]);
      // a refused append leaves no trace: the stream still has no revision
      await expect(store.append(missing, 0n, [newEvent()])).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      expect(await store.streamRevisions([missing])).toEqual([null]);
    });

    it('enforces every kind of expected revision', async () => {
      const stream = `${uniqueCategory()}-1`;
      await expect(store.append(stream, 'stream_exists', [newEvent()])).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      await expect(store.append(stream, 0n, [newEvent()])).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      await store.append(stream, 'no_stream', [newEvent()]);
      const noStream = await store.append(stream, 'no_stream', [newEvent()]).catch((error: unknown) => error);
      expect(noStream).toBeInstanceOf(WrongExpectedRevisionError);
      expect(noStream).toMatchObject({ stream, expected: 'no_stream', actual: 0n });
      await expect(store.append(stream, 5n, [newEvent()])).rejects.toMatchObject({ stream, expected: 5n, actual: 0n });
      expect((await store.append(stream, 0n, [newEvent()])).streams[0]!.revision).toBe(1n);
      expect((await store.append(stream, 'stream_exists', [newEvent()])).streams[0]!.revision).toBe(2n);
      expect((await store.append(stream, 'any', [newEvent()])).streams[0]!.revision).toBe(3n);
      const fresh = `${uniqueCategory()}-1`;
      expect((await store.append(fresh, 'any', [newEvent()])).streams[0]!.revision).toBe(0n);
      expect(await store.streamRevision(stream)).toBe(3n);
    });

    it('lets exactly one of 50 concurrent appends with the same expected revision succeed', async () => {
      const stream = `${uniqueCategory()}-race`;
      await store.append(stream, 'no_stream', [newEvent()]);
      const outcomes = await Promise.allSettled(
        Array.from({ length: 50 }, (_, index) => store.append(stream, 0n, [newEvent('Raced', { index })])),
      );
      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      const lost = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(49);
      for (const outcome of lost) expect(outcome.reason).toBeInstanceOf(WrongExpectedRevisionError);
      const events = await store.readStream(stream);
      expect(events.map((event) => event.revision)).toEqual([0n, 1n]);
    });

    it('creates a stream once when 50 writers race with no_stream', async () => {
      const stream = `${uniqueCategory()}-create`;
      const outcomes = await Promise.allSettled(Array.from({ length: 50 }, () => store.append(stream, 'no_stream', [newEvent()])));
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      expect(await store.readStream(stream)).toHaveLength(1);
    });

    it('appends to several streams atomically', async () => {
      const category = uniqueCategory();
      const [a, b, c] = [`${category}-a`, `${category}-b`, `${category}-c`];
      await store.append(b, 'no_stream', [newEvent()]);
      const result = await store.appendMany([
        { stream: a, expectedRevision: 'no_stream', events: newEvents(2) },
        { stream: b, expectedRevision: 0n, events: newEvents(1) },
      ]);
      expect(result.streams).toEqual([
        { stream: a, revision: 1n },
        { stream: b, revision: 1n },
      ]);
      const written = await store.readAll({ afterPosition: (await store.readStream(b))[0]!.position, filter: { categories: [category] } });
      expect(written.map((event) => [event.stream, event.revision])).toEqual([
        [a, 0n],
        [a, 1n],
        [b, 1n],
      ]);
      expect(written[2]!.position).toBe(result.position);
      const conflict = store.appendMany([
        { stream: a, expectedRevision: 1n, events: newEvents(1) },
        { stream: c, expectedRevision: 'no_stream', events: newEvents(3) },
        { stream: b, expectedRevision: 0n, events: newEvents(1) },
      ]);
      await expect(conflict).rejects.toMatchObject({ stream: b, expected: 0n, actual: 1n });
      expect(await store.readStream(a)).toHaveLength(2);
      expect(await store.readStream(b)).toHaveLength(2);
      expect(await store.readStream(c)).toEqual([]);
      expect(await store.streamRevision(c)).toBeNull();
    });

    it('checks a stream given no events at its revision, atomically with the streams written, and writes nothing to it', async () => {
      const category = uniqueCategory();
      const [written, checked, unborn] = [`${category}-written`, `${category}-checked`, `${category}-unborn`];
      await store.append(checked, 'no_stream', newEvents(2));
      const result = await store.appendMany([
        { stream: written, expectedRevision: 'no_stream', events: newEvents(1) },
        { stream: checked, expectedRevision: 1n, events: [] },
        { stream: unborn, expectedRevision: 'no_stream', events: [] },
      ]);
      expect(result.streams).toEqual([
        { stream: written, revision: 0n },
        { stream: checked, revision: 1n },
        { stream: unborn, revision: -1n },
      ]);
      expect(await store.streamRevisions([written, checked, unborn])).toEqual([0n, 1n, null]);
      expect(await store.readStream(unborn)).toEqual([]);

      // a checked stream that moved refuses the whole append
      for (const check of [
        { stream: checked, expectedRevision: 0n },
        { stream: written, expectedRevision: 'no_stream' as const },
      ]) {
        const refused = store.appendMany([{ stream: `${category}-never`, expectedRevision: 'no_stream', events: newEvents(1) }, { ...check, events: [] }]);
        await expect(refused).rejects.toBeInstanceOf(WrongExpectedRevisionError);
        await expect(refused).rejects.toMatchObject({ stream: check.stream });
      }
      expect(await store.streamRevisions([`${category}-never`, checked, written])).toEqual([null, 1n, 0n]);

      // nothing but checks, or a check of no exact revision: refused before anything is asked
      await expect(store.appendMany([{ stream: checked, expectedRevision: 1n, events: [] }])).rejects.toBeInstanceOf(InvalidAppendError);
      await expect(store.appendMany([{ stream: written, expectedRevision: 0n, events: newEvents(1) }, { stream: checked, expectedRevision: 'any', events: [] }])).rejects.toBeInstanceOf(InvalidAppendError);
      expect(await store.streamRevision(written)).toBe(0n);
    });

    it('treats re-appending the same event ids as a no-op', async () => {
      const stream = `${uniqueCategory()}-idem`;
      const events = newEvents(3);
      const first = await store.append(stream, 'no_stream', events);
      const again = await store.append(stream, 'no_stream', events);
      expect(again).toEqual(first);
      const anyAgain = await store.append(stream, 'any', events);
      expect(anyAgain.streams).toEqual(first.streams);
      expect(await store.readStream(stream)).toHaveLength(3);
    });

    it.skipIf(!capabilities.uniqueEventIdsAcrossStreams)(
      `refuses an event id already stored in another stream${capabilities.uniqueEventIdsAcrossStreams ? '' : ' (not offered: no global event-id index)'}`,
      async () => {
      const category = uniqueCategory();
      const event = newEvent();
      await store.append(`${category}-1`, 'no_stream', [event]);
      await expect(store.append(`${category}-2`, 'no_stream', [event])).rejects.toBeInstanceOf(DuplicateEventIdError);
      expect(await store.readStream(`${category}-2`)).toEqual([]);
      },
    );

    it('refuses malformed appends and writes nothing', async () => {
      const stream = `${uniqueCategory()}-bad`;
      await expect(store.append(stream, 'any', [])).rejects.toBeInstanceOf(InvalidAppendError);
      await expect(store.append(stream, 'any', [{ ...newEvent(), id: 'not-a-uuid' }])).rejects.toBeInstanceOf(InvalidAppendError);
      const twice = newEvent();
      await expect(store.append(stream, 'any', [twice, twice])).rejects.toBeInstanceOf(InvalidAppendError);
      await expect(
        store.appendMany([
          { stream, expectedRevision: 'any', events: newEvents(1) },
          { stream, expectedRevision: 'any', events: newEvents(1) },
        ]),
      ).rejects.toBeInstanceOf(InvalidAppendError);
      expect(await store.readStream(stream)).toEqual([]);
    });

    /** x: Opened, Closed in category one; y: Opened in two; z: Opened in one. Answers the head before them. */
    const appendToTwoCategories = async () => {
      const [one, two] = [uniqueCategory(), uniqueCategory()];
      const before = await store.headPosition();
      await store.append(`${one}-x`, 'no_stream', [newEvent('Opened'), newEvent('Closed')]);
      await store.append(`${two}-y`, 'no_stream', [newEvent('Opened')]);
      await store.append(`${one}-z`, 'no_stream', [newEvent('Opened')]);
      return { one, two, before };
    };

    it('reads all events after a position, filtered by category and type', async () => {
      const { one, two, before } = await appendToTwoCategories();
      const head = await store.headPosition();
      expect(head > before).toBe(true);
      const ofOne = await store.readAll({ afterPosition: before, filter: { categories: [one] } });
      expect(ofOne.map((event) => `${event.stream}:${event.type}`)).toEqual([`${one}-x:Opened`, `${one}-x:Closed`, `${one}-z:Opened`]);
      expectStrictlyIncreasing(ofOne);
      const opened = await store.readAll({ afterPosition: before, filter: { categories: [one, two], types: ['Opened'] } });
      expect(opened.map((event) => event.stream)).toEqual([`${one}-x`, `${two}-y`, `${one}-z`]);
      // several categories merged in position order, cut at maxCount
      const firstTwo = await store.readAll({ afterPosition: before, maxCount: 2, filter: { categories: [two, one] } });
      expect(firstTwo.map((event) => `${event.stream}:${event.type}`)).toEqual([`${one}-x:Opened`, `${one}-x:Closed`]);
      const nextTwo = await store.readAll({ afterPosition: firstTwo[1]!.position, maxCount: 2, filter: { categories: [two, one] } });
      expect(nextTwo.map((event) => event.stream)).toEqual([`${two}-y`, `${one}-z`]);
      const afterFirst = await store.readAll({ afterPosition: ofOne[0]!.position, maxCount: 1, filter: { categories: [one] } });
      expect(afterFirst.map((event) => event.type)).toEqual(['Closed']);
      expect((await store.readAll({ afterPosition: head })).filter((event) => [one, two].some((c) => event.stream.startsWith(`${c}-`)))).toEqual([]);
    });

    it('answers how far a read looked: a full read its last event, one cut short at least its last event and never less than where it began', async () => {
      const [one, two] = [uniqueCategory(), uniqueCategory()];
      const before = await store.headPosition();
      await store.append(`${one}-x`, 'no_stream', [newEvent('Opened')]);
      await store.append(`${two}-y`, 'no_stream', newEvents(3));
      await store.append(`${one}-x`, 0n, [newEvent('Closed')]);
      const full = await store.readAllScanned({ afterPosition: before, maxCount: 1, filter: { categories: [one] } });
      expect(full.events.map((event) => event.type)).toEqual(['Opened']);
      expect(full.scannedTo).toBe(full.events[0]!.position);
      // reading on from where it looked: the rest, nothing twice, and the same events readAll finds
      const rest = await store.readAllScanned({ afterPosition: full.scannedTo, maxCount: 10, filter: { categories: [one] } });
      expect(rest.events.map((event) => event.type)).toEqual(['Closed']);
      expect(rest.scannedTo >= rest.events[0]!.position).toBe(true);
      expect(await store.readAll({ afterPosition: before, maxCount: 10, filter: { categories: [one] } })).toEqual([...full.events, ...rest.events]);
      // nothing it takes lies between its last event and where it says it looked
      expect(await store.readAll({ afterPosition: rest.events[0]!.position, maxCount: 10, filter: { categories: [one] } })).toEqual([]);
      const empty = await store.readAllScanned({ afterPosition: rest.scannedTo, maxCount: 10, filter: { categories: [one] } });
      expect(empty.events).toEqual([]);
      expect(empty.scannedTo >= rest.scannedTo).toBe(true);
      // a read of every event cut short has looked at least to the head as it was before the read
      const head = await store.headPosition();
      const all = await store.readAllScanned({ afterPosition: before, maxCount: 10_000 });
      expect(all.events.length < 10_000).toBe(true);
      expect(all.scannedTo >= head).toBe(true);
    });

    it('reads the bodies of the events readAll reads: the same events, in the same order, without metadata and recorded time', async () => {
      const { one, two, before } = await appendToTwoCategories();
      for (const options of [
        { afterPosition: before, filter: { categories: [one] } },
        { afterPosition: before, filter: { categories: [one, two], types: ['Opened'] } },
        { afterPosition: before, maxCount: 2, filter: { categories: [two, one] } },
        { afterPosition: before, maxCount: 3 },
      ]) {
        const whole = await store.readAll(options);
        const bodies = await store.readAllBodies(options);
        expect(whole.length).toBeGreaterThan(0);
        expect(bodies).toEqual(whole.map(({ id, stream, revision, position, type, data }) => expect.objectContaining({ id, stream, revision, position, type, data })));
      }
    });

    it('reads and subscribes without metadata: the same events, in the same order, as far, with everything but their metadata', async () => {
      const { one, two, before } = await appendToTwoCategories();
      const withoutMetadata = (events: RecordedEvent[]) => events.map(({ id, stream, revision, position, type, data, recordedAt }) => expect.objectContaining({ id, stream, revision, position, type, data, recordedAt }));
      for (const options of [
        { afterPosition: before, filter: { categories: [one] } },
        { afterPosition: before, filter: { categories: [one, two], types: ['Opened'] } },
        { afterPosition: before, maxCount: 2, filter: { categories: [two, one] } },
      ]) {
        const whole = await store.readAllScanned(options);
        const lean = await store.readAllScanned({ ...options, metadata: false });
        expect(whole.events.length).toBeGreaterThan(0);
        expect(lean.events).toEqual(withoutMetadata(whole.events));
        expect(lean.scannedTo >= whole.scannedTo).toBe(true);
      }
      const whole = await store.readAll({ afterPosition: before, filter: { categories: [one, two] } });
      const subscription = store.subscribeToAll({ afterPosition: before, filter: { categories: [one, two] }, maxBatchSize: 2, metadata: false });
      const delivered = [];
      for await (const batch of subscription) {
        delivered.push(...batch);
        if (delivered.length >= whole.length) break;
      }
      await subscription.close();
      expect(delivered).toEqual(withoutMetadata(whole));
    });

    it('delivers every event exactly once, in global order, to a subscriber racing 8 writers (10,000 events)', async () => {
      const category = uniqueCategory('race');
      const total = 10_000;
      const writers = 8;
      const perWriter = total / writers;
      const streams = Array.from({ length: 16 }, (_, index) => `${category}-${index}`);
      const written = new Set<string>();
      const seenPromise = collect(store, category, total);
      const write = async (writer: number) => {
        let remaining = perWriter;
        let round = 0;
        while (remaining > 0) {
          const size = Math.min(remaining, 1 + ((writer + round) % 10));
          const events = newEvents(size);
          const first = streams[(writer * 7 + round) % streams.length]!;
          const second = streams[(writer * 3 + round * 5 + 1) % streams.length]!;
          if (round % 4 === 0 && size > 1 && first !== second) {
            const half = Math.floor(size / 2);
            await store.appendMany([
              { stream: first, expectedRevision: 'any', events: events.slice(0, half) },
              { stream: second, expectedRevision: 'any', events: events.slice(half) },
            ]);
          } else {
            await store.append(first, 'any', events);
          }
          for (const event of events) written.add(event.id);
          remaining -= size;
          round++;
        }
      };
      await Promise.all(Array.from({ length: writers }, (_, writer) => write(writer)));
      const seen = await seenPromise;
      expect(seen).toHaveLength(total);
      expect(new Set(seen.map((event) => event.id)).size).toBe(total);
      expect(seen.every((event) => written.has(event.id))).toBe(true);
      expectStrictlyIncreasing(seen);
      for (const stream of streams) {
        const revisions = seen.filter((event) => event.stream === stream).map((event) => event.revision);
        expect(revisions).toEqual(revisions.map((_, index) => BigInt(index)));
      }
    });

    it('resumes a subscription from its checkpoint with no gap and no repeat', async () => {
      const category = uniqueCategory();
      const stream = `${category}-1`;
      await store.append(stream, 'no_stream', newEvents(30));
      const firstRun = await collect(store, category, 10);
      const checkpoint = firstRun[9]!.position;
      const appending = store.append(stream, 29n, newEvents(20));
      const secondRun = await collect(store, category, 40, checkpoint);
      await appending;
      expect(secondRun.map((event) => event.revision)).toEqual(Array.from({ length: 40 }, (_, index) => BigInt(index + 10)));
      expectStrictlyIncreasing([firstRun[9]!, ...secondRun]);
    });

    it('wakes a live subscriber when an event is appended later', async () => {
      const category = uniqueCategory();
      const seen = collect(store, category, 1, await store.headPosition());
      await new Promise((resolve) => setTimeout(resolve, 50));
      const { position } = await store.append(`${category}-1`, 'no_stream', [newEvent('Late')]);
      const [event] = await seen;
      expect(event).toMatchObject({ type: 'Late', position });
    });

    it('ends a pending subscription iteration on close', async () => {
      const subscription = store.subscribeToAll({ afterPosition: await store.headPosition(), filter: { categories: [uniqueCategory()] } });
      const iterator = subscription[Symbol.asyncIterator]();
      const pending = iterator.next();
      await subscription.close();
      expect(await pending).toEqual({ value: undefined, done: true });
    });

    it('answers a ping', async () => {
      expect(await store.ping()).toBe(true);
    });
  });
};
