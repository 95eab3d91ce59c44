import type pg from 'pg';

/** below this many events a table without statistics is left alone (see analyzeEventsWithoutStatistics) */
export const ANALYZE_FROM_EVENTS = 10_000;

/**
 * Analyses the events table when PostgreSQL has never gathered its statistics (`reltuples` -1: a
 * restored dump, or a store the autovacuum has not reached yet) and it already holds many events.
 * Without statistics the planner guesses, and on a large table a category read of the log (a
 * rebuild's, a projection's catch-up) was planned as a scan of every later event and a sort of them
 * all for each page: a rebuild over 32,619 events spent 4.6 s in 8 reads, 267 ms for the first
 * against 14 ms once analysed. A small or empty table is left alone: analysed empty, it would be
 * known as empty, and the statements a session prepares then (the append function's among them)
 * would keep plans that scan it whole as it grows, until the autovacuum analyses it again; never
 * analysed, the planner assumes it holds some pages and uses its indexes. Checked once per
 * connect; two processes starting together both analyse, which is harmless.
 */
export const analyzeEventsWithoutStatistics = async (pool: pg.Pool, fromEvents = ANALYZE_FROM_EVENTS): Promise<boolean> => {
  const { rows } = await pool.query<{ unknown: boolean; many: boolean }>(
    `select reltuples < 0 as unknown, (select count(*) from (select from eventstore.events limit $1) as enough) >= $1 as many
     from pg_class where oid = 'eventstore.events'::regclass`,
    [fromEvents],
  );
  if (!rows[0]?.unknown || !rows[0].many) return false;
  await pool.query('analyze eventstore.events');
  return true;
};
