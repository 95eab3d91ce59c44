import type { MigrationSet } from '../../../db/migrate.js';
import * as eventStore from './20261122T0900-event-store.js';
import * as appendBatch from './20261123T1100-append-batch.js';
import * as appendBatchFromIndexes from './20261124T0900-append-batch-from-indexes.js';
import * as appendBatchSetBased from './20261126T1100-append-batch-set-based.js';
import * as appendBatchPositions from './20261126T1700-append-batch-positions.js';
import * as appendBatchChecks from './20261127T0900-append-batch-checks.js';
import * as eventsWithoutTypeIndex from './20261127T1100-events-without-type-index.js';
import * as appendBatchChecksNoEmptyCleanup from './20261127T1200-append-batch-checks-no-empty-cleanup.js';
import * as appendBatchChecksStreamsWrittenOnce from './20261127T1400-append-batch-checks-streams-written-once.js';
import * as appendBatchChecksHeadsAtLock from './20261127T1500-append-batch-checks-heads-at-lock.js';
import * as appendBatchChecksAsAt1200 from './20261127T1900-append-batch-checks-as-at-1200.js';
import * as appendBatchChecksLinearHeads from './20261128T0100-append-batch-checks-linear-heads.js';

export const eventStoreMigrations: MigrationSet = {
  schema: 'eventstore',
  migrations: {
    '20261122T0900-event-store': eventStore,
    '20261123T1100-append-batch': appendBatch,
    '20261124T0900-append-batch-from-indexes': appendBatchFromIndexes,
    '20261126T1100-append-batch-set-based': appendBatchSetBased,
    '20261126T1700-append-batch-positions': appendBatchPositions,
    '20261127T0900-append-batch-checks': appendBatchChecks,
    '20261127T1100-events-without-type-index': eventsWithoutTypeIndex,
    '20261127T1200-append-batch-checks-no-empty-cleanup': appendBatchChecksNoEmptyCleanup,
    '20261127T1400-append-batch-checks-streams-written-once': appendBatchChecksStreamsWrittenOnce,
    '20261127T1500-append-batch-checks-heads-at-lock': appendBatchChecksHeadsAtLock,
    '20261127T1900-append-batch-checks-as-at-1200': appendBatchChecksAsAt1200,
    '20261128T0100-append-batch-checks-linear-heads': appendBatchChecksLinearHeads,
  },
};
