import { accountsProjection } from './accounts.js';
import { organizationsProjection } from './organizations.js';
import type { Projection } from './projection.js';

/**
 * Every projection the service runs. Names are stable (they key checkpoints and locks).
 * The domain issues add theirs here.
 */
export const allProjections = (): Projection[] => [organizationsProjection, accountsProjection];
