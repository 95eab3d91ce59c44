import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { metricsRegistry, startDefaultMetrics } from '../../src/observability/metrics.js';

const root = path.resolve(import.meta.dirname, '../..');
const prometheus = z.object({ type: z.literal('prometheus'), uid: z.string().min(1) }).strict();

/** The part of Grafana's dashboard model (schemaVersion 39) that file provisioning loads and renders. */
const dashboardSchema = z
  .object({
    uid: z.string().regex(/^[a-zA-Z0-9_-]{1,40}$/),
    title: z.string().min(1),
    description: z.string().optional(),
    tags: z.array(z.string()),
    timezone: z.enum(['browser', 'utc', '']),
    editable: z.boolean(),
    schemaVersion: z.number().int().min(36),
    version: z.number().int().nonnegative(),
    refresh: z.string().regex(/^\d+[smhd]$/),
    time: z.object({ from: z.string(), to: z.string() }).strict(),
    annotations: z.object({ list: z.array(z.unknown()) }).strict(),
    templating: z.object({ list: z.array(z.unknown()) }).strict(),
    panels: z
      .array(
        z
          .object({
            id: z.number().int().positive(),
            type: z.enum(['timeseries', 'stat', 'gauge', 'bargauge', 'table']),
            title: z.string().min(1),
            datasource: prometheus,
            gridPos: z.object({ h: z.number().int().positive(), w: z.number().int().min(1).max(24), x: z.number().int().min(0).max(23), y: z.number().int().min(0) }).strict(),
            fieldConfig: z.object({ defaults: z.object({ unit: z.string() }).passthrough(), overrides: z.array(z.unknown()) }).strict(),
            options: z.record(z.string(), z.unknown()),
            targets: z.array(z.object({ refId: z.string().regex(/^[A-Z]$/), datasource: prometheus, expr: z.string().min(1), legendFormat: z.string() }).strict()).min(1),
          })
          .strict()
          .refine((panel) => panel.gridPos.x + panel.gridPos.w <= 24, 'a panel wider than the grid'),
      )
      .min(1),
  })
  .strict();

/** Every series name the service exposes, with the suffixes Prometheus gives histograms. */
const exposedNames = async (): Promise<Set<string>> => {
  startDefaultMetrics();
  const metrics = await metricsRegistry.getMetricsAsJSON();
  return new Set(metrics.flatMap((metric) => (String(metric.type) === 'histogram' ? ['_bucket', '_sum', '_count'].map((suffix) => metric.name + suffix) : [metric.name])));
};

describe('deploy/: the Grafana dashboard', () => {
  const dashboard = dashboardSchema.parse(JSON.parse(fs.readFileSync(path.join(root, 'deploy/grafana/dashboards/ledgergate.json'), 'utf8')));
  const expressions = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
  const referenced = new Set(expressions.flatMap((expr) => [...expr.matchAll(/\b(ledgergate_[a-z_]+|process_[a-z_]+|nodejs_[a-z0-9_]+)\b/g)].map((match) => match[1]!)));

  it('is a valid dashboard: unique panel ids, unique refIds per panel, the provisioned data source', () => {
    expect(new Set(dashboard.panels.map((panel) => panel.id)).size).toBe(dashboard.panels.length);
    for (const panel of dashboard.panels) expect(new Set(panel.targets.map((target) => target.refId)).size).toBe(panel.targets.length);
    const datasources = fs.readFileSync(path.join(root, 'deploy/grafana/provisioning/datasources/prometheus.yml'), 'utf8');
    for (const panel of dashboard.panels) expect(datasources).toContain(`uid: ${panel.datasource.uid}`);
  });

  it('queries only metric names the service exposes', async () => {
    const names = await exposedNames();
    expect(referenced.size).toBeGreaterThan(10);
    expect([...referenced].filter((name) => !names.has(name))).toEqual([]);
  });

  it('shows throughput, latency, projection lag, the outbox, chain lag and withdrawals by status', () => {
    for (const name of [
      'ledgergate_http_requests_total',
      'ledgergate_http_request_duration_seconds_bucket',
      'ledgergate_projection_lag_events',
      'ledgergate_webhook_outbox_pending',
      'ledgergate_chain_head_lag_blocks',
      'ledgergate_withdrawals',
    ])
      expect(referenced).toContain(name);
  });

  it('is the dashboard Prometheus and Grafana are provisioned with in docker-compose.yml', () => {
    const compose = fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    expect(compose).toContain('./deploy/grafana/dashboards:/var/lib/grafana/dashboards:ro');
    expect(compose).toContain('./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro');
    expect(fs.readFileSync(path.join(root, 'deploy/prometheus/prometheus.yml'), 'utf8')).toMatch(/metrics_path: \/metrics[\s\S]*targets: \["app:8080"\]/);
  });
});
