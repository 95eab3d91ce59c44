import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withFileLock } from '../../src/db/file-lock.js';

describe('withFileLock', () => {
  it('lets one holder at a time run, in turn', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'lock-')), 'cluster.lock');
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      [1, 2, 3, 4].map((n) =>
        withFileLock(file, async () => {
          inside++;
          most = Math.max(most, inside);
          await new Promise((resolve) => setTimeout(resolve, 20));
          order.push(n);
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(order.sort()).toEqual([1, 2, 3, 4]);
  });

  it('releases the lock when the work throws', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'lock-')), 'cluster.lock');
    await expect(withFileLock(file, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(withFileLock(file, async () => 'next')).resolves.toBe('next');
  });
});
