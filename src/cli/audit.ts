import fs from 'node:fs';
import { Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { awaitAuditStreams, exportStream, type ExportFormat } from '../audit/export.js';
import { AUDIT_CATEGORY_NAMES, type AuditCategory } from '../projections/stream-ownership.js';
import { withdrawalHistory } from '../audit/withdrawal-history.js';
import type { Config } from '../config/env.js';
import { openInfrastructure } from '../infrastructure.js';
import type { Logger } from '../log.js';
import { auditStreamsProjection } from '../projections/audit-streams.js';
import { ProjectionRunner } from '../projections/runner.js';
import { progressOnStderr } from './progress.js';

const EXPORT_USAGE =
  'usage: ledgergate export --org <orgId> [--category withdrawal,deposit,…] [--from <ISO time>] [--to <ISO time>] [--from-position <n>] [--to-position <n>] [--prev-hash <hex>] [--format ndjson|csv] [--out <file>]';

const categoriesOf = (value: string | undefined): AuditCategory[] | undefined => {
  if (value === undefined) return undefined;
  const names = value.split(',');
  const unknown = names.filter((name) => !(AUDIT_CATEGORY_NAMES as string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown category ${unknown.join(', ')}; known: ${AUDIT_CATEGORY_NAMES.join(', ')}`);
  return names as AuditCategory[];
};

const dateOf = (value: string | undefined, flag: string): Date | undefined => {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new Error(`${flag}: not an ISO 8601 time: ${value}`);
  return date;
};

const positionOf = (value: string | undefined, flag: string): bigint | undefined => {
  if (value === undefined) return undefined;
  if (!/^(0|[1-9][0-9]*)$/.test(value)) throw new Error(`${flag}: not a position: ${value}`);
  return BigInt(value);
};

/** `ledgergate export --org <orgId> …`: the same stream as GET /audit/events, to a file or stdout. */
export const exportCommand = async (config: Config, logger: Logger, args: string[]): Promise<number> => {
  const { values } = parseArgs({
    args,
    options: {
      org: { type: 'string' },
      category: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      'from-position': { type: 'string' },
      'to-position': { type: 'string' },
      'prev-hash': { type: 'string' },
      format: { type: 'string', default: 'ndjson' },
      out: { type: 'string' },
    },
  });
  if (!values.org) throw new Error(EXPORT_USAGE);
  if (values.format !== 'ndjson' && values.format !== 'csv') throw new Error(`--format: ndjson or csv\n${EXPORT_USAGE}`);
  if (values['prev-hash'] !== undefined && !/^[0-9a-f]{64}$/.test(values['prev-hash'])) throw new Error('--prev-hash: 64 lowercase hex digits');
  const options = {
    orgId: values.org,
    categories: categoriesOf(values.category),
    from: dateOf(values.from, '--from'),
    to: dateOf(values.to, '--to'),
    fromPosition: positionOf(values['from-position'], '--from-position'),
    toPosition: positionOf(values['to-position'], '--to-position'),
    prevHash: values['prev-hash'],
  };
  const infrastructure = await openInfrastructure(config, logger, 'cli');
  try {
    // with no server running this process brings the ownership projection up to date; with one, its runner does
    const runner = new ProjectionRunner({ projection: auditStreamsProjection, store: infrastructure.store, database: infrastructure.databaseTarget, logger });
    if (!(await runner.catchUp())) await awaitAuditStreams(infrastructure, 60_000);
    const body = Readable.fromWeb(exportStream(infrastructure, options, values.format as ExportFormat) as Parameters<typeof Readable.fromWeb>[0]);
    const sink = values.out ? fs.createWriteStream(values.out) : new Writable({ write: (chunk, _encoding, done) => (process.stdout.write(chunk) ? done() : process.stdout.once('drain', done)) });
    const progress = progressOnStderr('export');
    let lines = 0;
    const counted = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++;
        progress.update(() => `${lines} lines written`);
        done(null, chunk);
      },
    });
    await pipeline(body, counted, sink);
    progress.done(`done, ${lines} lines${values.out ? ` in ${values.out}` : ''}`);
    return 0;
  } finally {
    await infrastructure.close();
  }
};

/** `ledgergate verify <file> [--prev-hash <hex>]`: exit 0 with `OK <count> <lastHash>`, 1 naming the first bad line. */
const HISTORY_COLUMNS = ['REV', 'TYPE', 'AT', 'ACTOR', 'STATUS', 'APPROVERS', 'TXN HASH'] as const;

/** `ledgergate history --withdrawal <id> [--org <orgId>] [--json]`: GET /withdrawals/:id/history for operators. */
export const historyCommand = async (config: Config, logger: Logger, args: string[]): Promise<number> => {
  const { values } = parseArgs({ args, options: { withdrawal: { type: 'string' }, org: { type: 'string' }, json: { type: 'boolean' } } });
  if (!values.withdrawal) throw new Error('usage: ledgergate history --withdrawal <id> [--org <orgId>] [--json]');
  const infrastructure = await openInfrastructure(config, logger, 'cli');
  try {
    const events = await withdrawalHistory(infrastructure.store, values.org ?? null, values.withdrawal);
    if (values.json) {
      process.stdout.write(JSON.stringify({ events }, null, 2) + '\n');
      return 0;
    }
    const rows = events.map((event) => [String(event.revision), event.type, event.metadata.at, event.metadata.actor, event.state.status, String(event.state.approvers.length), event.state.txnHash ?? '']);
    const widths = HISTORY_COLUMNS.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
    const render = (cells: readonly string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd() + '\n';
    process.stdout.write(render(HISTORY_COLUMNS) + rows.map(render).join(''));
    return 0;
  } finally {
    await infrastructure.close();
  }
};
