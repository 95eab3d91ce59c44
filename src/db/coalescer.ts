/**
 * Coalesces concurrent requests: while one batch is being handled, the requests that arrive wait
 * and are handled together in the next one (at most `maxBatch`). Idle, a request goes out at once;
 * under load the batches grow by themselves. `handle` answers each item of its batch, in order; if
 * it throws, every request of that batch gets the error.
 */
export class Coalescer<Item, Result> {
  private queued: { item: Item; resolve: (result: Result) => void; reject: (error: unknown) => void }[] = [];
  private busy = false;

  constructor(
    private readonly handle: (batch: Item[]) => Promise<Result[]>,
    private readonly maxBatch = 1000,
  ) {}

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
      }
    } finally {
      this.busy = false;
    }
  }
}
