import fs from 'node:fs/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { supportedChainIds } from '../../src/catalog/registry.js';
import { ADVISORY_LOCK_NAMESPACES } from '../../src/db/advisory-locks.js';
import { AUDIT_STREAMS_PROJECTION } from '../../src/projections/audit-streams.js';
import { allProjections } from '../../src/projections/registry.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { processEnvironment, runCli, startServiceProcess, waitUntilReady, type ServiceProcess } from '../support/service-process.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format, read strictly enough to fail on anything malformed. */
const parseExposition = (text: string): { samples: Sample[]; types: Map<string, string> } => {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ')) continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not a sample line: ${line}`);
    const labels = Object.fromEntries([...(sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((match) => [match[1]!, match[2]!]));
    samples.push({ name: sample[1]!, labels, value: Number(sample[3]) });
  }
  return { samples, types };
};

const scrape = async (url: string) => {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await response.text());
};

const valueOf = (samples: Sample[], name: string, labels: Record<string, string>) =>
  samples.find((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))?.value ?? 0;

/** A fresh database and DATA_DIR for the `serve` process of a describe block, cleaned up after it (the process stopped first). */
const onFreshDatabase = (label: string, extra: Record<string, string>, started: () => ServiceProcess | undefined) => {
  const fresh = {} as { database: TestDatabase; env: Awaited<ReturnType<typeof processEnvironment>> };
  beforeAll(async () => {
    fresh.database = await createTestDatabase(label);
    fresh.env = await processEnvironment(fresh.database, label, extra);
  });
  afterAll(async () => {
    const service = started();
    service?.child.kill('SIGTERM');
    await service?.exited;
    await fs.rm(fresh.env.DATA_DIR, { recursive: true, force: true });
    await fresh.database.drop();
  });
  return fresh;
};

/** CONTRACT §11, on the real process: metrics, readiness, the start line, the way in. */
describe('operations: GET /metrics, GET /readyz, the start line', () => {
  let service: ServiceProcess;
  const fresh = onFreshDatabase('operations', { DEVNET_BLOCK_TIME_MS: '200' }, () => service);
  beforeAll(async () => {
    service = await startServiceProcess(fresh.env);
  });

  it('serves every metric CONTRACT §11 names, the runtime defaults, with bounded labels', async () => {
    await fetch(`${service.url}/withdrawals/${crypto.randomUUID()}`);
    // the chain watchers report heights once they scanned
    await expect.poll(async () => (await scrape(service.url)).samples.some((sample) => sample.name === 'ledgergate_chain_head_lag_blocks'), { timeout: 20_000 }).toBe(true);
    const { samples, types } = await scrape(service.url);
    expect(Object.fromEntries([...types].filter(([name]) => name.startsWith('ledgergate_')))).toMatchObject({
      ledgergate_http_requests_total: 'counter',
      ledgergate_http_request_duration_seconds: 'histogram',
      ledgergate_projection_lag_events: 'gauge',
      ledgergate_webhook_outbox_pending: 'gauge',
      ledgergate_webhook_outbox_oldest_pending_age_seconds: 'gauge',
      ledgergate_webhook_deliveries_total: 'counter',
      ledgergate_withdrawals: 'gauge',
      ledgergate_chain_head_lag_blocks: 'gauge',
      ledgergate_chain_watcher_height: 'gauge',
      ledgergate_chain_node_head: 'gauge',
      ledgergate_eventstore_append_duration_seconds: 'histogram',
      ledgergate_eventstore_append_batch_size: 'histogram',
      ledgergate_ledger_batch_size: 'histogram',
      ledgergate_sweeps_pending: 'gauge',
      ledgergate_stuck_transactions: 'gauge',
      ledgergate_worker_first_pass_seconds: 'gauge',
      ledgergate_worker_first_pass_events_read: 'gauge',
    });
    expect(types.get('process_resident_memory_bytes')).toBe('gauge');
    expect(types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');

    // route templates, never raw paths or ids
    const routes = new Set(samples.filter((sample) => sample.name === 'ledgergate_http_requests_total').map((sample) => sample.labels.route));
    expect(routes).toContain('/withdrawals/:id');
    for (const route of routes) expect(route).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}/);
    expect(samples.find((sample) => sample.name === 'ledgergate_http_request_duration_seconds_bucket' && sample.labels.route === '/withdrawals/:id')).toBeDefined();

    expect(new Set(samples.filter((sample) => sample.name === 'ledgergate_projection_lag_events').map((sample) => sample.labels.projection))).toEqual(
      new Set(allProjections().map((projection) => projection.name)),
    );
    expect(new Set(samples.filter((sample) => sample.name === 'ledgergate_withdrawals').map((sample) => sample.labels.status))).toEqual(
      new Set(['Pending', 'PendingApproval', 'Processing', 'Completed', 'Failed', 'Cancelled']),
    );
    expect(valueOf(samples, 'ledgergate_webhook_outbox_pending', {})).toBe(0);
    const lags = samples.filter((sample) => sample.name === 'ledgergate_chain_head_lag_blocks');
    for (const lag of lags) expect(lag.labels.chain).toMatch(/^[a-z0-9]+:[a-zA-Z0-9]+$/);

    // every running chain's (all of them: the devnet runs every chain outside production) deposit
    // watcher and withdrawal processor reports its first pass once it ended
    const chainsOf = (found: Sample[], worker: string) => new Set(found.filter((sample) => sample.name === 'ledgergate_worker_first_pass_seconds' && sample.labels.worker === worker).map((sample) => sample.labels.chain));
    const running = new Set(supportedChainIds());
    await expect.poll(async () => {
      const found = (await scrape(service.url)).samples;
      return [chainsOf(found, 'deposit-watcher'), chainsOf(found, 'withdrawal-processor')];
    }, { timeout: 60_000 }).toEqual([running, running]);
    const started = (await scrape(service.url)).samples.filter((found) => found.name.startsWith('ledgergate_worker_first_pass_'));
    for (const sample of started) {
      expect(['deposit-watcher', 'withdrawal-processor']).toContain(sample.labels.worker);
      expect(sample.value).toBeGreaterThanOrEqual(0);
    }
    // a fresh store: no history before the first pass to read
    expect(started.filter((found) => found.name === 'ledgergate_worker_first_pass_events_read').map((found) => found.value)).toEqual([...running, ...running].map(() => 0));
  });

  it('counts a request when it is made', async () => {
    const labels = { method: 'GET', route: '/healthz', status: '200' };
    const before = valueOf((await scrape(service.url)).samples, 'ledgergate_http_requests_total', labels);
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    expect(valueOf((await scrape(service.url)).samples, 'ledgergate_http_requests_total', labels)).toBe(before + 1);
    const unmatched = { method: 'GET', route: 'unmatched', status: '404' };
    const notFoundBefore = valueOf((await scrape(service.url)).samples, 'ledgergate_http_requests_total', unmatched);
    await fetch(`${service.url}/no/such/${crypto.randomUUID()}`);
    expect(valueOf((await scrape(service.url)).samples, 'ledgergate_http_requests_total', unmatched)).toBe(notFoundBefore + 1);
  });

  it('says at start where it listens, which chains run on what, and what to run next', () => {
    const line = service.logs.find((record) => record.msg === 'ledgergate listening');
    expect(line).toMatchObject({ level: 'info', url: service.url, console: `${service.url}/console`, docs: `${service.url}/docs`, eventStore: 'postgres', role: 'all' });
    expect(line?.chains).toMatchObject({ 'eip155:1': 'devnet', 'xrpl:mainnet': 'devnet' });
    expect(line?.next).toMatch(/npx ledgergate bootstrap --org <name> --user <username>/);
    expect(service.logs.some((record) => /no chain is enabled/.test(String(record.msg)))).toBe(false);
  });

  it('leads from / to the console', async () => {
    const response = await fetch(`${service.url}/`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/console');
    expect((await fetch(`${service.url}/`)).status).toBe(200);
  });

  it('puts the request id in an error body and on the request log line', async () => {
    const response = await fetch(`${service.url}/withdrawals`, { headers: { 'x-request-id': 'ticket-4711' } });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'UNAUTHORIZED', details: { requestId: 'ticket-4711' } });
    await expect.poll(() => service.logs.find((record) => record.requestId === 'ticket-4711' && record.msg === 'request'), { timeout: 5_000 }).toMatchObject({ status: 401 });
  });
});

describe('GET /readyz: 503 until the projections caught up with the store as it was at start', () => {
  let service: ServiceProcess | undefined;
  const fresh = onFreshDatabase('readiness', { DEVNET_BLOCK_TIME_MS: '3600000' }, () => service);

  it('answers 503 naming the projection still behind, and 200 once it caught up', async () => {
    // history before the start: an organization's events, which the audit-streams projection takes
    expect((await runCli(['bootstrap', '--org', 'Acme', '--user', 'alice', '--json'], fresh.env)).code).toBe(0);
    // another process holds that projection (as a second `serve` would) and has not applied them yet
    const holder = new pg.Client(fresh.database.config);
    await holder.connect();
    await holder.query('select pg_advisory_lock($1, hashtext($2))', [ADVISORY_LOCK_NAMESPACES.projections, AUDIT_STREAMS_PROJECTION]);
    try {
      service = await startServiceProcess(fresh.env, { waitReady: false });
      expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
      const response = await fetch(`${service.url}/readyz`);
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ error: 'SERVICE_UNAVAILABLE', details: { waitingFor: [`projection ${AUDIT_STREAMS_PROJECTION}`] } });
    } finally {
      await holder.end();
    }
    // the lock is free: this process's runner takes the projection over and catches it up
    await waitUntilReady(service.url, 30_000);
    expect(await (await fetch(`${service.url}/readyz`)).json()).toEqual({ status: 'ready' });
    const line = service.logs.find((record) => record.msg === 'ledgergate listening');
    expect(line).toBeDefined();
    expect(line).not.toHaveProperty('next');
  });
});

describe('a production start with no chain enabled', () => {
  let service: ServiceProcess | undefined;
  const fresh = onFreshDatabase('production', { NODE_ENV: 'production' }, () => service);

  it('warns that no chain runs, and still says where it listens and what to run next', async () => {
    service = await startServiceProcess(fresh.env);
    const line = service.logs.find((record) => record.msg === 'ledgergate listening');
    expect(line).toMatchObject({ level: 'info', url: service.url, chains: {} });
    expect(line?.next).toMatch(/npx ledgergate bootstrap/);
    expect(service.logs.find((record) => record.level === 'warn' && /no chain is enabled/.test(String(record.msg)))).toBeDefined();
  });
});
