import type { RecordedEvent, Subscription } from './port.js';

export interface PollingSource {
  /** events strictly after `afterPosition`, in global order, at most `maxCount` */
  read(afterPosition: bigint, maxCount: number): Promise<RecordedEvent[]>;
  /** resolves when new events may exist (a notification or a poll interval) */
  waitForMore(): Promise<void>;
}

/**
 * Catch-up then live, as one loop: read a batch after the last delivered position; when a read
 * comes back empty, wait for a notification and read again. Reads are safe to repeat because the
 * store commits positions in order, so nothing is skipped and nothing is delivered twice.
 */
export const pollingSubscription = (
  source: PollingSource,
  options: { afterPosition: bigint; maxBatchSize: number },
): Subscription => {
  let position = options.afterPosition;
  let closed = false;
  let wakeClosed: () => void = () => undefined;
  const closedSignal = new Promise<void>((resolve) => (wakeClosed = resolve));

  const next = async (): Promise<IteratorResult<RecordedEvent[]>> => {
    while (!closed) {
      const batch = await source.read(position, options.maxBatchSize);
      if (closed) break;
      if (batch.length > 0) {
        position = batch[batch.length - 1]!.position;
        return { value: batch, done: false };
      }
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
