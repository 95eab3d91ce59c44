import { api } from '../api.js';
import { el, labelled, submitting } from '../dom.js';

/** CONTRACT §10: Username, Password, Authentication code, Sign in; any failure in role="alert". */
export const signInPage = (message: HTMLElement | undefined, signedIn: () => Promise<void>) => {
  const username = el('input', { name: 'username', autocomplete: 'username', required: true });
  const password = el('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const code = el('input', { name: 'totpCode', inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]{6}', maxlength: '6', required: true });
  const outcome = el('div', { class: 'outcome' }, message);
  const button = el('button', { type: 'submit' }, 'Sign in');
  const form = el(
    'form',
    {
      class: 'sign-in',
      'aria-label': 'Sign in',
      on: {
        submit: submitting(
          button,
          outcome,
          async () => (await api.signIn(username.value.trim(), password.value, code.value.trim()), await signedIn(), null),
          () => (code.value = ''),
        ),
      },
    },
    el('h1', {}, 'Sign in to ledgergate'),
    el('p', { class: 'hint' }, 'Use the username and password from your bootstrap output, and the 6-digit code your authenticator app shows now.'),
    labelled('Username', username),
    labelled('Password', password),
    labelled('Authentication code', code),
    button,
    outcome,
  );
  return el('main', { class: 'centered' }, form);
};
