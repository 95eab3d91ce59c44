import { api } from '../api.js';
import { amountOf } from '../catalog.js';
import { el, replace, row, table } from '../dom.js';

/** GET /portfolio in token units with symbols (exact, through BigInt). */
export const balancesPage = async (container: HTMLElement) => {
  const balances = await api.portfolio();
  const rows = balances.map((balance) => row(el('strong', {}, balance.Token.symbol), balance.Token.name, balance.chainId, amountOf(balance.available, balance.Token), amountOf(balance.pending, balance.Token)));
  replace(
    container,
    el('h1', {}, 'Balances'),
    el('p', { class: 'hint' }, 'Available: confirmed deposits less withdrawals held or sent and fees. Pending: deposits seen but not yet confirmed. Hover an amount for its exact base units.'),
    table('Balances', ['Token', 'Name', 'Chain', 'Available', 'Pending'], rows, 'No balances yet.'),
  );
};
