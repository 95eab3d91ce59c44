import type { MigrationSet } from '../../db/migrate.js';
import * as checkpoints from './20261122T0910-projection-checkpoints.js';
import * as organizations from './20261122T1000-organizations.js';
import * as webhooks from './20261122T1010-webhooks.js';
import * as accounts from './20261122T1100-accounts.js';
import * as organizationSwitches from './20261122T1130-organization-switches.js';
import * as depositsAndBalances from './20261122T1410-deposits-and-balances.js';
import * as sweeps from './20261122T1600-sweeps.js';
import * as withdrawals from './20261122T2000-withdrawals.js';
import * as auditStreams from './20261123T0900-audit-streams.js';
import * as accountsSeqFromPosition from './20261123T1000-accounts-seq-from-position.js';
import * as depositStatus from './20261125T0900-deposit-status.js';
import * as withdrawalStatusCounts from './20261125T1400-withdrawal-status-counts.js';
import * as sweepQueueClosedByEvents from './20261125T1700-sweep-queue-closed-by-events.js';
import * as depositsByAddress from './20261126T1400-deposits-by-address.js';
import * as webhookDeliveriesSeqByIdentity from './20261127T0200-webhook-deliveries-seq-by-identity.js';
import * as webhookDeliveriesDueByOrganization from './20261127T0500-webhook-deliveries-due-by-organization.js';
import * as webhookDeliveriesOneDueIndex from './20261127T0800-webhook-deliveries-one-due-index.js';
import * as webhookDeliveriesLeaseOffIndex from './20261127T1100-webhook-deliveries-lease-off-index.js';
import * as webhookAttemptsWithoutDeliveryKey from './20261127T1400-webhook-attempts-without-delivery-key.js';
import * as webhookDeliveriesListsByStatus from './20261127T1700-webhook-deliveries-lists-by-status.js';
import * as webhookDeliveriesDedupedById from './20261127T2000-webhook-deliveries-deduped-by-id.js';
import * as withdrawalsSeqWithoutUniqueIndex from './20261127T2210-withdrawals-seq-without-unique-index.js';
import * as depositsSeqWithoutUniqueIndex from './20261127T2230-deposits-seq-without-unique-index.js';
import * as webhookAttemptsKeyedByDelivery from './20261128T0500-webhook-attempts-keyed-by-delivery.js';

/**
 * Read-model tables, in schema `public`. Frozen once landed: add, never edit. The devnet's tables
 * and the deposit watchers' have sets of their own (src/chains/devnet/migrations,
 * src/processes/deposit-watcher/migrations); they were in this set until 2026-11-25.
 */
export const readModelMigrations: MigrationSet = {
  schema: 'public',
  migrations: {
    '20261122T0910-projection-checkpoints': checkpoints,
    '20261122T1000-organizations': organizations,
    '20261122T1010-webhooks': webhooks,
    '20261122T1100-accounts': accounts,
    '20261122T1130-organization-switches': organizationSwitches,
    '20261122T1410-deposits-and-balances': depositsAndBalances,
    '20261122T1600-sweeps': sweeps,
    '20261122T2000-withdrawals': withdrawals,
    '20261123T0900-audit-streams': auditStreams,
    '20261123T1000-accounts-seq-from-position': accountsSeqFromPosition,
    '20261125T0900-deposit-status': depositStatus,
    '20261125T1400-withdrawal-status-counts': withdrawalStatusCounts,
    '20261125T1700-sweep-queue-closed-by-events': sweepQueueClosedByEvents,
    '20261126T1400-deposits-by-address': depositsByAddress,
    '20261127T0200-webhook-deliveries-seq-by-identity': webhookDeliveriesSeqByIdentity,
    '20261127T0500-webhook-deliveries-due-by-organization': webhookDeliveriesDueByOrganization,
    '20261127T0800-webhook-deliveries-one-due-index': webhookDeliveriesOneDueIndex,
    '20261127T1100-webhook-deliveries-lease-off-index': webhookDeliveriesLeaseOffIndex,
    '20261127T1400-webhook-attempts-without-delivery-key': webhookAttemptsWithoutDeliveryKey,
    '20261127T1700-webhook-deliveries-lists-by-status': webhookDeliveriesListsByStatus,
    '20261127T2000-webhook-deliveries-deduped-by-id': webhookDeliveriesDedupedById,
    '20261127T2210-withdrawals-seq-without-unique-index': withdrawalsSeqWithoutUniqueIndex,
    '20261127T2230-deposits-seq-without-unique-index': depositsSeqWithoutUniqueIndex,
    '20261128T0500-webhook-attempts-keyed-by-delivery': webhookAttemptsKeyedByDelivery,
  },
};
