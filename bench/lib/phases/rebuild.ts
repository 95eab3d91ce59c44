import type { ServiceDb } from '../service-db.js';
import { runCli, type BenchService } from '../service.js';

export interface RebuildFigures {
  events: number;
  /** the projections' own rebuild times summed (what the CLI prints), without the CLI's start-up */
  rebuildMs: number;
  wallMs: number;
  eventsPerSecond: number;
}

const LINE = /^(\S+): rebuilt up to position (\d+) in (\d+) ms$/;

/**
 * `ledgergate projections rebuild` on the service's DATA_DIR while the service keeps running:
 * every projection replays the events the run produced. Events per second = the events in the
 * store / the summed rebuild times the CLI reports.
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
  const rebuildMs = parsed.reduce((sum, match) => sum + Number(match[3]), 0);
  return { events, rebuildMs, wallMs, eventsPerSecond: rebuildMs > 0 ? (events * 1000) / rebuildMs : Number.NaN };
};
