import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { metricsRegistry, projectionBatchSize } from '../../src/observability/metrics.js';
import { ORGANIZATIONS_PROJECTION, organizationsProjection } from '../../src/projections/organizations.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { startTestService, type TestService } from '../support/api-harness.js';

/** how many batches of `projection` this thread's metrics counted */
const batchesCounted = async (projection: string) => {
  const { values } = await projectionBatchSize.get();
  return values.find((value) => value.metricName?.endsWith('_count') && value.labels.projection === projection)?.value ?? 0;
};

describe('the projections follow the store live on a thread of their own', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({}, { captureLogs: true });
  });
  afterAll(async () => {
    await service.stop();
  });

  it('applies what is appended after the start, and its log lines and batch figures reach this thread', async () => {
    const batchesBefore = await batchesCounted(ORGANIZATIONS_PROJECTION);
    // bootstrap waits until the organizations projection's checkpoint passed its events
    await service.bootstrap('Thread Org', ['alice']);
    expect(await batchesCounted(ORGANIZATIONS_PROJECTION)).toBeGreaterThan(batchesBefore);
    const active = service.logLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'projection: active');
    expect(new Set(active.map((line) => line.projection))).toContain(ORGANIZATIONS_PROJECTION);
  });

  it("answers the thread's own event-loop delay in this thread's metrics", async () => {
    const { values } = await metricsRegistry.getSingleMetric('ledgergate_projection_thread_eventloop_lag_seconds')!.get();
    expect(values.map((value) => value.labels.stat).sort()).toEqual(['max', 'p50', 'p90', 'p99']);
    for (const { value } of values) expect(value).toBeGreaterThanOrEqual(0);
  });

  /** a runner of the organizations projection beside the thread's: it can catch up only while no other holds the projection */
  const anotherRunner = () =>
    new ProjectionRunner({ projection: organizationsProjection, store: service.infrastructure.store, database: service.infrastructure.databaseTarget, logger: createLogger('silent') });

  it('stops: once the workers stopped, its runners have let their projections go', async () => {
    expect(await anotherRunner().catchUp()).toBe(false);
    await service.stopWorkers();
    expect(await anotherRunner().catchUp()).toBe(true);
  });
});
