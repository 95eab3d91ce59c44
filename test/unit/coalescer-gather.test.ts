import { describe, expect, it } from 'vitest';
import { Coalescer } from '../../src/db/coalescer.js';

/** A coalescer whose batches are answered only when the test says so; it records each batch as it starts. */
const controlled = (gatherAfterAnswer: boolean) => {
  const started: string[][] = [];
  const pending: (() => void)[] = [];
  const coalescer = new Coalescer<string, string>(
    (batch) =>
      new Promise((resolve) => {
        started.push([...batch]);
        pending.push(() => resolve(batch.map((item) => `${item} done`)));
      }),
    { gatherAfterAnswer },
  );
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  return { coalescer, started, answerOldest: () => pending.shift()!(), turn };
};

/** Each caller asks again as soon as it is answered, `rounds` times: a closed loop, as the event store's writers are. */
const closedLoop = (coalescer: Coalescer<string, string>, callers: string[], rounds: number) =>
  Promise.all(
    callers.map(async (caller) => {
      for (let round = 0; round < rounds; round++) expect(await coalescer.add(`${caller}${round}`)).toBe(`${caller}${round} done`);
    }),
  );

describe('Coalescer: gathering after an answer', () => {
  it('sends a request that finds it idle at once, alone', () => {
    const { coalescer, started } = controlled(true);
    void coalescer.add('a');
    expect(started).toEqual([['a']]);
  });

  it('callers that ask again as soon as they are answered join the ones already waiting: one batch of all of them', async () => {
    const { coalescer, started, answerOldest, turn } = controlled(true);
    const loop = closedLoop(coalescer, ['a', 'b', 'c', 'd'], 3);
    expect(started).toEqual([['a0']]); // the first went out alone; b, c and d wait
    for (let batch = 0; batch < 4; batch++) {
      answerOldest();
      await turn();
      await turn();
    }
    await loop;
    expect(started).toEqual([['a0'], ['b0', 'c0', 'd0', 'a1'], ['b1', 'c1', 'd1', 'a2'], ['b2', 'c2', 'd2']]);
  });

  it('without it, the first caller answered goes out alone ahead of the others, batch after batch', async () => {
    const { coalescer, started, answerOldest, turn } = controlled(false);
    const loop = closedLoop(coalescer, ['a', 'b', 'c', 'd'], 3);
    for (let batch = 0; batch < 6 && started.length > batch; batch++) {
      answerOldest();
      await turn();
    }
    await loop;
    expect(started[1]).toEqual(['b0', 'c0', 'd0']);
    expect(started[2]).toEqual(['a1']);
  });
});
