import { describe, expect, it } from 'vitest';
import { StreamQueue } from '../../src/application/stream-queue.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('stream queue', () => {
  it('runs the tasks of one stream one at a time, in order, and other streams beside them', async () => {
    const queue = new StreamQueue();
    const log: string[] = [];
    let running = 0;
    let mostAtOnce = 0;
    const task = (stream: string, n: number) => async () => {
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      log.push(`${stream}${n}:start`);
      await tick();
      log.push(`${stream}${n}:end`);
      running--;
      return n;
    };
    const results = await Promise.all([queue.run('a', task('a', 1)), queue.run('a', task('a', 2)), queue.run('b', task('b', 1)), queue.run('a', task('a', 3))]);
    expect(results).toEqual([1, 2, 1, 3]);
    const ofA = log.filter((line) => line.startsWith('a'));
    expect(ofA).toEqual(['a1:start', 'a1:end', 'a2:start', 'a2:end', 'a3:start', 'a3:end']);
    expect(mostAtOnce).toBe(2); // a and b overlapped
    expect(queue.activeStreams).toBe(0);
  });

  it('passes a failure to its caller only, and goes on with the next task', async () => {
    const queue = new StreamQueue();
    const failing = queue.run('a', async () => {
      throw new Error('boom');
    });
    const next = queue.run('a', async () => 'next');
    await expect(failing).rejects.toThrow('boom');
    expect(await next).toBe('next');
  });

  it('refuses a task beyond its bound with SERVICE_UNAVAILABLE, and accepts again once drained', async () => {
    const queue = new StreamQueue(2);
    const first = queue.run('a', tick);
    const second = queue.run('a', tick);
    await expect(queue.run('a', tick)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await Promise.all([first, second]);
    await expect(queue.run('a', async () => 'again')).resolves.toBe('again');
  });
});
