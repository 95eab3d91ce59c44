export interface CoalescerOptions {
  /** at most this many requests in one batch (default 1,000) */
  maxBatch?: number;
  /**
   * After a batch is answered, let the answered callers run (the rest of this turn of the event
   * loop) before the next batch goes out, so a caller that asks again at once joins it instead of
   * going out alone ahead of the others (default false: the next batch goes out at once).
   */
  gatherAfterAnswer?: boolean;
}

/** One turn of the event loop: promise callbacks and the I/O callbacks already due run first. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Coalesces concurrent requests: while one batch is being handled, the requests that arrive wait
 * and are handled together in the next one (at most `maxBatch`). Idle, a request goes out at once;
 * under load the batches grow by themselves. `handle` answers each item of its batch, in order; if
 * it throws, every request of that batch gets the error.
 */
export class Coalescer<Item, Result> {
  private queued: { item: Item; resolve: (result: Result) => void; reject: (error: unknown) => void }[] = [];
  private busy = false;
  private readonly maxBatch: number;
  private readonly gatherAfterAnswer: boolean;

  constructor(
    private readonly handle: (batch: Item[]) => Promise<Result[]>,
    options: number | CoalescerOptions = {},
  ) {
    const { maxBatch = 1000, gatherAfterAnswer = false } = typeof options === 'number' ? { maxBatch: options } : options;
    this.maxBatch = maxBatch;
    this.gatherAfterAnswer = gatherAfterAnswer;
  }

  add(item: Item): Promise<Result> {
    const result = new Promise<Result>((resolve, reject) => this.queued.push({ item, resolve, reject }));
    if (!this.busy) void this.drain();
    return result;
  }

  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.queued.length > 0) {
        const batch = this.queued.splice(0, this.maxBatch);
        try {
          const results = await this.handle(batch.map(({ item }) => item));
          batch.forEach(({ resolve }, index) => resolve(results[index]!));
        } catch (error) {
          for (const { reject } of batch) reject(error);
        }
        if (this.gatherAfterAnswer) await nextTurn();
      }
    } finally {
      this.busy = false;
    }
  }
}
