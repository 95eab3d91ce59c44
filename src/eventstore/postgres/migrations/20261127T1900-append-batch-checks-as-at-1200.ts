import type { Kysely } from 'kysely';
import * as appendBatchChecksNoEmptyCleanup from './20261127T1200-append-batch-checks-no-empty-cleanup.js';
import * as appendBatchChecksHeadsAtLock from './20261127T1500-append-batch-checks-heads-at-lock.js';

/**
 * `eventstore.append_batch_checks` back to its 20261127T1200 version, the same arguments, answer
 * and meaning. 20261127T1400 and 20261127T1500 wrote each stream row once, which made a ledger batch
 * of new withdrawals cheaper and a one-event append dearer (appends a second against pgbench's
 * equivalent transaction: 1.10 with them, 1.18 without, back to back). They stay in this set as they
 * landed, so a store that ran them still matches the set; this migration replaces their function
 * with 20261127T1200's again, on such a store and on a new one alike.
 *
 * Replaced in place (`create or replace`): a process of the previous version calls the same
 * function with the same meaning during a rolling upgrade. Frozen once landed: change it with a
 * new migration.
 */
export const up = (db: Kysely<unknown>): Promise<void> => appendBatchChecksNoEmptyCleanup.up(db);

export const down = (db: Kysely<unknown>): Promise<void> => appendBatchChecksHeadsAtLock.up(db);
