import { Coalescer } from '../db/coalescer.js';
import { BoundedMap } from '../lib/bounded-map.js';

/**
 * Reads of one key shared by those who ask at once: an ask made while a read of its key is under
 * way waits for the next read, started after it asked, and shares it with every ask that came
 * meanwhile. So each answer was read after its ask (as fresh as a read of its own), and many
 * concurrent asks of one key cost about two reads. At most `limit` keys are tracked (an evicted
 * one finishes what it holds).
 */
export class SharedReads<Value> {
  private readonly reads: BoundedMap<string, Coalescer<undefined, Value>>;

  constructor(limit = 10_000) {
    this.reads = new BoundedMap(limit);
  }

  /** `load` reads the key's value; every ask of one key must load the same thing */
  read(key: string, load: () => Promise<Value>): Promise<Value> {
    let coalescer = this.reads.get(key);
    if (!coalescer) {
      coalescer = new Coalescer<undefined, Value>(async (batch) => {
        const value: Value = await load();
        return batch.map(() => value);
      });
      this.reads.set(key, coalescer);
    }
    return coalescer.add(undefined);
  }
}
