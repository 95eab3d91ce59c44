import { AsyncLocalStorage } from 'node:async_hooks';

/** One JSON object per line on stdout (CONTRACT §1). Never pass secrets in fields. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
type Threshold = LogLevel | 'silent';

const rank: Record<Threshold, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const serializable = (value: unknown): unknown => {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
};

/**
 * Fields every log line written within a piece of work carries, whichever logger writes it (the
 * request id of an HTTP request, for every line its handlers and the code below them write).
 * Work a request starts and others join (a group commit, a ledger batch) logs with the id of the
 * request that started it.
 */
const context = new AsyncLocalStorage<Record<string, unknown>>();

export const withLogContext = <T>(fields: Record<string, unknown>, work: () => T): T => context.run({ ...context.getStore(), ...fields }, work);

export const createLogger = (
  threshold: Threshold = 'info',
  base: Record<string, unknown> = {},
  write: (line: string) => void = (line) => process.stdout.write(line + '\n'),
): Logger => {
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (rank[level] < rank[threshold]) return;
    const record = { time: new Date().toISOString(), level, msg, ...context.getStore(), ...base, ...fields };
    write(JSON.stringify(record, (_key, value: unknown) => serializable(value)));
  };
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (fields) => createLogger(threshold, { ...base, ...fields }, write),
  };
};

export const silentLogger: Logger = createLogger('silent');
