import { sql, type Kysely } from 'kysely';

/**
 * The webhook outbox and its attempt log (CONTRACT §7). Not a projection's own table: a rebuild
 * must not empty it, since `dedupe_key` is what stops a replay from sending an event twice.
 * No foreign key to `organizations`, which a rebuild truncates.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'uuid', (column) => column.notNull())
    // insertion order: lists are newest first by it, and their cursor is it
    .addColumn('seq', 'bigint', (column) => column.notNull().generatedAlwaysAsIdentity())
    .addColumn('org_id', 'text', (column) => column.notNull())
    .addColumn('event_type', 'text', (column) => column.notNull())
    .addColumn('dedupe_key', 'text', (column) => column.notNull())
    .addColumn('body', 'text', (column) => column.notNull())
    .addColumn('event_timestamp', 'timestamptz', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull().defaultTo('pending'))
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('claim_token', 'uuid')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .addColumn('delivered_at', 'timestamptz')
    .addPrimaryKeyConstraint('webhook_deliveries_pkey', ['id'])
    .addUniqueConstraint('webhook_deliveries_seq_key', ['seq'])
    .addUniqueConstraint('webhook_deliveries_dedupe_key_key', ['dedupe_key'])
    .addCheckConstraint('webhook_deliveries_status_check', sql`status in ('pending', 'delivered', 'failed')`)
    .addCheckConstraint('webhook_deliveries_attempts_check', sql`attempts >= 0`)
    .addCheckConstraint('webhook_deliveries_schedule_check', sql`(status = 'pending') = (next_attempt_at is not null)`)
    .addCheckConstraint('webhook_deliveries_claim_check', sql`claim_token is null or status = 'pending'`)
    .addCheckConstraint('webhook_deliveries_delivered_at_check', sql`(status = 'delivered') = (delivered_at is not null)`)
    .addCheckConstraint('webhook_deliveries_body_size_check', sql`octet_length(body) <= 262144`)
    .addCheckConstraint('webhook_deliveries_dedupe_key_length_check', sql`char_length(dedupe_key) between 1 and 512`)
    .addCheckConstraint('webhook_deliveries_last_error_length_check', sql`char_length(last_error) <= 1000`)
    .execute();
  // the dispatcher's claim and its next wake-up: due pending deliveries, earliest first
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  // GET /webhooks/deliveries, newest first, with and without a status
  await db.schema.createIndex('webhook_deliveries_org_seq_idx').on('webhook_deliveries').columns(['org_id', 'seq']).execute();
  await db.schema.createIndex('webhook_deliveries_org_status_seq_idx').on('webhook_deliveries').columns(['org_id', 'status', 'seq']).execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'uuid', (column) => column.notNull())
    .addColumn('delivery_id', 'uuid', (column) => column.notNull())
    .addColumn('attempt', 'integer', (column) => column.notNull())
    .addColumn('started_at', 'timestamptz', (column) => column.notNull())
    .addColumn('finished_at', 'timestamptz')
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer')
    .addPrimaryKeyConstraint('webhook_attempts_pkey', ['id'])
    .addForeignKeyConstraint('webhook_attempts_delivery_id_fkey', ['delivery_id'], 'webhook_deliveries', ['id'], (constraint) =>
      constraint.onDelete('cascade'),
    )
    .addCheckConstraint('webhook_attempts_attempt_check', sql`attempt >= 1`)
    .addCheckConstraint('webhook_attempts_duration_check', sql`duration_ms >= 0`)
    .addCheckConstraint('webhook_attempts_error_length_check', sql`char_length(error) <= 1000`)
    .execute();
  await db.schema.createIndex('webhook_attempts_delivery_id_idx').on('webhook_attempts').columns(['delivery_id', 'started_at']).execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.dropTable('webhook_attempts').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
};
