/** SPEC §6.3 and CONTRACT §7: every event type a webhook carries. */
export const webhookEventTypes = [
  'deposit.detected',
  'deposit.confirmed',
  'withdrawal.created',
  'withdrawal.approved',
  'withdrawal.processing',
  'withdrawal.completed',
  'withdrawal.failed',
  'withdrawal.cancelled',
  'account.created',
  'balance.updated',
] as const;

export type WebhookEventType = (typeof webhookEventTypes)[number];
