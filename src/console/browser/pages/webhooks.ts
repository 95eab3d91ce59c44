import { api, DELIVERY_STATUSES, type Delivery } from '../api.js';
import { el, errorText, notice, replace, shortened, table, when } from '../dom.js';
import { listPage } from '../paging.js';

const lastAnswer = (delivery: Delivery) =>
  delivery.lastStatusCode !== null ? `HTTP ${delivery.lastStatusCode}` : delivery.lastError ? delivery.lastError : '—';

/** Webhook deliveries with their status and attempts, each with Redeliver. */
export const webhooksPage = async (container: HTMLElement) => {
  const status = el('select', {}, el('option', { value: '' }, 'Any status'), ...DELIVERY_STATUSES.map((value) => el('option', { value }, value)));
  const messages = el('div', { class: 'messages', 'aria-live': 'polite' });

  const redeliver = (delivery: Delivery, button: HTMLButtonElement) => {
    button.disabled = true;
    api
      .redeliver(delivery.id)
      .then(() => replace(messages, notice('status', `${delivery.type} (${delivery.id}) will be sent again now.`)))
      .catch((error: unknown) => replace(messages, notice('alert', `Not redelivered: ${errorText(error)}`)))
      .finally(reload);
  };
  const draw = (deliveries: Delivery[]) => {
    const rows = deliveries.map((delivery) => {
      const button = el('button', { type: 'button', class: 'secondary' }, 'Redeliver');
      button.addEventListener('click', () => redeliver(delivery, button));
      return el(
        'tr',
        {},
        el('td', {}, el('strong', {}, delivery.type), el('div', { class: 'note' }, shortened(delivery.id, 8))),
        el('td', {}, el('span', { class: `badge delivery-${delivery.status}` }, delivery.status)),
        el('td', { class: 'number' }, String(delivery.attempts)),
        el('td', {}, lastAnswer(delivery)),
        el('td', {}, when(delivery.createdAt)),
        el('td', {}, delivery.status === 'delivered' ? when(delivery.deliveredAt) : delivery.nextAttemptAt ? el('span', {}, 'next try ', when(delivery.nextAttemptAt)) : delivery.status === 'pending' ? 'waits for a webhook URL' : '—'),
        el('td', { class: 'actions' }, button),
      );
    });
    return table('Webhook deliveries', ['Event', 'Status', 'Attempts', 'Last answer', 'Created', 'Delivered / next', ''], rows, 'No deliveries match.');
  };
  const view = listPage(container, {
    title: 'Webhooks',
    hint: 'Every event sent (or waiting to be sent) to your webhook URL. Redeliver sends one again at once, with the same id.',
    filters: { Status: status },
    messages,
    load: (cursor) => api.deliveries({ status: DELIVERY_STATUSES.find((value) => value === status.value), cursor }),
    draw,
  });
  const reload = () => view.reload();
  await reload();
};
