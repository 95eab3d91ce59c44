/**
 * Every call the console makes to the service's HTTP API, and the only place that knows how: the
 * console is one more client of the same API. The access token lives here, in memory only
 * (never in storage or a cookie), so closing or reloading the tab ends the session.
 */

export type WithdrawalStatus = 'Pending' | 'PendingApproval' | 'Processing' | 'Completed' | 'Failed' | 'Cancelled';
export const WITHDRAWAL_STATUSES: readonly WithdrawalStatus[] = ['PendingApproval', 'Pending', 'Processing', 'Completed', 'Failed', 'Cancelled'];

export interface Withdrawal {
  id: string;
  chainId: string;
  tokenId: string;
  amount: string;
  recipient: string;
  memo: string | null;
  reference: string;
  internalNote: string;
  status: WithdrawalStatus;
  txnHash: string | null;
  txnError: string | null;
  initiator: string;
  approvers: string[];
  fee: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface TokenSummary {
  id: string;
  name: string;
  symbol: string;
  decimals: number;
}

export interface Token extends TokenSummary {
  chainId: string;
}

export interface HistoryEntry {
  revision: number;
  type: string;
  data: Record<string, unknown>;
  metadata: { actor: string; credential: 'person' | 'api-key' | 'system' | null; username: string | null; at: string };
  state: Withdrawal & { externalUserId: string | null };
}

export type DepositStatus = 'detected' | 'confirmed' | 'reverted';
export const DEPOSIT_STATUSES: readonly DepositStatus[] = ['detected', 'confirmed', 'reverted'];

export interface Deposit {
  chainId: string;
  txnHash: string;
  tokenId: string;
  amount: string;
  externalUserId: string;
  senderAddress: string;
  toAddress: string;
  status: DepositStatus;
  confirmations: number;
  Token: { symbol: string; decimals: number };
  createdAt: string;
}

export interface Balance {
  chainId: string;
  tokenId: string;
  available: string;
  pending: string;
  Token: TokenSummary;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed'];

export interface Delivery {
  id: string;
  type: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

export interface Organisation {
  id: string;
  name: string;
  webhookUrl: string | null;
  minWithdrawalSigners: number;
}

export interface Profile {
  id: string;
  username: string;
  org: { id: string; name: string };
}

export interface AuditHead {
  position: string;
  hash: string;
  lines: number;
  at: string;
  signature: string;
}

export type ApprovalResult = { id: string; withdrawal: Withdrawal } | { id: string; error: { error: string; message: string } };

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

/** Called once: what to do when the service says the session is over (401 INVALID_TOKEN). */
export const whenSessionExpires = (handler: () => void) => {
  onExpired = handler;
};

export const signedIn = () => accessToken !== null;

export const signOut = () => {
  accessToken = null;
};

const send = async (method: string, path: string, body?: unknown): Promise<Response> => {
  const headers: Record<string, string> = {};
  if (accessToken) headers.authorization = `Bearer ${accessToken}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit', cache: 'no-store' });
  if (response.ok) return response;
  const answer = (await response.json().catch(() => ({}))) as { error?: string; message?: string };
  const failure = new ApiFailure(answer.error ?? 'ERROR', response.status, answer.message ?? `The service answered ${response.status}`);
  if (accessToken && response.status === 401 && failure.code === 'INVALID_TOKEN') {
    accessToken = null;
    onExpired();
  }
  throw failure;
};

const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => (await (await send(method, path, body)).json()) as T;

const query = (parameters: Record<string, string | null | undefined>) => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) if (value) search.set(name, value);
  const text = search.toString();
  return text ? `?${text}` : '';
};

export const api = {
  signIn: async (username: string, password: string, totpCode: string) => {
    const { accessToken: token } = await call<{ accessToken: string }>('POST', '/auth/login', { username, password, totpCode });
    accessToken = token;
  },
  profile: () => call<Profile>('GET', '/auth/profile'),
  organisation: () => call<Organisation>('GET', '/organisation'),
  tokens: async () => (await call<{ tokens: Token[] }>('GET', '/tokens?enabledOnly=false')).tokens,

  withdrawals: async (filter: { status?: string; cursor?: string | null; limit?: number }): Promise<Page<Withdrawal>> => {
    const page = await call<{ withdrawals: Withdrawal[]; nextCursor: string | null }>('GET', `/withdrawals${query({ status: filter.status, cursor: filter.cursor, limit: String(filter.limit ?? 50) })}`);
    return { items: page.withdrawals, nextCursor: page.nextCursor };
  },
  history: async (id: string) => (await call<{ events: HistoryEntry[] }>('GET', `/withdrawals/${encodeURIComponent(id)}/history`)).events,
  approve: async (id: string, totpCode: string) => (await call<{ withdrawal: Withdrawal }>('POST', `/withdrawals/${encodeURIComponent(id)}/approve`, { totpCode })).withdrawal,
  approveMany: async (ids: string[], totpCode: string) => (await call<{ results: ApprovalResult[] }>('POST', '/withdrawals/approve', { ids, totpCode })).results,
  cancel: async (id: string) => (await call<{ withdrawal: { status: string; txnError: string | null } }>('DELETE', `/withdrawals/${encodeURIComponent(id)}`)).withdrawal,

  deposits: async (filter: { userId?: string; cursor?: string | null; limit?: number }): Promise<Page<Deposit>> => {
    const page = await call<{ payments: Deposit[]; nextCursor: string | null }>('GET', `/payments${query({ userId: filter.userId, cursor: filter.cursor, limit: String(filter.limit ?? 50) })}`);
    return { items: page.payments, nextCursor: page.nextCursor };
  },
  portfolio: async () => (await call<{ balances: Balance[] }>('GET', '/portfolio')).balances,

  deliveries: async (filter: { status?: string; cursor?: string | null; limit?: number }): Promise<Page<Delivery>> => {
    const page = await call<{ deliveries: Delivery[]; nextCursor: string | null }>('GET', `/webhooks/deliveries${query({ status: filter.status, cursor: filter.cursor, limit: String(filter.limit ?? 50) })}`);
    return { items: page.deliveries, nextCursor: page.nextCursor };
  },
  redeliver: async (id: string) => (await call<{ delivery: Delivery }>('POST', `/webhooks/deliveries/${encodeURIComponent(id)}/redeliver`)).delivery,

  auditHead: () => call<AuditHead>('GET', '/audit/head'),
  /** the NDJSON export up to a global position (the head's), as text */
  auditExport: async (toPosition: string) => (await send('GET', `/audit/events${query({ format: 'ndjson', toPosition })}`)).text(),
  auditPublicKey: async () => (await send('GET', '/audit/public-key')).text(),

  setWebhookUrl: (webhookUrl: string) => call<object>('PATCH', '/organisation/webhook', { webhookUrl }),
  rotateSigningSecret: async () => (await call<{ webhookSigningSecret: string }>('PATCH', '/organisation/webhook/signing-secret')).webhookSigningSecret,
  setMinimumSigners: (minWithdrawalSigners: number) => call<object>('PATCH', '/organisation/min-withdrawal-signers', { minWithdrawalSigners }),
  rotateApiKey: async () => (await call<{ apiKey: string }>('PATCH', '/organisation/api-key')).apiKey,
};
