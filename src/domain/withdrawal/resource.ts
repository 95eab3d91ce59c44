import { tokenSummaryOf } from '../../catalog/tokens.js';
import type { WithdrawalRecord } from './withdrawal.js';

/** SPEC §2.2's fields and CONTRACT §6's `fee`: creation, approval and list answers. */
export const withdrawalResource = (withdrawal: WithdrawalRecord) => ({
  id: withdrawal.id,
  orgId: withdrawal.orgId,
  chainId: withdrawal.chainId,
  tokenId: withdrawal.tokenId,
  amount: withdrawal.amount,
  recipient: withdrawal.recipient,
  memo: withdrawal.memo,
  reference: withdrawal.reference,
  internalNote: withdrawal.internalNote,
  status: withdrawal.status,
  txnHash: withdrawal.txnHash,
  txnError: withdrawal.txnError,
  initiator: withdrawal.initiator,
  approvers: [...withdrawal.approvers],
  /** the network fee paid, base units of the chain's native coin; null until known (CONTRACT §6) */
  fee: withdrawal.fee ?? null,
  createdAt: withdrawal.createdAt,
  updatedAt: withdrawal.updatedAt,
});

/** SPEC §4.5's single read: the resource with `externalUserId` (or null) and `Token`; also the webhooks' payload (CONTRACT §7). */
export const withdrawalDetail = (withdrawal: WithdrawalRecord) => ({
  ...withdrawalResource(withdrawal),
  externalUserId: withdrawal.externalUserId,
  Token: tokenSummaryOf(withdrawal.tokenId),
});

/** withdrawal.completed keeps SPEC §6.4's fields beside the single read. */
export const withdrawalCompletedPayload = (withdrawal: WithdrawalRecord) => ({
  ...withdrawalDetail(withdrawal),
  toAddress: withdrawal.recipient,
  approvedBy: [...withdrawal.approvers],
  completedAt: withdrawal.completedAt,
});

export type WithdrawalResource = ReturnType<typeof withdrawalResource>;
