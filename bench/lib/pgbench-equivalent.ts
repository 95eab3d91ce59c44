import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type pg from 'pg';
import { DEPOSIT_CONSTANTS, DEPOSIT_EVENT_TYPES } from './deposit-event.js';

/**
 * The hardware limit for one durable append, measured by pgbench: the same rows written in one
 * transaction without an event store's logic. Schema `pgbench_eq` mirrors eventstore.streams and
 * eventstore.events (columns, keys, unique constraints, indexes, the position sequence); one
 * transaction upserts the stream row with the exact expected revision and inserts one event whose
 * jsonb data and metadata have the fields and size of bench's deposit-like event.
 */
export const EQUIVALENT_SCHEMA = 'pgbench_eq';

/** Copies eventstore.streams and eventstore.events (columns, defaults, keys, indexes: LIKE … INCLUDING ALL); call it after the event store's migration. */
export const createEquivalentSchema = async (pool: pg.Pool): Promise<void> => {
  await pool.query(`drop schema if exists ${EQUIVALENT_SCHEMA} cascade`);
  await pool.query(`create schema ${EQUIVALENT_SCHEMA}`);
  await pool.query(`create table ${EQUIVALENT_SCHEMA}.streams (like eventstore.streams including all)`);
  await pool.query(`create table ${EQUIVALENT_SCHEMA}.events (like eventstore.events including all)`);
  await pool.query(`create sequence ${EQUIVALENT_SCHEMA}.global_position_seq as bigint minvalue 1 no cycle`);
};

/**
 * The pgbench script. pgbench keeps each client's variables across transactions, so `turn` counts
 * that client's appends: it cycles over its own `streamsPerClient` streams and knows each one's
 * revision, like a writer tracking expected revisions. A wrong expectation updates no row, and
 * `\gset` then fails the client, so conflicts cannot pass unnoticed. String constants travel as
 * `-D` variables because pgbench would read `:eip155` inside a literal as a variable.
 */
export const equivalentScript = (streamsPerClient: number): string => {
  const s = EQUIVALENT_SCHEMA;
  const types = DEPOSIT_EVENT_TYPES.map((type) => `'${type}'`).join(', ');
  return `\\set slot :turn % ${streamsPerClient}
\\set revision :turn / ${streamsPerClient}
\\set expected :revision - 1
\\set stream_key :run * 1000000 + :client_id * ${streamsPerClient} + :slot
\\set type_index 1 + :turn % ${DEPOSIT_EVENT_TYPES.length}
BEGIN;
INSERT INTO ${s}.streams AS s (stream_id, category, revision)
  VALUES ('account-' || cast(md5(cast(:stream_key as text)) as uuid), 'account', :revision)
  ON CONFLICT (stream_id) DO UPDATE SET revision = excluded.revision, updated_at = now()
  WHERE s.revision = :expected
  RETURNING s.stream_id \\gset
INSERT INTO ${s}.events (position, stream_id, revision, event_id, category, type, data, metadata)
  VALUES (nextval('${s}.global_position_seq'), :stream_id, :revision, gen_random_uuid(), 'account',
    (array[${types}])[cast(:type_index as int)],
    jsonb_build_object(
      'depositId', gen_random_uuid(),
      'accountId', substr(cast(:stream_id as text), 9),
      'chain', cast(:chain as text),
      'asset', cast(:asset as text),
      'amount', to_char(random() * 10000, 'FM99990.000000'),
      'toAddress', '0x' || md5(random()::text) || left(md5(random()::text), 8),
      'txHash', '0x' || md5(random()::text) || md5(random()::text),
      'logIndex', cast(:turn as int),
      'blockNumber', cast(:first_block as int) + cast(:turn as int),
      'confirmations', cast(:confirmations as int)),
    jsonb_build_object(
      'actor', cast(:actor as text),
      'at', to_jsonb(clock_timestamp()),
      'requestId', gen_random_uuid(),
      'correlationId', gen_random_uuid(),
      'causationId', gen_random_uuid(),
      'orgId', cast(:org_id as text)));
END;
\\set turn :turn + 1
`;
};

export interface PgbenchRun {
  binary: string;
  scriptFile: string;
  connection: pg.ClientConfig;
  clients: number;
  /** pgbench's -T takes whole seconds */
  seconds: number;
  /** distinguishes the streams of successive runs (warm-up, measurement) */
  run: number;
  signal: AbortSignal;
}

export interface PgbenchResult {
  tps: number;
  transactions: number;
}

const runProcess = (binary: string, args: string[], env: NodeJS.ProcessEnv, signal: AbortSignal) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    // `signal` kills pgbench on Ctrl-C; a terminal's Ctrl-C reaches it directly as well
    const child = spawn(binary, args, { env, signal, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });

const tail = (text: string, lines: number) => text.trim().split('\n').slice(-lines).join(' / ');

export const runPgbench = async (options: PgbenchRun): Promise<PgbenchResult> => {
  const { connection } = options;
  const variables = {
    run: String(options.run),
    turn: '0',
    chain: DEPOSIT_CONSTANTS.chain,
    asset: DEPOSIT_CONSTANTS.asset,
    actor: DEPOSIT_CONSTANTS.actor,
    org_id: DEPOSIT_CONSTANTS.orgId,
    first_block: String(DEPOSIT_CONSTANTS.firstBlock),
    confirmations: String(DEPOSIT_CONSTANTS.confirmations),
  };
  const args = [
    '--no-vacuum',
    '--protocol=prepared',
    `--file=${options.scriptFile}`,
    `--client=${options.clients}`,
    `--jobs=${Math.min(2, options.clients)}`,
    `--time=${options.seconds}`,
    ...Object.entries(variables).map(([name, value]) => `--define=${name}=${value}`),
    `--host=${connection.host}`,
    `--port=${connection.port}`,
    `--username=${connection.user}`,
    connection.database!,
  ];
  const env = { ...process.env, PGPASSWORD: String(connection.password ?? ''), LC_ALL: 'C' };
  const { code, stdout, stderr } = await runProcess(options.binary, args, env, options.signal).catch((error: unknown) => {
    options.signal.throwIfAborted();
    throw error;
  });
  const tps = /^tps = ([\d.]+) \(without initial connection time\)/m.exec(stdout)?.[1];
  const transactions = /^number of transactions actually processed: (\d+)/m.exec(stdout)?.[1];
  if (code !== 0 || tps === undefined || transactions === undefined) {
    throw new Error(`pgbench exited with ${code}: ${tail(stderr || stdout, 4)}`);
  }
  return { tps: Number(tps), transactions: Number(transactions) };
};

/** Every event row must belong to exactly one upserted revision: otherwise the script was not equivalent. */
export const verifyEquivalentRows = async (pool: pg.Pool): Promise<number> => {
  const { rows } = await pool.query<{ events: string; revisions: string }>(
    `select (select count(*) from ${EQUIVALENT_SCHEMA}.events)::text as events,
            (select coalesce(sum(revision + 1), 0) from ${EQUIVALENT_SCHEMA}.streams)::text as revisions`,
  );
  const { events, revisions } = rows[0]!;
  if (events !== revisions) throw new Error(`pgbench wrote ${events} events but its streams account for ${revisions}`);
  return Number(events);
};

const isExecutable = (file: string) =>
  fs.access(file, fs.constants.X_OK).then(
    () => true,
    () => false,
  );

const onPath = async (name: string): Promise<string | null> => {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return null;
};

let installAttempted = false;

/** pgbench from PATH; as root on Debian/Ubuntu, installs postgresql-client once if it is missing. */
export const findPgbench = async (progress: (message: string) => void, signal: AbortSignal): Promise<{ binary: string } | { note: string }> => {
  const found = await onPath('pgbench');
  if (found) return { binary: found };
  if (process.getuid?.() !== 0) return { note: 'pgbench is not installed (not root, so not installing postgresql-client)' };
  if (installAttempted) return { note: 'pgbench is not installed and installing postgresql-client failed earlier' };
  installAttempted = true;
  if (!(await onPath('apt-get'))) return { note: 'pgbench is not installed and there is no apt-get to install postgresql-client' };
  progress('pgbench not found: apt-get install -y postgresql-client');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const { code, stdout, stderr } = await runProcess('apt-get', ['install', '-y', 'postgresql-client'], env, signal);
  const installed = await onPath('pgbench');
  if (installed) return { binary: installed };
  return { note: `pgbench is not installed; apt-get install postgresql-client exited with ${code}: ${tail(stderr || stdout, 2)}` };
};
