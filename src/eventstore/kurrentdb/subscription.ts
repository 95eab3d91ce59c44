/**
 * Turns the client's $all subscription (a Node Readable of resolved events, one at a time)
 * into the port's Subscription: ordered batches, no duplicates, close() ends everything.
 *
 * Batching: events that have already arrived are delivered together (up to maxBatchSize).
 * When the queue was empty, the first event waits at most `gatherMs` for the rest of its burst;
 * a consumer that is busy finds everything that arrived meanwhile ready on its next call.
 */
import type { AllStreamResolvedEvent, AllStreamSubscription } from '@kurrent/kurrentdb-client';
import { EventStoreUnavailableError } from '../errors.js';
import type { RecordedEvent, Subscription } from '../port.js';
import { positionOf, toPortError, toRecordedEvent } from './mapping.js';

export interface BatchingSubscriptionOptions {
  source: AllStreamSubscription;
  /** exclusive: events at or before it are skipped (the server may start at it) */
  afterPosition: bigint | undefined;
  accept: (event: RecordedEvent) => boolean;
  maxBatchSize: number;
  /** how long the first event of a burst waits for the rest of it */
  gatherMs: number;
  onClose: () => void;
}

interface Waiter {
  resolve: (result: IteratorResult<RecordedEvent[]>) => void;
  reject: (error: Error) => void;
}

export const createBatchingSubscription = (options: BatchingSubscriptionOptions): Subscription => {
  const { source, accept, maxBatchSize, gatherMs, onClose } = options;
  const highWater = maxBatchSize * 4;
  const queue: RecordedEvent[] = [];
  const waiters: Waiter[] = [];
  let cursor = options.afterPosition ?? -1n;
  let ready = false;
  let timer: NodeJS.Timeout | undefined;
  let paused = false;
  let closed = false;
  /** the source stopped (error, or ended without close()); delivered after the queue drains */
  let failure: Error | undefined;
  let closing: Promise<void> | undefined;

  const done = (): IteratorResult<RecordedEvent[]> => ({ done: true, value: undefined });

  const takeBatch = (): RecordedEvent[] => {
    const batch = queue.splice(0, maxBatchSize);
    if (queue.length === 0) ready = false;
    if (paused && queue.length < maxBatchSize) {
      paused = false;
      source.resume();
    }
    return batch;
  };

  const serve = (): void => {
    while (waiters.length > 0) {
      if (closed) {
        waiters.shift()?.resolve(done());
      } else if (queue.length > 0 && (ready || failure)) {
        waiters.shift()?.resolve({ done: false, value: takeBatch() });
      } else if (failure) {
        const error = failure;
        closed = true;
        void shutdown();
        waiters.shift()?.reject(error);
      } else {
        return;
      }
    }
  };

  const markReady = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    ready = true;
    serve();
  };

  const onData = (resolved: AllStreamResolvedEvent): void => {
    if (closed) return;
    const position = positionOf(resolved);
    // $all is delivered in position order; anything at or before the cursor is the start
    // position itself or a duplicate, and is never delivered twice.
    if (position === undefined || position <= cursor) return;
    cursor = position;
    const event = toRecordedEvent(resolved);
    if (!event || !accept(event)) return;
    queue.push(event);
    if (queue.length >= maxBatchSize) {
      markReady();
    } else if (!ready && !timer) {
      timer = setTimeout(markReady, gatherMs);
    }
    if (!paused && queue.length >= highWater) {
      paused = true;
      source.pause();
    }
  };

  const fail = (error: Error): void => {
    if (closed || failure) return;
    failure = error;
    markReady();
  };

  const onError = (error: unknown): void => fail(toPortError(error, { operation: 'subscription to $all' }));
  const onEnd = (): void => fail(new EventStoreUnavailableError('KurrentDB ended the subscription to $all'));

  source.on('data', onData);
  source.on('error', onError);
  source.on('end', onEnd);
  source.on('close', onEnd);

  const shutdown = (): Promise<void> => {
    closing ??= (async () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      queue.length = 0;
      source.off('data', onData);
      // keep an error listener: an 'error' without one would crash the process
      source.off('error', onError);
      source.on('error', () => undefined);
      try {
        await source.unsubscribe();
      } catch {
        // already gone
      }
      onClose();
    })();
    return closing;
  };

  const close = async (): Promise<void> => {
    closed = true;
    serve();
    await shutdown();
  };

  const iterator: AsyncIterator<RecordedEvent[]> = {
    next: () =>
      new Promise<IteratorResult<RecordedEvent[]>>((resolve, reject) => {
        waiters.push({ resolve, reject });
        serve();
      }),
    return: async () => {
      await close();
      return done();
    },
  };

  return {
    [Symbol.asyncIterator]: () => iterator,
    close,
  };
};
