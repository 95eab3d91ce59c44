import { createLedgergateClient, type components } from '../../client/index.js';

/**
 * Every call the console makes to the service's HTTP API, and the only place that knows how: the
 * console is one more client of the same API, through the typed client generated from its
 * OpenAPI document. The access token lives here, in memory only (never in storage or a cookie),
 * so closing or reloading the tab ends the session.
 */
type Schemas = components['schemas'];
export type Withdrawal = Schemas['Withdrawal'];
export type WithdrawalStatus = Withdrawal['status'];
export type HistoryEntry = Schemas['WithdrawalHistoryEntry'];
export type Deposit = Schemas['Deposit'];
export type Balance = Schemas['Balance'];
export type Delivery = Schemas['WebhookDelivery'];
export type Organisation = Schemas['Organization'];
export type Profile = Schemas['UserProfile'];
export type AuditHead = Schemas['AuditHead'];
export type Token = Schemas['Token'];
export type ApprovalResult = Schemas['WithdrawalsApprovedAnswer']['results'][number];

export const WITHDRAWAL_STATUSES: readonly WithdrawalStatus[] = ['PendingApproval', 'Pending', 'Processing', 'Completed', 'Failed', 'Cancelled'];
export const DEPOSIT_STATUSES: readonly Deposit['status'][] = ['detected', 'confirmed', 'reverted'];
export const DELIVERY_STATUSES: readonly Delivery['status'][] = ['pending', 'delivered', 'failed'];

/** An error answer of the API: its code (CONTRACT §5) and message. */
export class ApiFailure extends Error {
  constructor(
    readonly code: string,
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

let accessToken: string | null = null;
let onExpired: () => void = () => {};
let expiryTimer: ReturnType<typeof setTimeout> | undefined;

/**
 * The token's lifetime (exp − iat, so a clock that differs from the service's does not matter):
 * when it is over the console returns to sign-in by itself, rather than at the next click.
 */
const lifetimeMs = (token: string) => {
  try {
    const claims = JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: number; iat?: number };
    return typeof claims.exp === 'number' && typeof claims.iat === 'number' ? (claims.exp - claims.iat) * 1000 : null;
  } catch {
    return null;
  }
};

const endSession = () => {
  accessToken = null;
  clearTimeout(expiryTimer);
};

/** Called once: what to do when the service says the session is over (401 INVALID_TOKEN). */
export const whenSessionExpires = (handler: () => void) => {
  onExpired = handler;
};

export const signedIn = () => accessToken !== null;

export const signOut = endSession;

const client = createLedgergateClient({
  baseUrl: location.origin,
  accessToken: () => accessToken,
  // no cookie is ever sent or kept, and no answer is cached
  fetch: (request) => fetch(new Request(request, { credentials: 'omit', cache: 'no-store' })),
});

/** The answer's body, or an ApiFailure; a 401 INVALID_TOKEN also ends the session. */
const answered = <T>({ data, error, response }: { data?: T; error?: unknown; response: Response }): T => {
  if (response.ok && data !== undefined) return data;
  const body = (error ?? {}) as { error?: string; message?: string };
  const failure = new ApiFailure(body.error ?? 'ERROR', response.status, body.message ?? `The service answered ${response.status}`);
  if (accessToken && response.status === 401 && failure.code === 'INVALID_TOKEN') {
    endSession();
    onExpired();
  }
  throw failure;
};

const PAGE_SIZE = 50;

export const api = {
  signIn: async (username: string, password: string, totpCode: string) => {
    const token = answered(await client.POST('/auth/login', { body: { username, password, totpCode } })).accessToken;
    endSession();
    accessToken = token;
    const lifetime = lifetimeMs(token);
    if (lifetime !== null) expiryTimer = setTimeout(() => (endSession(), onExpired()), lifetime);
  },
  profile: async () => answered(await client.GET('/auth/profile')),
  organisation: async () => answered(await client.GET('/organisation')),
  tokens: async () => answered(await client.GET('/tokens', { params: { query: { enabledOnly: 'false' } } })).tokens,

  withdrawals: async (filter: { status?: WithdrawalStatus; cursor?: string | null; limit?: number }): Promise<Page<Withdrawal>> => {
    const query = { limit: filter.limit ?? PAGE_SIZE, ...(filter.status ? { status: filter.status } : {}), ...(filter.cursor ? { cursor: filter.cursor } : {}) };
    const page = answered(await client.GET('/withdrawals', { params: { query } }));
    return { items: page.withdrawals, nextCursor: page.nextCursor };
  },
  history: async (id: string) => answered(await client.GET('/withdrawals/{id}/history', { params: { path: { id } } })).events,
  approve: async (id: string, totpCode: string) => answered(await client.POST('/withdrawals/{id}/approve', { params: { path: { id } }, body: { totpCode } })).withdrawal,
  approveMany: async (ids: string[], totpCode: string) => answered(await client.POST('/withdrawals/approve', { body: { ids, totpCode } })).results,
  cancel: async (id: string) => answered(await client.DELETE('/withdrawals/{id}', { params: { path: { id } } })).withdrawal,

  deposits: async (filter: { userId?: string; cursor?: string | null; limit?: number }): Promise<Page<Deposit>> => {
    const query = { limit: filter.limit ?? PAGE_SIZE, ...(filter.userId ? { userId: filter.userId } : {}), ...(filter.cursor ? { cursor: filter.cursor } : {}) };
    const page = answered(await client.GET('/payments', { params: { query } }));
    return { items: page.payments, nextCursor: page.nextCursor };
  },
  portfolio: async () => answered(await client.GET('/portfolio')).balances,

  deliveries: async (filter: { status?: Delivery['status']; cursor?: string | null; limit?: number }): Promise<Page<Delivery>> => {
    const query = { limit: filter.limit ?? PAGE_SIZE, ...(filter.status ? { status: filter.status } : {}), ...(filter.cursor ? { cursor: filter.cursor } : {}) };
    const page = answered(await client.GET('/webhooks/deliveries', { params: { query } }));
    return { items: page.deliveries, nextCursor: page.nextCursor };
  },
  redeliver: async (id: string) => answered(await client.POST('/webhooks/deliveries/{id}/redeliver', { params: { path: { id } } })).delivery,

  auditHead: async () => answered(await client.GET('/audit/head')),
  /** the NDJSON export up to a global position (the head's), as text */
  auditExport: async (toPosition: string) => answered(await client.GET('/audit/events', { params: { query: { format: 'ndjson', toPosition } }, parseAs: 'text' })),
  auditPublicKey: async () => answered(await client.GET('/audit/public-key', { parseAs: 'text' })),

  setWebhookUrl: async (webhookUrl: string) => answered(await client.PATCH('/organisation/webhook', { body: { webhookUrl } })),
  rotateSigningSecret: async () => answered(await client.PATCH('/organisation/webhook/signing-secret')).webhookSigningSecret,
  setMinimumSigners: async (minWithdrawalSigners: number) => answered(await client.PATCH('/organisation/min-withdrawal-signers', { body: { minWithdrawalSigners } })),
  rotateApiKey: async () => answered(await client.PATCH('/organisation/api-key')).apiKey,
};
