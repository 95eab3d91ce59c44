import { api, type HistoryEntry } from '../api.js';
import { amountOf, learnFromHistory, tokenCatalog, userName } from '../catalog.js';
import { el, replace, shortened, when } from '../dom.js';
import { statusBadge } from './withdrawals.js';

const CREDENTIALS: Record<string, string> = { person: 'signed in', 'api-key': 'with the API key', system: 'the service' };

const who = (entry: HistoryEntry) => {
  const { actor, credential, username } = entry.metadata;
  if (credential === 'system' || (!username && credential === null)) return el('span', {}, el('strong', {}, actor), el('span', { class: 'note' }, ' the service'));
  return el('span', {}, el('strong', {}, username ?? userName(actor)), el('span', { class: 'note' }, ` ${credential ? CREDENTIALS[credential] : ''} · ${actor}`));
};

/** CONTRACT §9, §10: a withdrawal's events in order, each with who, when and the state after it. */
export const historyPage = async (container: HTMLElement, path: string[]) => {
  const id = path[0]!;
  const [events, tokens] = await Promise.all([api.history(id), tokenCatalog()]);
  learnFromHistory(events);
  const last = events.at(-1)?.state;
  const token = last ? tokens.get(last.tokenId) : undefined;
  const summary = last
    ? el(
        'dl',
        { class: 'summary' },
        el('dt', {}, 'Reference'),
        el('dd', {}, last.reference),
        el('dt', {}, 'Status'),
        el('dd', {}, statusBadge(last.status)),
        el('dt', {}, 'Amount'),
        el('dd', {}, amountOf(last.amount, token, { baseBeside: true })),
        el('dt', {}, 'Recipient'),
        el('dd', {}, el('code', {}, last.recipient)),
        el('dt', {}, 'Note'),
        el('dd', {}, last.internalNote || '—'),
        el('dt', {}, 'For user'),
        el('dd', {}, last.externalUserId ?? '—'),
        el('dt', {}, 'Transaction'),
        el('dd', {}, last.txnHash ? el('code', {}, last.txnHash) : '—'),
      )
    : null;
  const timeline = el(
    'ol',
    { class: 'timeline', 'aria-label': 'History' },
    ...events.map((entry) =>
      el(
        'li',
        {},
        el('div', { class: 'event-head' }, el('strong', { class: 'event-type' }, entry.type), when(entry.metadata.at)),
        el('div', {}, 'By ', who(entry)),
        el(
          'div',
          { class: 'state' },
          'State after: ',
          statusBadge(entry.state.status),
          ` · approvals ${entry.state.approvers.map(userName).join(', ') || 'none'}`,
          entry.state.txnHash ? el('span', {}, ' · transaction ', shortened(entry.state.txnHash)) : null,
          entry.state.txnError ? el('span', {}, ` · ${entry.state.txnError}`) : null,
        ),
      ),
    ),
  );
  replace(container, el('p', {}, el('a', { href: '#/withdrawals' }, '← Withdrawals')), el('h1', {}, 'Withdrawal history'), summary, el('h2', {}, 'Events'), timeline);
};
