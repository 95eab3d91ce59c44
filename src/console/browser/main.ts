import { api, signOut, whenSessionExpires, signedIn, type Profile } from './api.js';
import { forgetSession, rememberUser } from './catalog.js';
import { el, errorText, notice, replace } from './dom.js';
import { approvalsPage } from './pages/approvals.js';
import { auditPage } from './pages/audit.js';
import { balancesPage } from './pages/balances.js';
import { depositsPage } from './pages/deposits.js';
import { historyPage } from './pages/history.js';
import { settingsPage } from './pages/settings.js';
import { signInPage } from './pages/sign-in.js';
import { webhooksPage } from './pages/webhooks.js';
import { withdrawalsPage } from './pages/withdrawals.js';

/** A page draws itself into its container; `path` is the rest of the address after its name. */
export type PageRender = (container: HTMLElement, path: string[], profile: Profile) => Promise<void> | void;

const PAGES: { name: string; label: string; render: PageRender }[] = [
  { name: 'approvals', label: 'Approvals', render: approvalsPage },
  { name: 'withdrawals', label: 'Withdrawals', render: (container, path) => (path[0] ? historyPage(container, path) : withdrawalsPage(container)) },
  { name: 'deposits', label: 'Deposits', render: depositsPage },
  { name: 'balances', label: 'Balances', render: balancesPage },
  { name: 'webhooks', label: 'Webhooks', render: webhooksPage },
  { name: 'audit', label: 'Audit', render: auditPage },
  { name: 'settings', label: 'Settings', render: settingsPage },
];

const root = () => document.getElementById('app')!;
let profile: Profile | null = null;

const currentPath = () =>
  location.hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((part) => part !== '')
    .map(decodeURIComponent);

const showSignIn = (message?: HTMLElement) => {
  profile = null;
  forgetSession();
  document.title = 'Sign in · ledgergate';
  replace(
    root(),
    signInPage(message, async () => {
      profile = await api.profile();
      rememberUser(profile.id, profile.username);
      // without firing hashchange: render() below draws it once
      if (currentPath().length === 0) history.replaceState(null, '', '#/approvals');
      render();
    }),
  );
};

const shell = (active: string, signedInAs: Profile) =>
  el(
    'header',
    { class: 'top' },
    el('div', { class: 'brand' }, el('strong', {}, 'ledgergate'), el('span', { class: 'org' }, signedInAs.org.name)),
    el(
      'nav',
      { 'aria-label': 'Console' },
      ...PAGES.map((page) => el('a', { href: `#/${page.name}`, 'aria-current': page.name === active ? 'page' : undefined }, page.label)),
    ),
    el(
      'div',
      { class: 'who' },
      el('span', {}, 'Signed in as ', el('strong', {}, signedInAs.username)),
      el('button', { type: 'button', class: 'secondary', on: { click: () => (signOut(), showSignIn(notice('status', 'You are signed out.'))) } }, 'Sign out'),
    ),
  );

/** Draws the page the address names; without a session, the sign-in form. */
const render = () => {
  if (!signedIn() || !profile) return showSignIn();
  const [name = 'approvals', ...rest] = currentPath();
  const page = PAGES.find((candidate) => candidate.name === name) ?? PAGES[0]!;
  const container = el('main', { id: 'page' });
  document.title = `${page.label} · ledgergate`;
  replace(root(), shell(page.name, profile), container);
  Promise.resolve(page.render(container, rest, profile)).catch((error: unknown) => {
    if (signedIn()) container.append(notice('alert', errorText(error)));
  });
};

whenSessionExpires(() => showSignIn(notice('alert', 'Your session has expired. Sign in again to continue.')));
window.addEventListener('hashchange', render);
document.addEventListener('DOMContentLoaded', render);
