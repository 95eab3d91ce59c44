import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import type { AccountsTable } from './tables/accounts.js';
import type { AuditStreamsTable } from './tables/audit-streams.js';
import type { ApiKeysTable } from './tables/api-keys.js';
import type { BalancesTable } from './tables/balances.js';
import type { DepositsTable } from './tables/deposits.js';
import type { OrganizationsTable } from './tables/organizations.js';
import type { ProjectionCheckpointsTable } from './tables/projection-checkpoints.js';
import type { SweepAttemptsTable, SweepQueueTable, SweepsTable } from './tables/sweeps.js';
import type { UsersTable } from './tables/users.js';
import type { WebhookAttemptsTable } from './tables/webhook-attempts.js';
import type { WebhookDeliveriesTable } from './tables/webhook-deliveries.js';
import type { WithdrawalsTable } from './tables/withdrawals.js';

/** The read-model database, one small file per table under ./tables. */
export interface Database {
  projection_checkpoints: ProjectionCheckpointsTable;
  organizations: OrganizationsTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  accounts: AccountsTable;
  deposits: DepositsTable;
  balances: BalancesTable;
  sweep_queue: SweepQueueTable;
  sweep_attempts: SweepAttemptsTable;
  sweeps: SweepsTable;
  withdrawals: WithdrawalsTable;
  audit_streams: AuditStreamsTable;
}

export const createDatabase = (pool: pg.Pool): Kysely<Database> =>
  new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });

/**
 * A Kysely instance bound to one connection, so that a session-level advisory lock and the
 * transactions that rely on it share the same PostgreSQL session.
 */
export const databaseOnClient = (client: pg.Client): Kysely<Database> =>
  new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: {
        connect: async () => ({ query: client.query.bind(client), release: () => undefined }),
        end: async () => undefined,
      } as unknown as pg.Pool,
    }),
  });
