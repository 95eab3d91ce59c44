import { api, ApiFailure, type HistoryEntry, type Profile, type Withdrawal } from '../api.js';
import { amountOf, learnFromHistory, tokenCatalog, userName } from '../catalog.js';
import { el, errorText, notice, replace, table, when } from '../dom.js';
import { codePrompt } from '../code-prompt.js';

interface QueueItem {
  withdrawal: Withdrawal;
  /** CONTRACT §4: the threshold as it was when the withdrawal was created (its first event says) */
  required: number | null;
}

const requiredApprovals = (events: HistoryEntry[]) => {
  const requested = events.find((event) => event.type === 'WithdrawalRequested');
  const value = requested?.data.minWithdrawalSigners;
  return typeof value === 'number' ? value : null;
};

/** The queue: one page of PendingApproval withdrawals, each with its history (threshold, who asked, who approved). */
const loadQueue = async (): Promise<QueueItem[]> => {
  const { items } = await api.withdrawals({ status: 'PendingApproval', limit: 100 });
  return Promise.all(
    items.map(async (withdrawal) => {
      const events = await api.history(withdrawal.id);
      learnFromHistory(events);
      return { withdrawal, required: requiredApprovals(events) };
    }),
  );
};

const approvedText = (withdrawal: Withdrawal) => `${withdrawal.reference}: ${withdrawal.status === 'Pending' ? 'approved, now Pending (it will be sent)' : `${withdrawal.approvers.length} approvals so far, still waiting`}`;

/** CONTRACT §10 Approvals: Approve (with a fresh code), Cancel, and several selected approved with one code. */
export const approvalsPage = async (container: HTMLElement, _path: string[], profile: Profile) => {
  const messages = el('div', { class: 'messages', 'aria-live': 'polite' });
  const prompt = el('div', { class: 'prompt-area' });
  const selected = new Set<string>();
  /**
   * What this page's own actions were answered: the list is a read model that may trail a
   * command by a moment, so an approved or cancelled withdrawal is not offered again meanwhile.
   */
  const answered = new Map<string, { status: string; approvers?: string[] }>();
  const current = (withdrawal: Withdrawal): Withdrawal => {
    const answer = answered.get(withdrawal.id);
    if (!answer || (answer.approvers && answer.approvers.length < withdrawal.approvers.length)) return withdrawal;
    return { ...withdrawal, status: answer.status as Withdrawal['status'], approvers: answer.approvers ?? withdrawal.approvers };
  };
  const approveSelected = el('button', { type: 'button', disabled: true }, 'Approve selected');
  const list = el('div', { class: 'list' }, el('p', { class: 'loading' }, 'Loading…'));
  const say = (...lines: HTMLElement[]) => replace(messages, ...lines);

  const refreshSelection = () => {
    approveSelected.disabled = selected.size === 0;
    approveSelected.textContent = selected.size > 0 ? `Approve selected (${selected.size})` : 'Approve selected';
  };

  const askCode = (what: string, confirm: (code: string) => Promise<void>) =>
    replace(
      prompt,
      codePrompt(what, async (code) => {
        await confirm(code);
        prompt.replaceChildren();
        await reload();
      }, () => prompt.replaceChildren()),
    );

  const approveOne = (withdrawal: Withdrawal) =>
    askCode(`Approve ${withdrawal.reference}`, async (code) => {
      const approved = await api.approve(withdrawal.id, code);
      answered.set(approved.id, approved);
      say(notice('status', `Approved ${approvedText(approved)}.`));
    });

  const approveMany = () => {
    const ids = [...selected];
    askCode(`Approve ${ids.length} selected withdrawal${ids.length === 1 ? '' : 's'} with one code`, async (code) => {
      const results = await api.approveMany(ids, code);
      selected.clear();
      for (const result of results) if ('withdrawal' in result) answered.set(result.id, result.withdrawal);
      say(
        ...results.map((result) =>
          'withdrawal' in result ? notice('status', `Approved ${approvedText(result.withdrawal)}.`) : notice('alert', `Not approved (${result.id}): ${result.error.message}`),
        ),
      );
    });
  };
  approveSelected.addEventListener('click', approveMany);

  const cancel = (withdrawal: Withdrawal, cell: HTMLElement) => {
    const keep = el('button', { type: 'button', class: 'secondary' }, 'Keep it');
    const yes = el('button', { type: 'button', class: 'danger' }, 'Yes, cancel it');
    const question = el('span', { class: 'confirm' }, 'Cancel this withdrawal? ', yes, keep);
    const actions = [...cell.childNodes];
    replace(cell, question);
    keep.addEventListener('click', () => replace(cell, ...actions));
    yes.addEventListener('click', () => {
      yes.disabled = true;
      api
        .cancel(withdrawal.id)
        .then((cancelled) => (answered.set(withdrawal.id, { status: cancelled.status }), cancelled))
        .then((cancelled) => say(notice('status', `Cancelled ${withdrawal.reference}: ${cancelled.txnError ?? cancelled.status}.`)))
        .catch((error: unknown) => say(notice('alert', `${withdrawal.reference} was not cancelled: ${errorText(error)}`)))
        .finally(reload);
    });
  };

  const draw = async () => {
    const [loaded, tokens] = await Promise.all([loadQueue(), tokenCatalog()]);
    const queue = loaded.map((item) => ({ ...item, withdrawal: current(item.withdrawal) })).filter((item) => item.withdrawal.status === 'PendingApproval');
    for (const id of [...selected]) if (!queue.some((item) => item.withdrawal.id === id)) selected.delete(id);
    refreshSelection();
    const rows = queue.map(({ withdrawal, required }) => {
      const mine = withdrawal.approvers.includes(profile.id);
      const approve = el('button', { type: 'button', disabled: mine, title: mine ? 'You have approved this withdrawal already' : undefined }, 'Approve');
      const cancelButton = el('button', { type: 'button', class: 'secondary' }, 'Cancel');
      const actions = el('td', { class: 'actions' }, approve, cancelButton);
      approve.addEventListener('click', () => approveOne(withdrawal));
      cancelButton.addEventListener('click', () => cancel(withdrawal, actions));
      const pick = el('input', { type: 'checkbox', 'aria-label': `Select ${withdrawal.reference}`, disabled: mine, checked: selected.has(withdrawal.id) });
      pick.addEventListener('change', () => {
        if (pick.checked) selected.add(withdrawal.id);
        else selected.delete(withdrawal.id);
        refreshSelection();
      });
      const token = tokens.get(withdrawal.tokenId);
      return el(
        'tr',
        {},
        el('td', { class: 'select' }, pick),
        el('td', {}, el('a', { href: `#/withdrawals/${encodeURIComponent(withdrawal.id)}`, class: 'reference' }, withdrawal.reference), withdrawal.internalNote ? el('div', { class: 'note' }, withdrawal.internalNote) : null),
        el('td', { class: 'number' }, amountOf(withdrawal.amount, token, { baseBeside: true })),
        // the whole address: a look-alike differs in the middle as easily as at the ends
        el('td', {}, el('code', { class: 'address' }, withdrawal.recipient), withdrawal.memo ? el('div', { class: 'note' }, `memo ${withdrawal.memo}`) : null),
        el('td', {}, userName(withdrawal.initiator)),
        el('td', {}, el('span', { class: 'count' }, `${withdrawal.approvers.length} of ${required ?? '?'}`), el('div', { class: 'note' }, withdrawal.approvers.map(userName).join(', '))),
        el('td', {}, when(withdrawal.createdAt)),
        actions,
      );
    });
    replace(list, table('Withdrawals waiting for approval', ['', 'Reference', 'Amount', 'Recipient', 'Initiator', 'Approvals', 'Requested', ''], rows, 'Nothing waits for approval.'));
  };
  const reload = () =>
    draw().catch((error: unknown) => {
      if (!(error instanceof ApiFailure && error.code === 'INVALID_TOKEN')) say(notice('alert', errorText(error)));
    });

  replace(
    container,
    el('h1', {}, 'Approvals'),
    el('p', { class: 'hint' }, 'Withdrawals waiting for approvals. Check the amount and the recipient, then Approve: you will be asked for a fresh code from your authenticator app.'),
    el('div', { class: 'toolbar' }, approveSelected),
    prompt,
    messages,
    list,
  );
  await reload();
};
