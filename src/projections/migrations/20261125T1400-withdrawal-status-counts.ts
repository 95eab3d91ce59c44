import { sql, type Kysely } from 'kysely';

/**
 * CONTRACT §11's `ledgergate_withdrawals{status}` without counting the withdrawals table at each
 * scrape: one row per status, kept by statement-level triggers on `withdrawals` (each statement of
 * the projection, a batch of any size, moves the counts once, in its own transaction, so they are
 * exactly as committed; a rebuild's delete and replay move them down and up again).
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema
    .createTable('withdrawal_status_counts')
    .addColumn('status', 'text', (column) => column.primaryKey())
    .addColumn('count', 'bigint', (column) => column.notNull())
    .execute();
  await sql`
    insert into withdrawal_status_counts (status, count)
    select status, (select count(*) from withdrawals w where w.status = s.status)
      from unnest(array['Pending', 'PendingApproval', 'Processing', 'Completed', 'Failed', 'Cancelled']) as s (status)
  `.execute(db);
  await sql`
    create function withdrawal_status_counts_move() returns trigger language plpgsql as $$
    begin
      if tg_op = 'TRUNCATE' then
        update withdrawal_status_counts set count = 0;
        return null;
      end if;
      if tg_op in ('UPDATE', 'DELETE') then
        update withdrawal_status_counts c set count = c.count - moved.n
          from (select status, count(*) as n from old_rows group by status) moved where c.status = moved.status;
      end if;
      if tg_op in ('UPDATE', 'INSERT') then
        update withdrawal_status_counts c set count = c.count + moved.n
          from (select status, count(*) as n from new_rows group by status) moved where c.status = moved.status;
      end if;
      return null;
    end $$
  `.execute(db);
  await sql`create trigger withdrawals_count_insert after insert on withdrawals referencing new table as new_rows for each statement execute function withdrawal_status_counts_move()`.execute(db);
  await sql`create trigger withdrawals_count_update after update on withdrawals referencing old table as old_rows new table as new_rows for each statement execute function withdrawal_status_counts_move()`.execute(db);
  await sql`create trigger withdrawals_count_delete after delete on withdrawals referencing old table as old_rows for each statement execute function withdrawal_status_counts_move()`.execute(db);
  await sql`create trigger withdrawals_count_truncate after truncate on withdrawals for each statement execute function withdrawal_status_counts_move()`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  for (const trigger of ['insert', 'update', 'delete', 'truncate']) await sql`drop trigger ${sql.raw(`withdrawals_count_${trigger}`)} on withdrawals`.execute(db);
  await sql`drop function withdrawal_status_counts_move()`.execute(db);
  await db.schema.dropTable('withdrawal_status_counts').execute();
};
