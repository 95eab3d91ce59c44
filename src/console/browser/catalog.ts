import { api, type HistoryEntry, type Token } from './api.js';
import { el } from './dom.js';
import { formatUnits } from './units.js';

/**
 * What the console looks up once per session: the token catalog (symbols and decimals, which
 * withdrawal lists do not carry) and login names for user ids (learned from withdrawal
 * histories, whose events name the person who acted).
 */
let tokens: Promise<Map<string, Token>> | null = null;
const usernames = new Map<string, string>();

export const forgetSession = () => {
  tokens = null;
  usernames.clear();
};

export const tokenCatalog = () => {
  tokens ??= api.tokens().then((list) => new Map(list.map((token) => [token.id, token])));
  tokens.catch(() => (tokens = null));
  return tokens;
};

/** `1.5 USDT`, its exact base units on hover, and beside it when asked. */
export const amountOf = (baseUnits: string, token: { symbol: string; decimals: number } | undefined, options: { baseBeside?: boolean } = {}) => {
  if (!token) return el('span', { class: 'amount' }, `${baseUnits} base units`);
  const units = `${formatUnits(baseUnits, token.decimals)} ${token.symbol}`;
  return el(
    'span',
    { class: 'amount', title: `${baseUnits} base units (${token.decimals} decimals)` },
    units,
    options.baseBeside ? el('small', { class: 'base-units' }, `${baseUnits} base units`) : null,
  );
};

export const rememberUser = (id: string, username: string | null) => {
  if (username) usernames.set(id, username);
};

export const learnFromHistory = (events: HistoryEntry[]) => {
  for (const event of events) if (event.metadata.credential !== 'system') rememberUser(event.metadata.actor, event.metadata.username);
};

/** The login name of a user id, once known; else the id itself. */
export const userName = (id: string) => usernames.get(id) ?? id;

export const knowsUser = (id: string) => usernames.has(id);
