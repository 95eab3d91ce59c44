import { randomUUID } from 'node:crypto';
import type { Event } from '@event-driven-io/emmett';
import { getPostgreSQLEventStore, type PostgresEventStore } from '@event-driven-io/emmett-postgresql';
import pg from 'pg';
import type { AppendOnce } from './closed-loop.js';
import { depositEvent } from './deposit-event.js';

const JSONB_OID = 3802;
const JSON_OID = 114;

type DepositLikeEvent = Event<string, Record<string, unknown>, Record<string, unknown>>;

export interface EmmettContender {
  store: PostgresEventStore;
  newClient: () => AppendOnce;
  /** closes the store and its pool, and gives `pg` back its own json parsers */
  close: () => Promise<void>;
}

/**
 * A URL for Emmett (it wants a connection string): the embedded server listens on a unix socket
 * only, which pg-connection-string takes as the `host` query parameter.
 */
export const connectionStringOf = (config: pg.ClientConfig): string => {
  const user = encodeURIComponent(config.user ?? 'postgres');
  const password = encodeURIComponent(String(config.password ?? ''));
  const host = encodeURIComponent(String(config.host));
  return `postgresql://${user}:${password}@localhost:${config.port ?? 5432}/${config.database}?host=${host}`;
};

/**
 * Emmett's PostgreSQL event store (`@event-driven-io/emmett-postgresql`) on a pool as large as ours.
 * Its dumbo layer replaces `pg`'s global json/jsonb parsers when the store is created; `close`
 * restores them so whatever runs in this process afterwards reads JSON as before.
 */
export const createEmmettContender = async (config: pg.ClientConfig, options: { poolSize: number; streamsPerClient: number }): Promise<EmmettContender> => {
  const parsers = { jsonb: pg.types.getTypeParser(JSONB_OID), json: pg.types.getTypeParser(JSON_OID) };
  const connectionString = connectionStringOf(config);
  const pool = new pg.Pool({ connectionString, max: options.poolSize, application_name: 'bench:emmett' });
  pool.on('error', () => undefined);
  const store = getPostgreSQLEventStore(connectionString, { connectionOptions: { pool } });
  const close = async () => {
    try {
      await store.close();
      await pool.end();
    } finally {
      pg.types.setTypeParser(JSONB_OID, parsers.jsonb);
      pg.types.setTypeParser(JSON_OID, parsers.json);
    }
  };
  try {
    await store.schema.migrate(); // creates its emt_* tables and functions, outside the measurement
  } catch (error) {
    await close();
    throw error;
  }

  // Emmett counts stream versions from 1 (0 = no stream yet) and checks the expected one exactly
  const newClient = (): AppendOnce => {
    const streams = Array.from({ length: options.streamsPerClient }, () => ({ id: randomUUID(), version: 0n }));
    let turn = 0;
    return async () => {
      const stream = streams[turn % streams.length]!;
      const { type, data, metadata } = depositEvent(stream.id, turn++);
      const event: DepositLikeEvent = { type, data, metadata: { ...metadata } };
      const result = await store.appendToStream(`account-${stream.id}`, [event], { expectedStreamVersion: stream.version });
      stream.version = result.nextExpectedStreamVersion;
    };
  };
  return { store, newClient, close };
};
