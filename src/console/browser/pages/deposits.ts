import { api, DEPOSIT_STATUSES, type Deposit } from '../api.js';
import { amountOf } from '../catalog.js';
import { el, shortened, table, when } from '../dom.js';
import { listPage } from '../paging.js';

/** Deposits, newest first: the user filter is the API's; the status filter applies to the page shown. */
export const depositsPage = async (container: HTMLElement) => {
  const status = el('select', {}, el('option', { value: '' }, 'Any status'), ...DEPOSIT_STATUSES.map((value) => el('option', { value }, value)));
  const user = el('input', { type: 'search', placeholder: 'the integrator’s user id' });

  const draw = (deposits: Deposit[]) => {
    const shown = status.value === '' ? deposits : deposits.filter((deposit) => deposit.status === status.value);
    const rows = shown.map((deposit) =>
      el(
        'tr',
        {},
        el('td', {}, when(deposit.createdAt)),
        el('td', {}, deposit.externalUserId),
        el('td', { class: 'number' }, amountOf(deposit.amount, deposit.Token)),
        el('td', {}, el('span', { class: `badge deposit-${deposit.status}` }, deposit.status)),
        el('td', { class: 'number' }, String(deposit.confirmations)),
        el('td', {}, deposit.chainId),
        el('td', {}, shortened(deposit.txnHash)),
        el('td', {}, shortened(deposit.senderAddress)),
        el('td', {}, shortened(deposit.toAddress)),
      ),
    );
    return table('Deposits', ['Detected', 'User', 'Amount', 'Status', 'Confirmations', 'Chain', 'Transaction', 'From', 'To'], rows, 'No deposits match.');
  };
  await listPage(container, {
    title: 'Deposits',
    hint: 'Newest first. A deposit counts in the balance once confirmed; a reverted one (its block was replaced) never does.',
    filters: { Status: status, User: user },
    load: (cursor) => api.deposits({ userId: user.value.trim() || undefined, cursor }),
    draw,
  }).reload();
};
