import { sql, type Kysely } from 'kysely';

/**
 * The attempt log's foreign key to the outbox is dropped. Every attempt's row cost the statement
 * that wrote it (an outcome, about 80 rows a statement under a backlog) a trigger's query per row:
 * a descent of webhook_deliveries' primary key and a key-share lock on the delivery it had just
 * updated, a write-ahead-log record of its own (7 of an outcome's 36 buffers per attempt, 60 of a
 * delivery's 2,130 bytes of log). What the key promised holds without it: deliveries are never
 * deleted (the outbox keeps them, since their dedupe keys stop a replay from sending an event
 * twice), and an attempt is written only by the statements that hold its delivery (a claim, an
 * outcome, a redelivery, the exhausted-delivery check), each naming the id it read from the
 * delivery's row. No API reads the log; operators query it by delivery id, which its index keeps.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`alter table webhook_attempts drop constraint webhook_attempts_delivery_id_fkey`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`
    alter table webhook_attempts add constraint webhook_attempts_delivery_id_fkey
      foreign key (delivery_id) references webhook_deliveries (id) on delete cascade
  `.execute(db);
};
