import { api } from '../api.js';
import { el, labelled, notice, replace, submitting } from '../dom.js';

/** A secret shown once, with a warning that it will not be shown again. */
const shownOnce = (what: string, secret: string) =>
  el('div', { role: 'status', class: 'notice status secret' }, el('p', {}, `Your new ${what}. Copy it now: it is not shown again.`), el('output', { 'aria-label': `New ${what}` }, secret));

/** One settings section: its form runs `act` and shows the outcome under it. */
const section = (title: string, explanation: string, fields: HTMLElement[], buttonLabel: string, act: () => Promise<HTMLElement>, buttonClass = '') => {
  const outcome = el('div', { class: 'outcome' });
  const button = el('button', { type: 'submit', class: buttonClass || undefined }, buttonLabel);
  const form = el(
    'form',
    {
      'aria-label': title,
      on: { submit: submitting(button, outcome, act) },
    },
    ...fields,
    el('div', { class: 'buttons' }, button),
    outcome,
  );
  return el('section', { class: 'card' }, el('h2', {}, title), el('p', { class: 'hint' }, explanation), form);
};

/** Webhook URL, signing secret, minimum signers and the API key (CONTRACT §10). */
export const settingsPage = async (container: HTMLElement) => {
  const organisation = await api.organisation();
  const webhookUrl = el('input', { type: 'url', value: organisation.webhookUrl ?? '', placeholder: 'https://hooks.example.com/ledgergate', required: true });
  const minimumSigners = el('input', { type: 'number', min: '1', step: '1', value: String(organisation.minWithdrawalSigners), required: true });

  replace(
    container,
    el('h1', {}, 'Settings'),
    el('p', { class: 'hint' }, `Organization ${organisation.name} (${organisation.id}).`),
    el(
      'div',
      { class: 'cards' },
      section('Webhook', 'Where events are sent (HTTPS). Events wait while no URL is set.', [labelled('Webhook URL', webhookUrl)], 'Save', async () => {
        await api.setWebhookUrl(webhookUrl.value.trim());
        return notice('status', 'Webhook URL saved.');
      }),
      section('Signing secret', 'Your receiver checks each webhook’s signature with this secret. Rotating it takes effect for the next delivery.', [], 'Rotate signing secret', async () =>
        shownOnce('signing secret', await api.rotateSigningSecret()),
      ),
      section(
        'Approvals',
        'How many people must approve a withdrawal (the initiator counts as one). Lowering it needs a person signed in, like you now.',
        [labelled('Minimum signers', minimumSigners)],
        'Save',
        async () => {
          await api.setMinimumSigners(Number(minimumSigners.value));
          return notice('status', `Minimum signers is now ${minimumSigners.value}. It applies to withdrawals created from now on.`);
        },
      ),
      section('API key', 'Your servers call the API with this key. Rotating it stops the current key at once: update your servers right after.', [], 'Rotate API key', async () => shownOnce('API key', await api.rotateApiKey()), 'danger'),
    ),
  );
};
