import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, serviceParts } from '../../src/config/env.js';

describe('configuration (CONTRACT §1)', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 8080,
      HOST: '127.0.0.1',
      DATA_DIR: './.data',
      dataDir: path.resolve('./.data'),
      NODE_ENV: 'development',
      isProduction: false,
      RATE_LIMIT_PER_MINUTE: 1200,
      LOGIN_RATE_LIMIT_PER_MINUTE: 10,
      DEVNET_BLOCK_TIME_MS: 2000,
      WEBHOOK_RETRY_DELAYS_MS: [5000, 25000, 120000, 600000, 3600000],
      DATABASE_POOL_SIZE: 10,
      DATABASE_READ_SIDE_POOL_SIZE: 12,
      DATABASE_WORKERS_POOL_SIZE: 16,
      SERVE_ROLE: 'all',
    });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.EVENTSTORE_URL).toBeUndefined();
  });

  it('sizes the pools per role well inside the embedded server’s 200 connections', () => {
    const config = loadConfig({});
    const pooled = config.DATABASE_POOL_SIZE + config.DATABASE_READ_SIDE_POOL_SIZE + config.DATABASE_WORKERS_POOL_SIZE;
    // beside them a process holds about 40 sessions of its own (a lock session per projection and
    // worker, LISTEN sessions, two for appends): two processes and a CLI still fit
    expect(pooled).toBeLessThanOrEqual(40);
    expect(() => loadConfig({ DATABASE_WORKERS_POOL_SIZE: '0' })).toThrow(/DATABASE_WORKERS_POOL_SIZE/);
    expect(() => loadConfig({ DATABASE_READ_SIDE_POOL_SIZE: 'many' })).toThrow(/DATABASE_READ_SIDE_POOL_SIZE/);
  });

  it('reads every variable, treating empty ones as unset', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATA_DIR: '/var/lib/ledgergate',
      DATABASE_URL: 'postgres://u:p@db:5432/ledgergate',
      EVENTSTORE_URL: 'kurrentdb://kurrentdb:2113?tls=false',
      NODE_ENV: 'production',
      LEDGERGATE_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
      WEBHOOK_RETRY_DELAYS_MS: '10,20,30',
      DEVNET_BLOCK_TIME_MS: '250',
      CHAINS_CONFIG: '',
      SERVE_ROLE: 'workers',
    });
    expect(config).toMatchObject({
      PORT: 9000,
      HOST: '0.0.0.0',
      dataDir: '/var/lib/ledgergate',
      isProduction: true,
      WEBHOOK_RETRY_DELAYS_MS: [10, 20, 30],
      DEVNET_BLOCK_TIME_MS: 250,
      SERVE_ROLE: 'workers',
    });
    expect(config.CHAINS_CONFIG).toBeUndefined();
  });

  it('runs the parts SERVE_ROLE names: all, workers, or a list of parts', () => {
    const partsOf = (role: string) => [...serviceParts(loadConfig({ SERVE_ROLE: role }).SERVE_ROLE)].sort();
    expect(partsOf('all')).toEqual(['api', 'chains', 'projections', 'webhooks']);
    expect(partsOf('workers')).toEqual(['chains', 'projections', 'webhooks']);
    expect(partsOf('api')).toEqual(['api']);
    expect(partsOf('projections')).toEqual(['projections']);
    expect(partsOf(' webhooks, chains ')).toEqual(['chains', 'webhooks']);
    for (const role of ['both', 'projections,projections', 'api,', 'workers,api', 'chains;webhooks']) {
      expect(() => loadConfig({ SERVE_ROLE: role }), role).toThrow(/SERVE_ROLE: all, workers, or a comma-separated list of api, projections, webhooks, chains/);
    }
  });

  it('requires the master secret in production, and refuses a short one', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/LEDGERGATE_SECRET_KEY: required in production/);
    expect(() => loadConfig({ LEDGERGATE_SECRET_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/LEDGERGATE_SECRET_KEY/);
  });

  it('names every invalid variable at once', () => {
    const attempt = () => loadConfig({ PORT: 'eighty', EVENTSTORE_URL: 'http://x', WEBHOOK_RETRY_DELAYS_MS: '5s,10s', NODE_ENV: 'staging', SERVE_ROLE: 'both' });
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (error) {
      const fields = (error as ConfigError).issues.map((issue) => issue.split(':')[0]);
      expect(fields.sort()).toEqual(['EVENTSTORE_URL', 'NODE_ENV', 'PORT', 'SERVE_ROLE', 'WEBHOOK_RETRY_DELAYS_MS']);
    }
  });
});
