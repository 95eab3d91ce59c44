import { allProjections } from '../../src/projections/registry.js';

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
  return ['projections over the load (the workers process; means per batch):', '| projection | batches | events | apply ms | recorded → checkpoint ms |', '|---|---:|---:|---:|---:|', ...rows];
};
