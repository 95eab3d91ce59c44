import type { Kysely } from 'kysely';

export const up = async (db: Kysely<unknown>): Promise<void> => {
  // which organization owns each exportable stream (projection `audit-streams`): the audit export
  // keeps an organization's events by it; org_id null means "no organization" (an unattributed deposit)
  await db.schema
    .createTable('audit_streams')
    .addColumn('stream', 'text', (column) => column.notNull())
    .addColumn('org_id', 'text')
    // the position of the stream's first event, which decided its organization
    .addColumn('first_position', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('audit_streams_pkey', ['stream'])
    .execute();
  await db.schema.createIndex('audit_streams_org_idx').on('audit_streams').columns(['org_id', 'stream']).execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.dropTable('audit_streams').execute();
};
