import { el, labelled, submitting } from './dom.js';

/**
 * A step-up question: a fresh authentication code for one action (CONTRACT §4). A refusal is
 * shown in role="alert" and the code may be typed again; success closes it (the caller says so).
 */
export const codePrompt = (what: string, confirm: (code: string) => Promise<void>, back: () => void) => {
  const code = el('input', { name: 'totpCode', inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]{6}', maxlength: '6', required: true });
  const outcome = el('div', { class: 'outcome' });
  const button = el('button', { type: 'submit' }, 'Confirm');
  const form = el(
    'form',
    {
      class: 'code-prompt',
      'aria-label': what,
      on: {
        submit: submitting(
          button,
          outcome,
          async () => (await confirm(code.value.trim()), null),
          () => ((code.value = ''), code.focus()),
        ),
      },
    },
    el('h2', {}, what),
    el('p', { class: 'hint' }, 'Type the 6-digit code your authenticator app shows now. Each code works once.'),
    labelled('Authentication code', code),
    el('div', { class: 'buttons' }, button, el('button', { type: 'button', class: 'secondary', on: { click: back } }, 'Back')),
    outcome,
  );
  queueMicrotask(() => code.focus());
  return form;
};
