import { streamCategories } from '../domain/streams.js';
import { categoryOf, type EventBody } from '../eventstore/port.js';

/**
 * The export's categories (what an auditor asks for) and the stream categories each covers.
 * Username claims and TOTP uses (login bookkeeping) and derivation counters (shared by every
 * organization) belong to no export.
 */
export const AUDIT_CATEGORIES = {
  organization: [streamCategories.organization],
  account: [streamCategories.account, streamCategories.derivationOwner],
  deposit: [streamCategories.deposit, streamCategories.sweep],
  ledger: [streamCategories.ledger],
  withdrawal: [streamCategories.withdrawal, streamCategories.withdrawalReference, streamCategories.withdrawalGas, streamCategories.gasBuffer, streamCategories.cancellation, streamCategories.payoutBatch],
} as const;

export type AuditCategory = keyof typeof AUDIT_CATEGORIES;

export const AUDIT_CATEGORY_NAMES = Object.keys(AUDIT_CATEGORIES) as AuditCategory[];

export const streamCategoriesOf = (categories: readonly AuditCategory[]): string[] => categories.flatMap((category) => AUDIT_CATEGORIES[category]);

/** Every stream category that can belong to an organization. */
export const EXPORTED_STREAM_CATEGORIES = streamCategoriesOf(AUDIT_CATEGORY_NAMES);

/** Streams whose name carries their organization right after the category: `<category>-<orgId>-…`. */
const NAMED_BY_ORG: ReadonlySet<string> = new Set([
  streamCategories.organization,
  streamCategories.account,
  streamCategories.ledger,
  streamCategories.withdrawalReference,
]);

/** Where a stream's organization comes from. */
export type Ownership =
  | { kind: 'org'; orgId: string | null }
  /** the same organization as another stream (a sweep its deposit's, gas top-ups their withdrawal's) */
  | { kind: 'sameAs'; stream: string }
  | { kind: 'none' };

const orgIdIn = (data: Record<string, unknown>): string | null => (typeof data.orgId === 'string' && data.orgId !== '' ? data.orgId : null);

/**
 * Decides a stream's organization from the stream's first event. Organization, account, ledger and
 * reference streams name their organization (the event's `orgId` must match the name, or the stream
 * is refused: no guessing); withdrawals and deposits carry it in their first event (an unattributed
 * deposit has none, so belongs to no organization); derivation owners carry it in their event.
 */
export const ownershipOf = (first: EventBody): Ownership => {
  const category = categoryOf(first.stream);
  const orgId = orgIdIn(first.data);
  if (NAMED_BY_ORG.has(category)) {
    const named = orgId !== null && (first.stream === `${category}-${orgId}` || first.stream.startsWith(`${category}-${orgId}-`));
    return named ? { kind: 'org', orgId } : { kind: 'none' };
  }
  switch (category) {
    case streamCategories.withdrawal:
    case streamCategories.deposit:
    case streamCategories.derivationOwner:
    case streamCategories.cancellation:
    case streamCategories.payoutBatch:
    case streamCategories.gasBuffer:
      return { kind: 'org', orgId };
    case streamCategories.sweep:
      return { kind: 'sameAs', stream: `${streamCategories.deposit}-${first.stream.slice(category.length + 1)}` };
    case streamCategories.withdrawalGas:
      return { kind: 'sameAs', stream: `${streamCategories.withdrawal}-${first.stream.slice(category.length + 1)}` };
    default:
      return { kind: 'none' };
  }
};
