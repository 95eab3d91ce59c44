import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type net from 'node:net';
import { urlToHttpOptions } from 'node:url';
import { Agent, type Dispatcher } from 'undici';
import { BoundedMap } from '../lib/bounded-map.js';
import { isInternalAddress } from '../security/internal-addresses.js';
import { decryptSecret, secretPurpose } from '../security/secret-box.js';
import type { AttemptOutcome, ClaimedDelivery } from './claims.js';
import { signWebhookBody } from './signature.js';

export const WEBHOOK_USER_AGENT = 'ledgergate-webhooks';
export const NO_WEBHOOK_URL_ERROR = 'no webhook URL configured';

/** The headers of one attempt (CONTRACT §7), as a flat list of names and values; the signature uses the secret as it is now. */
export const webhookHeaders = (claim: ClaimedDelivery, signingKey: Buffer, body: Buffer): string[] => {
  const signature = signWebhookBody(signingKey, body);
  return [
    'content-type',
    'application/json',
    'user-agent',
    WEBHOOK_USER_AGENT,
    'x-webhook-id',
    claim.id,
    'x-webhook-timestamp',
    claim.eventTimestamp.toISOString(),
    'x-webhook-signature',
    signature,
    'x-signature',
    signature,
  ];
};

export const SHUT_DOWN_ERROR = 'interrupted: the dispatcher shut down before an answer';

class SendTimeoutError extends Error {
  override name = 'TimeoutError';
}

const describeFailure = (error: unknown, options: SendOptions): string => {
  if (options.shutdown?.aborted) return SHUT_DOWN_ERROR;
  if (error instanceof SendTimeoutError) return `timed out: no response within ${options.timeoutMs} ms`;
  // a generic word for a refused address: the deliveries list must not tell a tenant what lives inside
  if ((error as { code?: unknown }).code === 'EINTERNALADDRESS') return INTERNAL_ADDRESS_ERROR;
  // the network reason (ECONNREFUSED, ENOTFOUND, a TLS error…) is the error's code
  const { code, message } = error as { code?: unknown; message?: unknown };
  return `request failed: ${typeof code === 'string' ? code : typeof message === 'string' ? message : String(error)}`;
};

/**
 * Kept-alive connections per origin: under a backlog every delivery to a receiver reuses a socket
 * instead of a new TCP (and TLS) handshake. undici (the Node project's own HTTP client, a pool of
 * connections per origin) rather than node:http: its request, agent and header objects were about a
 * quarter of the workers' allocated bytes; rather than fetch, whose web streams and per-request
 * abort signals cost more CPU than the send itself.
 */
/** an idle kept-alive socket is closed before a receiver's usual keep-alive time-out (Node's 5 s) closes it under a request */
const IDLE_SOCKET_MS = 4_000;
/**
 * Half the dispatcher's sends in flight (dispatcher.ts): a receiver that has them all answers at
 * most one request per socket before a queued send goes out, so a send's time-out (which counts
 * from the request, queued time included, to stay within its lease) leaves a receiver half of it
 * per answer, as 64 sockets did beside 128 sends in flight.
 */
const SOCKETS_PER_ORIGIN = 128;

/** the error of a connection refused because the host resolved to an internal address */
export const INTERNAL_ADDRESS_ERROR = 'request failed: the webhook URL does not resolve to a public address';

type Lookup = typeof dnsLookup;

/**
 * The address is checked when the connection is made, not only when the URL was set: a DNS answer
 * that changed since (or DNS rebinding) cannot turn a delivery against the service's own network.
 */
const publicOnlyLookup =
  (resolve: Lookup) =>
  (hostname: string, options: object, callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
    (resolve as (hostname: string, options: object, callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => void)(
      hostname,
      options,
      (error, address, family) => {
        if (error) return callback(error, address, family);
        const addresses = Array.isArray(address) ? address.map((entry) => entry.address) : [address];
        if (addresses.some(isInternalAddress)) {
          return callback(Object.assign(new Error(INTERNAL_ADDRESS_ERROR), { code: 'EINTERNALADDRESS' }), address, family);
        }
        callback(null, address, family);
      },
    );
  };

/**
 * What every delivery to one URL shares, worked out once per URL instead of per delivery: the
 * origin its connections are pooled by, the path, and the `authorization` header for credentials
 * in the URL (which organizations cannot set; undici, like fetch, does not send them itself).
 * undici adds `host` from the origin, as node:http did. Headers go as a flat list of names and
 * values: undici checks each as it writes it, without storing them in a map first.
 */
interface Target {
  url: string;
  protocol: string;
  /** null: a protocol other than http and https, never sent */
  origin: string | null;
  path: string;
  fixedHeaders: string[];
}

const targetOf = (url: string): Target => {
  const parsed = new URL(url);
  const { protocol } = parsed;
  if (protocol !== 'http:' && protocol !== 'https:') return { url, protocol, origin: null, path: '', fixedHeaders: [] };
  const { auth, path } = urlToHttpOptions(parsed);
  const fixedHeaders = auth ? ['authorization', `Basic ${Buffer.from(auth).toString('base64')}`] : [];
  return { url, protocol, origin: parsed.origin, path: path ?? '/', fixedHeaders };
};

/** What a delivery of one organization needs: its signing key opened and its URL's target, kept while they do not change. */
interface OrganizationSettings {
  sealedSecret: string;
  signingKey: Buffer;
  target: Target | null;
}

/** organizations whose settings are kept at once (each well under a kilobyte); one that is not opens its secret again */
const ORGANIZATIONS_KEPT = 1_000;

export interface SendOptions {
  encryptionKey: Buffer;
  timeoutMs: number;
  /** aborted when the dispatcher stops and its grace period is over */
  shutdown?: AbortSignal;
  /** production: connect only to public addresses, checked at connect time */
  refuseInternalAddresses?: boolean;
  /** the resolver (tests give one whose answers change) */
  resolve?: Lookup;
}

/**
 * One request's handler (undici's dispatch interface: no response stream is made). The promise
 * answers the status once the final response's headers arrive; the body is then drained unread,
 * so the connection serves the next delivery. The time-out counts from the request, time queued
 * for a connection included: a request that times out while queued is aborted when its turn comes.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private settled = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly answer: (status: number) => void,
    private readonly refuse: (error: unknown) => void,
    timeoutMs: number,
  ) {
    this.timer = setTimeout(() => this.fail(new SendTimeoutError()), timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.settled) controller.abort(new SendTimeoutError());
    else this.controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    // an informational answer (1xx) is followed by the response
    if (statusCode < 200 || this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.answer(statusCode);
  }

  onResponseData(): void {
    // drained, unread
  }

  onResponseEnd(): void {}

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.fail(error);
  }

  private fail(error: Error): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.controller?.abort(error);
    this.refuse(error);
  }
}

/**
 * Sends attempts (sendWebhook). An organization's signing secret is opened once and kept in
 * memory, decrypted, with the sealed value it came from: a rotated secret (another sealed value)
 * is opened again at its first delivery. It is never logged. Its connections are its own (close()
 * ends them); the shutdown signal ends every request in flight.
 */
export class WebhookSender {
  private readonly organizations = new BoundedMap<string, OrganizationSettings>(ORGANIZATIONS_KEPT);
  private readonly connections: Agent;

  constructor(private readonly options: SendOptions) {
    // how a new connection resolves its host: in production, to public addresses only
    const lookup = options.refuseInternalAddresses ? publicOnlyLookup(options.resolve ?? dnsLookup) : options.resolve;
    this.connections = new Agent({
      connections: SOCKETS_PER_ORIGIN,
      keepAliveTimeout: IDLE_SOCKET_MS,
      keepAliveMaxTimeout: IDLE_SOCKET_MS,
      // the send's own timer bounds the wait for an answer; a body that trickles is cut after as long
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      ...(lookup ? { connect: { lookup: lookup as NonNullable<net.TcpNetConnectOpts['lookup']> } } : {}),
    });
    options.shutdown?.addEventListener('abort', () => void this.connections.destroy(new Error(SHUT_DOWN_ERROR)), { once: true });
  }

  /** ends its connections (and any body still being drained); sends after it fail */
  async close(): Promise<void> {
    await this.connections.destroy();
  }

  /**
   * One attempt: POST the stored body bytes to the organization's URL as it is now. A 2xx within
   * `timeoutMs` is delivered; anything else (another status, a redirect, which is never followed, a
   * network error, the time-out, no URL, an unreadable secret) is a failed attempt. Never throws.
   */
  async send(claim: ClaimedDelivery): Promise<AttemptOutcome> {
    const started = performance.now();
    const failed = (error: string, statusCode: number | null = null): AttemptOutcome => ({
      delivered: false,
      statusCode,
      error,
      durationMs: performance.now() - started,
    });
    if (!claim.signingSecretEncrypted) return failed('the organization is unknown');
    if (!claim.webhookUrl) return failed(NO_WEBHOOK_URL_ERROR);
    let settings: OrganizationSettings;
    try {
      settings = this.settingsOf(claim.orgId, claim.signingSecretEncrypted);
    } catch {
      return failed('the signing secret cannot be decrypted');
    }
    try {
      // redirects are never followed: undici's dispatch does not follow them
      const body = Buffer.from(claim.body, 'utf8');
      const status = await this.post(this.targetOf(settings, claim.webhookUrl), webhookHeaders(claim, settings.signingKey, body), body);
      if (status >= 200 && status < 300) {
        return { delivered: true, statusCode: status, error: null, durationMs: performance.now() - started };
      }
      const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
      return failed(`HTTP ${status}${redirect}`, status);
    } catch (error) {
      return failed(describeFailure(error, this.options));
    }
  }

  /** the organization's kept settings, its secret opened again when the sealed value is not the one kept */
  private settingsOf(orgId: string, sealedSecret: string): OrganizationSettings {
    const kept = this.organizations.get(orgId);
    if (kept?.sealedSecret === sealedSecret) return kept;
    const secret = decryptSecret(this.options.encryptionKey, sealedSecret, secretPurpose.webhookSigningSecret(orgId));
    // the key's bytes as createHmac takes a string key (UTF-8): the same signature, without encoding it at every delivery
    const settings: OrganizationSettings = { sealedSecret, signingKey: Buffer.from(secret, 'utf8'), target: null };
    this.organizations.set(orgId, settings);
    return settings;
  }

  private targetOf(settings: OrganizationSettings, url: string): Target {
    if (settings.target?.url !== url) settings.target = targetOf(url);
    return settings.target;
  }

  /** POSTs `body` with `headers` (and the target's own) and answers the status once the response headers arrive (the body is drained, unread). */
  private post(target: Target, headers: string[], body: Buffer): Promise<number> {
    return new Promise((resolve, reject) => {
      if (!target.origin) {
        reject(new Error(`unsupported protocol ${target.protocol}`));
        return;
      }
      if (target.fixedHeaders.length > 0) headers.push(...target.fixedHeaders);
      this.connections.dispatch({ origin: target.origin, path: target.path, method: 'POST', headers, body }, new Attempt(resolve, reject, this.options.timeoutMs));
    });
  }
}

/** One attempt with a sender of its own (closed after it); a dispatcher keeps one WebhookSender for all its attempts. */
export const sendWebhook = async (claim: ClaimedDelivery, options: SendOptions): Promise<AttemptOutcome> => {
  const sender = new WebhookSender(options);
  try {
    return await sender.send(claim);
  } finally {
    await sender.close();
  }
};
