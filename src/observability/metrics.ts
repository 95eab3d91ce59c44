import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's metrics (CONTRACT §11), in one registry served by GET /metrics. This module sits
 * with the leaves of the layers, so any layer (the event store, the ledger batcher, the workers,
 * the HTTP middleware) records into it without importing upwards. Labels are bounded: route
 * templates, chain ids, statuses, never ids or raw paths.
 *
 * Gauges that describe shared state (the outbox, withdrawals by status, projection lag) are read
 * when scraped, from the sources a composed service installs (`observeService`): each a single
 * indexed query or in-memory state, so a scrape stays cheap however large the tables grow.
 */
export const metricsRegistry = new Registry();

const PREFIX = 'ledgergate_';
const registers = [metricsRegistry];

let defaultMetricsStarted = false;
/** the runtime's process metrics (memory, CPU, event-loop lag, handles), once per process */
export const startDefaultMetrics = (): void => {
  if (defaultMetricsStarted) return;
  defaultMetricsStarted = true;
  collectDefaultMetrics({ register: metricsRegistry });
};

export const httpRequestsTotal = new Counter({
  name: `${PREFIX}http_requests_total`,
  help: 'HTTP requests answered, by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers,
});

export const httpRequestDuration = new Histogram({
  name: `${PREFIX}http_request_duration_seconds`,
  help: 'Time to answer an HTTP request, by method and route template',
  labelNames: ['method', 'route'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers,
});

export const eventStoreAppendDuration = new Histogram({
  name: `${PREFIX}eventstore_append_duration_seconds`,
  help: 'Time one group commit of the event store takes (one statement, one commit)',
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers,
});

const SIZE_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

export const eventStoreAppendBatchSize = new Histogram({
  name: `${PREFIX}eventstore_append_batch_size`,
  help: 'Appends written together in one group commit of the event store',
  buckets: SIZE_BUCKETS,
  registers,
});

export const ledgerBatchSize = new Histogram({
  name: `${PREFIX}ledger_batch_size`,
  help: 'Decisions on one ledger decided and appended together in one batch',
  buckets: SIZE_BUCKETS,
  registers,
});

export const ledgerStageDuration = new Histogram({
  name: `${PREFIX}ledger_stage_duration_seconds`,
  help: 'Time a decision on a ledger spends in each stage of its batch: queued (waiting for its batch), load (the ledger read from the store), read (what its decisions read), decide, behind (decided, waiting for the append in flight before its own), append (the atomic append, group commit included)',
  labelNames: ['stage'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
  registers,
});

export const ledgerRetries = new Counter({
  name: `${PREFIX}ledger_retries_total`,
  help: 'Decisions on a ledger sent back to be decided again, by cause: ledger_conflict (another writer moved the ledger), stream_conflict (another stream of the decision moved), stale_memory (refused or left alone on the ledger memory held), store_error, previous_not_landed (decided on the ledger an append in flight would leave, which did not land)',
  labelNames: ['cause'] as const,
  registers,
});

export const projectionBatchSize = new Histogram({
  name: `${PREFIX}projection_batch_size`,
  help: 'Events a projection applied in one batch (one transaction with its checkpoint)',
  labelNames: ['projection'] as const,
  buckets: SIZE_BUCKETS,
  registers,
});

export const projectionApplyDuration = new Histogram({
  name: `${PREFIX}projection_apply_duration_seconds`,
  help: "Time one batch of a projection takes to apply: its handler's statements and the checkpoint, committed together",
  labelNames: ['projection'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers,
});

export const projectionEventDelay = new Histogram({
  name: `${PREFIX}projection_event_delay_seconds`,
  help: "From a batch's last event recorded (its append's transaction time, the database's clock) to the projection's checkpoint committed past it (this process's clock)",
  labelNames: ['projection'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers,
});

/** a projection's batch committed with its checkpoint */
export const recordProjectionBatch = (projection: string, events: number, applySeconds: number, lastRecordedAt: Date): void => {
  projectionBatchSize.observe({ projection }, events);
  projectionApplyDuration.observe({ projection }, applySeconds);
  projectionEventDelay.observe({ projection }, Math.max(0, Date.now() - lastRecordedAt.getTime()) / 1000);
};

export const webhookDeliveriesTotal = new Counter({
  name: `${PREFIX}webhook_deliveries_total`,
  help: 'Webhook delivery attempts by how they ended: delivered, retry (a failed attempt, another follows), failed (the last attempt failed), superseded (the lease was lost)',
  labelNames: ['outcome'] as const,
  registers,
});

export const chainWatcherHeight = new Gauge({
  name: `${PREFIX}chain_watcher_height`,
  help: 'The last block the active deposit watcher of a chain scanned (set in the process running it)',
  labelNames: ['chain'] as const,
  registers,
});

export const chainNodeHead = new Gauge({
  name: `${PREFIX}chain_node_head`,
  help: 'The head block its node reported to the active deposit watcher of a chain',
  labelNames: ['chain'] as const,
  registers,
});

export const chainHeadLagBlocks = new Gauge({
  name: `${PREFIX}chain_head_lag_blocks`,
  help: 'Blocks between the node head and the last block the deposit watcher scanned',
  labelNames: ['chain'] as const,
  registers,
});

/** one look of the active watcher of a chain at its node */
export const recordChainHeights = (chain: string, scannedHeight: number, headHeight: number): void => {
  chainWatcherHeight.set({ chain }, scannedHeight);
  chainNodeHead.set({ chain }, headHeight);
  chainHeadLagBlocks.set({ chain }, Math.max(0, headHeight - scannedHeight));
};

export const workerFirstPassSeconds = new Gauge({
  name: `${PREFIX}worker_first_pass_seconds`,
  help: 'From the creation of a deposit watcher or withdrawal processor to the end of its first pass, its checkpoint saved (set once, in the process running it)',
  labelNames: ['worker', 'chain'] as const,
  registers,
});

export const workerFirstPassEventsRead = new Gauge({
  name: `${PREFIX}worker_first_pass_events_read`,
  help: 'Events the first pass of a deposit watcher or withdrawal processor read from the event store: those after its checkpoint, or all of them without one',
  labelNames: ['worker', 'chain'] as const,
  registers,
});

/** a chain worker's first pass ended: how long its start took and how much history it read */
export const recordWorkerFirstPass = (worker: 'deposit-watcher' | 'withdrawal-processor', chain: string, ms: number, eventsRead: number): void => {
  workerFirstPassSeconds.set({ worker, chain }, ms / 1000);
  workerFirstPassEventsRead.set({ worker, chain }, eventsRead);
};

/** What a composed service tells the gauges read at scrape time. */
export interface ServiceMetricSources {
  /** events each projection has still to apply (0 when caught up) */
  projectionLag(): Promise<Record<string, number>>;
  /** webhook deliveries waiting, and the age of the oldest, in seconds (0 when none) */
  outbox(): Promise<{ pending: number; oldestAgeSeconds: number }>;
  /** withdrawals by status */
  withdrawalsByStatus(): Promise<Record<string, number>>;
  /** credited deposits not swept yet */
  sweepsPending(): Promise<number>;
  /** sent transactions without an outcome for longer than their chain allows, by chain (in-memory) */
  stuckTransactions(): Record<string, number>;
}

let sources: ServiceMetricSources | null = null;

/** Installs the sources of the service this process runs; answers the function that removes them. */
export const observeService = (service: ServiceMetricSources): (() => void) => {
  sources = service;
  return () => {
    if (sources === service) sources = null;
  };
};

/** a source that fails (a database restarting) leaves its gauge out of this scrape rather than failing it */
const orNull = <T>(read: () => Promise<T>): Promise<T | null> => read().catch(() => null);

const setAll = (gauge: Gauge<string>, label: string, values: Record<string, number>) => {
  gauge.reset();
  for (const [value, count] of Object.entries(values)) gauge.set({ [label]: value }, count);
};

new Gauge({
  name: `${PREFIX}projection_lag_events`,
  help: 'Events of the store a projection has not applied yet',
  labelNames: ['projection'] as const,
  registers,
  async collect() {
    const lag = sources && (await orNull(sources.projectionLag));
    if (lag) setAll(this, 'projection', lag);
  },
});

/** the two outbox gauges share one query per scrape */
let outboxRead: { atMs: number; answer: Promise<{ pending: number; oldestAgeSeconds: number } | null> } | null = null;
const readOutbox = () => {
  const nowMs = Date.now();
  if (!outboxRead || nowMs - outboxRead.atMs > 1000) outboxRead = { atMs: nowMs, answer: sources ? orNull(sources.outbox) : Promise.resolve(null) };
  return outboxRead.answer;
};

new Gauge({
  name: `${PREFIX}webhook_outbox_pending`,
  help: 'Webhook deliveries waiting to be delivered (not those of organizations without a URL, parked until one is set)',
  registers,
  async collect() {
    const outbox = await readOutbox();
    if (outbox) this.set(outbox.pending);
  },
});

new Gauge({
  name: `${PREFIX}webhook_outbox_oldest_pending_age_seconds`,
  help: 'Age of the oldest webhook delivery still waiting to be delivered (0 when none waits; parked ones not counted)',
  registers,
  async collect() {
    const outbox = await readOutbox();
    if (outbox) this.set(outbox.oldestAgeSeconds);
  },
});

new Gauge({
  name: `${PREFIX}withdrawals`,
  help: 'Withdrawals by status',
  labelNames: ['status'] as const,
  registers,
  async collect() {
    const counts = sources && (await orNull(sources.withdrawalsByStatus));
    if (counts) setAll(this, 'status', counts);
  },
});

new Gauge({
  name: `${PREFIX}sweeps_pending`,
  help: 'Credited deposits queued for a sweep to the settlement wallet and not swept yet',
  registers,
  async collect() {
    const pending = sources && (await orNull(sources.sweepsPending));
    if (pending !== null) this.set(pending);
  },
});

new Gauge({
  name: `${PREFIX}stuck_transactions`,
  help: 'Sent transactions without an outcome for longer than their chain allows, seen by the workers of this process',
  labelNames: ['chain'] as const,
  registers,
  collect() {
    if (sources) setAll(this, 'chain', sources.stuckTransactions());
  },
});

/** What the pool gauges read of a database pool (pg.Pool's counts), and its checkouts. */
export interface ObservedPool {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
  on(event: 'acquire', listener: () => void): unknown;
}

/** this process's database pools by role (the last pool observed under a role counts) */
const observedPools = new Map<string, ObservedPool>();

const dbPoolAcquisitions = new Counter({
  name: `${PREFIX}db_pool_acquisitions_total`,
  help: 'Connections checked out of a database pool, by role: with ledgergate_db_pool_waiting, the mean wait for one (waiting ÷ rate)',
  labelNames: ['pool'] as const,
  registers,
});

/** Counts a pool's checkouts and reads its gauges at scrape time, under `role`. */
export const observePool = (role: string, pool: ObservedPool): void => {
  observedPools.set(role, pool);
  pool.on('acquire', () => dbPoolAcquisitions.inc({ pool: role }));
};

new Gauge({
  name: `${PREFIX}db_pool_connections`,
  help: 'Connections of a database pool, by role and state: busy (checked out) or idle',
  labelNames: ['pool', 'state'] as const,
  registers,
  collect() {
    this.reset();
    for (const [role, pool] of observedPools) {
      this.set({ pool: role, state: 'busy' }, pool.totalCount - pool.idleCount);
      this.set({ pool: role, state: 'idle' }, pool.idleCount);
    }
  },
});

new Gauge({
  name: `${PREFIX}db_pool_waiting`,
  help: 'Queries of a role waiting for a connection of its pool',
  labelNames: ['pool'] as const,
  registers,
  collect() {
    setAll(this, 'pool', Object.fromEntries([...observedPools].map(([role, pool]) => [role, pool.waitingCount])));
  },
});
