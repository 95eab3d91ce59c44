import { allProjections } from '../../src/projections/registry.js';
import { summarize } from './stats.js';

/**
 * What each projection did between two scrapes of the process running the projections (the
 * workers' /metrics): its batches, their mean size, the mean time one took to apply (handler and
 * checkpoint, one transaction), and the mean delay from a batch's last event recorded to its
 * checkpoint committed. The slowest projection's delay is what the lag sampler sees.
 */
export const describeProjectionStages = (before: Map<string, number>, after: Map<string, number>): string[] => {
  const delta = (name: string, projection: string) => (after.get(`${name}{projection="${projection}"}`) ?? 0) - (before.get(`${name}{projection="${projection}"}`) ?? 0);
  const rows = allProjections().map(({ name }) => {
    const batches = delta('ledgergate_projection_batch_size_count', name);
    const mean = (sum: number, scale = 1) => (batches > 0 ? ((sum / batches) * scale).toFixed(1) : '-');
    return `| ${name} | ${batches} | ${mean(delta('ledgergate_projection_batch_size_sum', name))} | ${mean(delta('ledgergate_projection_apply_duration_seconds_sum', name), 1000)} | ${mean(delta('ledgergate_projection_event_delay_seconds_sum', name), 1000)} |`;
  });
  return ['projections over the load (the process running them; means per batch):', '| projection | batches | events | apply ms | recorded → checkpoint ms |', '|---|---:|---:|---:|---:|', ...rows];
};

/** Each projection's own lag over the load (the time until its checkpoint reached what it owed each position seen): `balances p50 70 / p99 210 ms, …` */
export const describeProjectionLags = (byProjection: Map<string, number[]>): string =>
  `lag by projection: ${[...byProjection]
    .filter(([, lags]) => lags.length > 0)
    .map(([name, lags]) => {
      const { p50, p99, max } = summarize(lags);
      return `${name} p50 ${p50.toFixed(0)} / p99 ${p99.toFixed(0)} / max ${max.toFixed(0)} ms`;
    })
    .join(', ')}`;

/** The event loop's delay in the process running the projections since its last scrape (the runtime's own monitor, 10-ms resolution) */
export const describeEventLoopDelay = (samples: Map<string, number>, processName = 'the workers'): string => {
  const ms = (name: string) => ((samples.get(`nodejs_eventloop_lag_${name}_seconds`) ?? Number.NaN) * 1000).toFixed(1);
  return `${processName}' event-loop delay over the load: p50 ${ms('p50')}, p90 ${ms('p90')}, p99 ${ms('p99')}, max ${ms('max')} ms`;
};
