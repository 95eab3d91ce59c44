import type pg from 'pg';

/** A saturated pool answers if one of its connections came back without error this recently. */
export const RECENT_ANSWER_MS = 10_000;

export interface PoolHealth {
  /**
   * Whether the pool's connections answer, without waiting in its queue when the pool shows they
   * do: with every connection busy and queries waiting (a pool saturated by load), a connection
   * handed back without error within the last RECENT_ANSWER_MS answers for it (a probe would only
   * wait behind the queue; a query that failed on a live connection, a constraint say, is no
   * evidence either way). Otherwise `probe` runs on the pool: on a free connection at once, or, for
   * a saturated pool with no such evidence (its connections hang, or are all still opening), in
   * its queue, as any query would.
   */
  answers(probe?: string): Promise<boolean>;
}

const lastAnswers = new WeakMap<pg.Pool, { atMs: number }>();

/** every checkout handed back is a fact about the pool: without an error, its connection answered */
const lastAnswerOf = (pool: pg.Pool, now: () => number): { atMs: number } => {
  let last = lastAnswers.get(pool);
  if (!last) {
    const watched = { atMs: Number.NEGATIVE_INFINITY };
    pool.on('release', (error: Error | undefined) => {
      if (!error) watched.atMs = now();
    });
    lastAnswers.set(pool, watched);
    last = watched;
  }
  return last;
};

const saturated = (pool: pg.Pool, max: number) => pool.idleCount === 0 && pool.totalCount >= max && pool.waitingCount > 0;

/** `now`: the clock the record is kept on (tests move it). One record per pool, whoever asks. */
export const poolHealth = (pool: pg.Pool, now: () => number = () => performance.now()): PoolHealth => {
  const last = lastAnswerOf(pool, now);
  const max = pool.options.max ?? 10;
  return {
    answers: async (probe = 'select 1') => {
      if (saturated(pool, max) && now() - last.atMs <= RECENT_ANSWER_MS) return true;
      return pool.query(probe).then(
        () => true,
        () => false,
      );
    },
  };
};
