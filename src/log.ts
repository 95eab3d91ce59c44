import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

/** One JSON object per line on stdout (CONTRACT §1). Never pass secrets in fields. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
type Threshold = LogLevel | 'silent';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

/** deeper than any field a log line is given: a cycle is cut here instead of overflowing the stack */
const MAX_FIELD_DEPTH = 8;

const isPlainObject = (value: object): value is Record<string, unknown> => {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

/** bigints as decimal strings, errors as their name and message, at any depth (JSON has no bigint, and turns an Error into `{}`) */
const loggable = (value: unknown, depth = 0): unknown => {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (depth >= MAX_FIELD_DEPTH) return '[too deep]';
  if (Array.isArray(value)) return value.map((item) => loggable(item, depth + 1));
  if (!isPlainObject(value)) return value;
  const plain: Record<string, unknown> = {};
  for (const key of Object.keys(value)) plain[key] = loggable(value[key], depth + 1);
  return plain;
};

/** copies `fields` into `record` as they are written; most are strings and numbers, copied as they are */
const addLoggable = (record: Record<string, unknown>, fields: Record<string, unknown> | undefined): void => {
  if (!fields) return;
  for (const key in fields) {
    const value = fields[key];
    record[key] = typeof value === 'object' || typeof value === 'bigint' ? loggable(value) : value;
  }
};

/**
 * Fields every log line written within a piece of work carries, whichever logger writes it (the
 * request id of an HTTP request, for every line its handlers and the code below them write).
 * Work a request starts and others join (a group commit, a ledger batch) logs with the id of the
 * request that started it.
 */
const context = new AsyncLocalStorage<Record<string, unknown>>();

export const withLogContext = <T>(fields: Record<string, unknown>, work: () => T): T => context.run({ ...context.getStore(), ...fields }, work);

/**
 * stdout through pino's asynchronous destination: a line is appended to a buffer and written by a
 * later write(2) together with the lines logged meanwhile, instead of one synchronous write(2)
 * per line on the request path. Made on the first logger that writes to it.
 */
let standardOutput: ReturnType<typeof pino.destination> | undefined;
const asyncStandardOutput = () => (standardOutput ??= pino.destination({ dest: 1, sync: false }));

/** how long the last lines may take to reach stdout at exit; a stdout nobody reads must not hold the exit */
const FLUSH_LIMIT_MS = 5_000;

/**
 * Writes what the loggers on stdout still hold and closes that destination: called once, right
 * before the process exits (lines logged after it are lost). An exit that skips it (an uncaught
 * error) is flushed synchronously by pino's own exit hook.
 */
export const flushLogs = (): Promise<void> => {
  const stream = standardOutput;
  standardOutput = undefined;
  if (!stream) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, FLUSH_LIMIT_MS);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    stream.once('close', done);
    stream.once('error', done);
    try {
      stream.end();
    } catch {
      done(); // already closed
    }
  });
};

/** a caller's own writer (tests, the CLI's stderr) gets each line, without its newline, as it is logged */
const lineDestination = (write: (line: string) => void): DestinationStream => ({ write: (line: string) => write(line.endsWith('\n') ? line.slice(0, -1) : line) });
const discard: DestinationStream = { write: () => undefined };

const pinoLogger = (threshold: Threshold, write: ((line: string) => void) | undefined): PinoLogger =>
  pino(
    {
      level: threshold,
      // the fields this service always wrote: `time` (ISO 8601), `level` by name, `msg`; no pid or hostname
      base: undefined,
      messageKey: 'msg',
      timestamp: pino.stdTimeFunctions.isoTime,
      // an error under any key is its name and message (loggable), `err` included: no stack in the logs
      serializers: { err: (value: unknown) => value },
      formatters: { level: (label) => ({ level: label }) },
    },
    threshold === 'silent' ? discard : write ? lineDestination(write) : asyncStandardOutput(),
  );

/**
 * A logger writing one JSON object per line, at `threshold` and above, to stdout (or `write`).
 * A line's fields: the log context's, then `base`'s, then its own; a later one wins.
 */
export const createLogger = (threshold: Threshold = 'info', base: Record<string, unknown> = {}, write?: (line: string) => void): Logger =>
  bound(pinoLogger(threshold, write), base);

const bound = (target: PinoLogger, base: Record<string, unknown>): Logger => {
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (!target.isLevelEnabled(level)) return;
    const record: Record<string, unknown> = {};
    addLoggable(record, context.getStore());
    addLoggable(record, base);
    addLoggable(record, fields);
    target[level](record, msg);
  };
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (fields) => bound(target, { ...base, ...fields }),
  };
};

export const silentLogger: Logger = createLogger('silent');
