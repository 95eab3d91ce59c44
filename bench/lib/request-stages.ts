/**
 * Where a POST /withdrawals waits, from the API process's own /metrics read before and after a
 * load: the mean time of a request, and of each stage of its ledger batch (queued for its batch,
 * the ledger loaded, the batch's reads, its decisions, waiting behind the append in flight, its
 * own append), per decision; the rest of the
 * request (authentication, the organization, the request's checks, the answer) is the difference.
 * Also the event store's group commits and the decisions sent back, by cause.
 */

/** `name{labels} value` lines of a Prometheus text page, summed per `name{labels}` */
const parseSamples = (text: string): Map<string, number> => {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const space = line.lastIndexOf(' ');
    const value = Number(line.slice(space + 1));
    if (Number.isFinite(value)) samples.set(line.slice(0, space), value);
  }
  return samples;
};

export const scrapeMetrics = async (url: string): Promise<Map<string, number>> => parseSamples(await (await fetch(`${url}/metrics`)).text());

const STAGES = ['queued', 'load', 'read', 'decide', 'behind', 'append'] as const;
const RETRY_CAUSES = ['ledger_conflict', 'stream_conflict', 'stale_memory', 'store_error', 'previous_not_landed'] as const;

type Samples = Map<string, number>;

const deltaOf = (before: Samples, after: Samples) => (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);

/** the decisions a process's ledger batcher sent back, by cause, and those it decided on a ledger it read from the store (not memory), per created withdrawal */
const retriesAndLoads = (before: Samples, after: Samples, created: number): string => {
  const delta = deltaOf(before, after);
  const per = (count: number) => (count / Math.max(created, 1)).toFixed(3);
  const retries = RETRY_CAUSES.map((cause) => `${cause} ${per(delta(`ledgergate_ledger_retries_total{cause="${cause}"}`))}`);
  return `decisions sent back per created withdrawal: ${retries.join(', ')}; decided on a ledger read from the store ${per(delta('ledgergate_ledger_stage_duration_seconds_count{stage="load"}'))}`;
};

/** one line on another process's ledger batcher (the workers': processors, deposits, sweeps), between two scrapes of it */
export const describeLedgerWork = (process: string, before: Samples, after: Samples, created: number): string => {
  const delta = deltaOf(before, after);
  const batches = delta('ledgergate_ledger_batch_size_count');
  return `${process}: ledger batches ${batches} of ${delta('ledgergate_ledger_batch_size_sum')} decisions; ${retriesAndLoads(before, after, created)}`;
};

/** the mean ms a decision spent in each stage of its ledger batch, between two scrapes */
const stageMsPerDecision = (before: Samples, after: Samples) => {
  const delta = deltaOf(before, after);
  const decisions = delta('ledgergate_ledger_batch_size_sum');
  return STAGES.map((stage) => `${stage} ${decisions > 0 ? ((delta(`ledgergate_ledger_stage_duration_seconds_sum{stage="${stage}"}`) / decisions) * 1000).toFixed(1) : '?'}`).join(', ');
};

/**
 * One line on a process's ledger batcher between two scrapes: its batches and their mean size,
 * each stage's mean ms per decision, and its group commits (how many, how many appends, ms each).
 */
export const describeLedgerBatches = (process: string, before: Samples, after: Samples): string => {
  const delta = deltaOf(before, after);
  const batches = delta('ledgergate_ledger_batch_size_count');
  const decisions = delta('ledgergate_ledger_batch_size_sum');
  const commits = delta('ledgergate_eventstore_append_duration_seconds_count');
  const commitMs = commits > 0 ? ((delta('ledgergate_eventstore_append_duration_seconds_sum') / commits) * 1000).toFixed(1) : '?';
  return (
    `${process}: ledger batches ${batches} of ${decisions} decisions (mean ${(decisions / Math.max(batches, 1)).toFixed(1)}); ` +
    `ms per decision in each stage: ${stageMsPerDecision(before, after)}; group commits ${commits} for ${delta('ledgergate_eventstore_append_batch_size_sum')} appends, ${commitMs} ms each`
  );
};

/** lines describing what happened between two scrapes of the API process */
export const describeRequestStages = (before: Samples, after: Samples, created: number): string[] => {
  const delta = deltaOf(before, after);
  const requestSum = delta('ledgergate_http_request_duration_seconds_sum{method="POST",route="/withdrawals"}');
  const requests = delta('ledgergate_http_request_duration_seconds_count{method="POST",route="/withdrawals"}');
  const ms = (seconds: number, count: number) => (count > 0 ? ((seconds / count) * 1000).toFixed(2) : '?');
  const stageMs = STAGES.map((stage) => {
    const sum = delta(`ledgergate_ledger_stage_duration_seconds_sum{stage="${stage}"}`);
    return { stage, sum, perRequest: requests > 0 ? (sum / requests) * 1000 : Number.NaN };
  });
  const inBatcher = stageMs.reduce((total, { perRequest }) => total + perRequest, 0);
  const requestMs = requests > 0 ? (requestSum / requests) * 1000 : Number.NaN;
  const batches = delta('ledgergate_ledger_batch_size_count');
  const decisions = delta('ledgergate_ledger_batch_size_sum');
  const commits = delta('ledgergate_eventstore_append_duration_seconds_count');
  const appends = delta('ledgergate_eventstore_append_batch_size_sum');
  return [
    `\nwhere a POST /withdrawals waits (the API process; mean ms per request over ${requests} requests):\n`,
    '| stage | ms |',
    '|---|---:|',
    `| whole request (as the API timed it) | ${requestMs.toFixed(2)} |`,
    ...stageMs.map(({ stage, perRequest }) => `| ledger batch: ${stage} | ${perRequest.toFixed(2)} |`),
    `| outside the batcher (key, organization, checks, answer) | ${(requestMs - inBatcher).toFixed(2)} |`,
    '',
    `ledger batches: ${batches} of ${decisions} decisions (mean ${(decisions / Math.max(batches, 1)).toFixed(1)}); ` +
      `group commits of the API: ${commits} for ${appends} appends, ${ms(delta('ledgergate_eventstore_append_duration_seconds_sum'), commits)} ms each`,
    retriesAndLoads(before, after, created),
  ];
};

/**
 * One line on a process's CPU and garbage collections between two scrapes of its /metrics
 * (process_cpu_seconds_total, and prom-client's nodejs_gc_duration_seconds): ms of CPU per `unit`,
 * and minor (scavenges) and major (mark-compact) collections, how many and their time per 1,000
 * of them, with the ms each took. Allocation per operation shows up as collections.
 */
export const describeCollections = (process: string, before: Samples, after: Samples, units: number, unit: string): string => {
  const delta = deltaOf(before, after);
  const perThousand = (value: number) => (units > 0 ? (value * 1000) / units : Number.NaN);
  const kind = (name: 'minor' | 'major') => {
    const count = delta(`nodejs_gc_duration_seconds_count{kind="${name}"}`);
    const ms = delta(`nodejs_gc_duration_seconds_sum{kind="${name}"}`) * 1000;
    return `${name} ${perThousand(count).toFixed(2)} (${perThousand(ms).toFixed(0)} ms${count > 0 ? `, ${(ms / count).toFixed(1)} ms each` : ''})`;
  };
  const cpuMs = delta('process_cpu_seconds_total') * 1000;
  return `${process}: CPU ${(units > 0 ? cpuMs / units : Number.NaN).toFixed(3)} ms a ${unit}; garbage collections per 1,000: ${kind('minor')}, ${kind('major')}`;
};
