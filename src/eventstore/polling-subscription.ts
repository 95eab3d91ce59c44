import type { EventWithoutMetadata, ScannedRead, Subscription } from './port.js';

export interface PollingSource<Event extends EventWithoutMetadata> {
  /** the events the subscription takes strictly after `afterPosition`, in global order, at most `maxCount`, and how far the read looked (the port's readAllScanned) */
  read(afterPosition: bigint, maxCount: number): Promise<ScannedRead<Event>>;
  /** resolves when new events may exist (a notification or a poll interval) */
  waitForMore(): Promise<void>;
}

/**
 * Catch-up then live, as one loop: read a batch after the last delivered position; when a read
 * comes back empty, wait for a notification and read again. Reads are safe to repeat because the
 * store commits positions in order, so nothing is skipped and nothing is delivered twice. The next
 * read starts where the last read said it had seen everything (its last event, or further on when
 * it was cut short): a subscription to quiet categories does not walk again, at every read, what the
 * busy ones appended since its last event.
 */
export const pollingSubscription = <Event extends EventWithoutMetadata>(
  source: PollingSource<Event>,
  options: { afterPosition: bigint; maxBatchSize: number },
): Subscription<Event> => {
  let position = options.afterPosition;
  let closed = false;
  let wakeClosed: () => void = () => undefined;
  const closedSignal = new Promise<void>((resolve) => (wakeClosed = resolve));

  const next = async (): Promise<IteratorResult<Event[]>> => {
    while (!closed) {
      const { events: batch, scannedTo } = await source.read(position, options.maxBatchSize);
      if (closed) break;
      if (batch.length > 0) position = batch[batch.length - 1]!.position;
      if (scannedTo > position) position = scannedTo;
      if (batch.length > 0) return { value: batch, done: false };
      await Promise.race([source.waitForMore(), closedSignal]);
    }
    return { value: undefined, done: true };
  };

  const close = async () => {
    closed = true;
    wakeClosed();
  };

  return {
    close,
    [Symbol.asyncIterator]: () => ({
      next,
      return: async () => {
        await close();
        return { value: undefined, done: true };
      },
    }),
  };
};
