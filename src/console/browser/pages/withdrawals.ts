import { api, WITHDRAWAL_STATUSES, type Withdrawal } from '../api.js';
import { amountOf, tokenCatalog, userName } from '../catalog.js';
import { el, shortened, table, when } from '../dom.js';
import { listPage } from '../paging.js';

export const statusBadge = (status: string) => el('span', { class: `badge status-${status}` }, status);

/**
 * All withdrawals, newest first: the status filter is the API's; the user filter (initiator's
 * login name or id) applies to the page shown, as GET /withdrawals filters by status only.
 */
export const withdrawalsPage = async (container: HTMLElement) => {
  const status = el('select', {}, el('option', { value: '' }, 'Any status'), ...WITHDRAWAL_STATUSES.map((value) => el('option', { value }, value)));
  const user = el('input', { type: 'search', placeholder: 'login name or user id' });
  const tokens = await tokenCatalog();

  const draw = (withdrawals: Withdrawal[]) => {
    const wanted = user.value.trim();
    const shown = wanted === '' ? withdrawals : withdrawals.filter((withdrawal) => withdrawal.initiator === wanted || userName(withdrawal.initiator) === wanted);
    const chainNative = (withdrawal: Withdrawal) => [...tokens.values()].find((token) => token.chainId === withdrawal.chainId && token.id.includes('/slip44:'));
    const rows = shown.map((withdrawal) =>
      el(
        'tr',
        {},
        el('td', {}, el('a', { href: `#/withdrawals/${encodeURIComponent(withdrawal.id)}`, class: 'reference', title: 'Open its history' }, withdrawal.reference)),
        el('td', {}, statusBadge(withdrawal.status), withdrawal.txnError ? el('div', { class: 'note' }, withdrawal.txnError) : null),
        el('td', { class: 'number' }, amountOf(withdrawal.amount, tokens.get(withdrawal.tokenId))),
        el('td', {}, shortened(withdrawal.recipient)),
        el('td', {}, userName(withdrawal.initiator)),
        el('td', {}, `${withdrawal.approvers.length}`),
        el('td', { class: 'number' }, withdrawal.fee === null ? '—' : amountOf(withdrawal.fee, chainNative(withdrawal))),
        el('td', {}, shortened(withdrawal.txnHash)),
        el('td', {}, when(withdrawal.createdAt)),
      ),
    );
    return table('Withdrawals', ['Reference', 'Status', 'Amount', 'Recipient', 'Initiator', 'Approvals', 'Fee', 'Transaction', 'Requested'], rows, 'No withdrawals match.');
  };
  await listPage(container, {
    title: 'Withdrawals',
    hint: 'Newest first. Open a reference to see its history: every event, who made it, and the state after it.',
    filters: { Status: status, User: user },
    load: (cursor) => api.withdrawals({ status: WITHDRAWAL_STATUSES.find((value) => value === status.value), cursor }),
    draw,
  }).reload();
};
