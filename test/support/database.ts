import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createPool } from '../../src/db/pool.js';

export interface TestDatabase {
  config: pg.ClientConfig;
  pool: pg.Pool;
  drop(): Promise<void>;
}

/** A fresh, empty database on the run's embedded server. */
export const createTestDatabase = async (label = 'test'): Promise<TestDatabase> => {
  const server = inject('postgres');
  const name = `${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client(server);
  await admin.connect();
  await admin.query(`create database ${admin.escapeIdentifier(name)}`);
  await admin.end();
  const config = { ...server, database: name };
  const pool = createPool(config, { max: 20, purpose: 'test' });
  return {
    config,
    pool,
    drop: async () => {
      await pool.end();
      const client = new pg.Client(server);
      await client.connect();
      await client.query(`drop database if exists ${client.escapeIdentifier(name)} with (force)`);
      await client.end();
    },
  };
};
