import { Coalescer } from '../db/coalescer.js';
import { BoundedMap } from '../lib/bounded-map.js';

/**
 * Reads of one key shared by those who ask at once: an ask made while a read of its key is under
 * way waits for the next read, started after it asked, and shares it with every ask that came
 * meanwhile. So each answer was read after its ask (as fresh as a read of its own), and many
 * concurrent asks of one key cost about two reads. An ask that says an answer `recentMs` old will
 * do takes the last read's when that read began at most `recentMs` before (no read at all). At
 * most `limit` keys are tracked (an evicted one finishes what it holds).
 */
export class SharedReads<Value> {
  private readonly reads: BoundedMap<string, Coalescer<undefined, Value>>;
  /** each key's last answer and when the read that gave it began (performance.now()) */
  private readonly last: BoundedMap<string, { value: Value; readAt: number }>;

  constructor(limit = 10_000) {
    this.reads = new BoundedMap(limit);
    this.last = new BoundedMap(limit);
  }

  /** `load` reads the key's value; every ask of one key must load the same thing */
  read(key: string, load: () => Promise<Value>, recentMs = 0): Promise<Value> {
    const last = recentMs > 0 ? this.last.get(key) : undefined;
    if (last !== undefined && performance.now() - last.readAt <= recentMs) return Promise.resolve(last.value);
    let coalescer = this.reads.get(key);
    if (!coalescer) {
      coalescer = new Coalescer<undefined, Value>(async (batch) => {
        const readAt = performance.now();
        const value: Value = await load();
        this.last.set(key, { value, readAt });
        return batch.map(() => value);
      });
      this.reads.set(key, coalescer);
    }
    return coalescer.add(undefined);
  }
}
