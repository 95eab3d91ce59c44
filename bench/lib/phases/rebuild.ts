import type { ServiceDb } from '../service-db.js';
import { runCli, type BenchService } from '../service.js';

export interface RebuildFigures {
  events: number;
  /** the rebuild's own time, as the CLI prints it (every projection, side by side), without the CLI's start-up */
  rebuildMs: number;
  wallMs: number;
  eventsPerSecond: number;
}

const LINE = /^(\S+): rebuilt up to position (\d+) in (\d+) ms$/;
const TOTAL = /^(\d+) projection\(s\) rebuilt in (\d+) ms$/m;

/**
 * `ledgergate projections rebuild` on the service's DATA_DIR while the service keeps running:
 * every projection replays the events the run produced. Events per second = the events in the
 * store / the rebuild time the CLI reports (wall time of all projections, without its start-up).
 */
export const runRebuildPhase = async (service: BenchService, db: ServiceDb, progress: (message: string) => void): Promise<RebuildFigures> => {
  const [row] = await db.query<{ events: string }>('select count(*)::text as events from eventstore.events');
  const events = Number(row?.events ?? 0);
  progress(`rebuild: ledgergate projections rebuild over ${events} events`);
  const started = performance.now();
  const { code, stdout, stderr } = await runCli(service, ['projections', 'rebuild']);
  const wallMs = performance.now() - started;
  if (code !== 0) throw new Error(`ledgergate projections rebuild exited with ${code}: ${stderr}`);
  const parsed = stdout
    .split('\n')
    .map((line) => LINE.exec(line.trim()))
    .filter((match): match is RegExpExecArray => match !== null);
  if (parsed.length === 0) throw new Error(`ledgergate projections rebuild printed nothing the bench understands:\n${stdout}`);
  for (const match of parsed) progress(`rebuild: ${match[1]} up to ${match[2]} in ${match[3]} ms`);
  const total = TOTAL.exec(stdout);
  if (!total) throw new Error(`ledgergate projections rebuild printed no total:\n${stdout}`);
  const rebuildMs = Number(total[2]);
  return { events, rebuildMs, wallMs, eventsPerSecond: rebuildMs > 0 ? (events * 1000) / rebuildMs : Number.NaN };
};
