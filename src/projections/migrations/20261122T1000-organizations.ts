import { sql, type Kysely } from 'kysely';

export const up = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (column) => column.notNull())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('webhook_url', 'text')
    .addColumn('webhook_signing_secret_encrypted', 'text', (column) => column.notNull())
    .addColumn('min_withdrawal_signers', 'integer', (column) => column.notNull())
    .addColumn('created_at', 'timestamptz', (column) => column.notNull())
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull())
    .addPrimaryKeyConstraint('organizations_pkey', ['id'])
    .execute();
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (column) => column.notNull())
    .addColumn('org_id', 'text', (column) => column.notNull())
    .addColumn('username', 'text', (column) => column.notNull())
    .addColumn('created_at', 'timestamptz', (column) => column.notNull())
    .addPrimaryKeyConstraint('users_pkey', ['id'])
    .addUniqueConstraint('users_username_key', ['username'])
    .execute();
  await db.schema.createIndex('users_org_id_idx').on('users').columns(['org_id', 'created_at']).execute();
  await db.schema
    .createTable('api_keys')
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('org_id', 'text', (column) => column.notNull())
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('key_digest', 'text', (column) => column.notNull())
    .addColumn('created_at', 'timestamptz', (column) => column.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .addPrimaryKeyConstraint('api_keys_pkey', ['key_id'])
    .execute();
  await db.schema.createIndex('api_keys_org_id_idx').on('api_keys').column('org_id').where(sql.ref('revoked_at'), 'is', null).execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.dropTable('api_keys').execute();
  await db.schema.dropTable('users').execute();
  await db.schema.dropTable('organizations').execute();
};
