import { accountsProjection } from './accounts.js';
import { auditStreamsProjection } from './audit-streams.js';
import { balancesProjection } from './balances.js';
import { depositsProjection } from './deposits.js';
import { organizationsProjection } from './organizations.js';
import type { Projection } from './projection.js';
import { sweepQueueProjection } from './sweep-queue.js';
import { sweepsProjection } from './sweeps.js';
import { withdrawalsProjection } from './withdrawals.js';

/**
 * Every projection the service runs. Names are stable (they key checkpoints and locks).
 * The domain issues add theirs here.
 */
export const allProjections = (): Projection[] => [organizationsProjection, accountsProjection, depositsProjection, balancesProjection, sweepQueueProjection, sweepsProjection, withdrawalsProjection, auditStreamsProjection];
