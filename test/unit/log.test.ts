import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger, withLogContext } from '../../src/log.js';

const root = path.resolve(import.meta.dirname, '../..');

const collecting = (threshold: Parameters<typeof createLogger>[0], base: Record<string, unknown> = {}) => {
  const lines: string[] = [];
  const logger = createLogger(threshold, base, (line) => lines.push(line));
  return { logger, lines, records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
};

/** runs `source` (an ES module that may import ./src/log.ts) in a node process of its own; answers its stdout */
const runNode = (source: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr.resume(); // a failing script's trace: not what these tests read
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });

describe('logger', () => {
  it('writes one JSON object per line: ISO time, level by name, msg, then the fields', () => {
    const { logger, lines, records } = collecting('info', { component: 'server' });
    logger.info('request', { method: 'GET', status: 200 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('\n');
    const [record] = records();
    expect(record).toEqual({ time: expect.any(String), level: 'info', msg: 'request', component: 'server', method: 'GET', status: 200 });
    expect(new Date(String(record!.time)).toISOString()).toBe(record!.time);
    expect(Object.keys(record!)).not.toContain('pid');
  });

  it('writes bigints as decimal strings and errors as their name and message, at any depth', () => {
    const { logger, records } = collecting('debug');
    const amount = 2n ** 255n + 1n;
    logger.error('failed', { amount, error: new TypeError('bad input'), err: new Error('boom'), nested: { amounts: [amount], cause: new RangeError('far') } });
    expect(records()[0]).toMatchObject({
      amount: amount.toString(),
      error: { name: 'TypeError', message: 'bad input' },
      err: { name: 'Error', message: 'boom' },
      nested: { amounts: [amount.toString()], cause: { name: 'RangeError', message: 'far' } },
    });
    expect(JSON.stringify(records()[0])).not.toContain('stack');
  });

  it('writes a field that refers to itself without overflowing', () => {
    const { logger, records } = collecting('info');
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    logger.info('cycle', { loop });
    expect(records()[0]).toMatchObject({ msg: 'cycle', loop: { name: 'loop', self: { name: 'loop' } } });
  });

  it('writes the log context on every line within it, under child loggers too; a line’s own fields win', async () => {
    const { logger, records } = collecting('info', { component: 'server' });
    const child = logger.child({ projection: 'balances' });
    await withLogContext({ requestId: 'req-1' }, async () => {
      await Promise.resolve();
      child.info('inside', { status: 201 });
      withLogContext({ chainId: 'eip155:1' }, () => logger.warn('nested', { component: 'watcher' }));
    });
    child.info('outside');
    expect(records()).toEqual([
      { time: expect.any(String), level: 'info', msg: 'inside', requestId: 'req-1', component: 'server', projection: 'balances', status: 201 },
      { time: expect.any(String), level: 'warn', msg: 'nested', requestId: 'req-1', chainId: 'eip155:1', component: 'watcher' },
      { time: expect.any(String), level: 'info', msg: 'outside', component: 'server', projection: 'balances' },
    ]);
  });

  it('writes nothing below its level, and nothing at all when silent', () => {
    const warn = collecting('warn');
    warn.logger.debug('d');
    warn.logger.info('i');
    warn.logger.child({ a: 1 }).info('i');
    warn.logger.warn('w');
    warn.logger.error('e');
    expect(warn.records().map((record) => record.level)).toEqual(['warn', 'error']);
    const silent = collecting('silent');
    silent.logger.error('e');
    expect(silent.lines).toEqual([]);
  });

  it('writes on stdout asynchronously, and every line logged before the process exits reaches it, in order', async () => {
    const count = 20_000;
    const { code, stdout } = await runNode(`
      import { createLogger, flushLogs } from './src/log.ts';
      const logger = createLogger('info', { component: 'burst' });
      for (let i = 0; i < ${count}; i++) logger.info('line', { i });
      await flushLogs();
      process.exit(0);
    `);
    expect(code).toBe(0);
    const lines = stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(count);
    expect(lines.map((line) => (JSON.parse(line) as { i: number }).i)).toEqual(Array.from({ length: count }, (_, i) => i));
  });

  it('writes the last lines of a process that fails with an uncaught error', async () => {
    const { code, stdout } = await runNode(`
      import { createLogger } from './src/log.ts';
      const logger = createLogger('info');
      for (let i = 0; i < 5000; i++) logger.info('line', { i });
      logger.error('about to fail');
      throw new Error('fatal');
    `);
    expect(code).not.toBe(0);
    const lines = stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(5001);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ level: 'error', msg: 'about to fail' });
  });
});
