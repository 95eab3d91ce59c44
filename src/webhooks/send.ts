import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
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
 * instead of a new TCP (and TLS) handshake. node:http rather than fetch: fetch's web streams and
 * its per-request abort signals cost more CPU than the send itself.
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
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: SOCKETS_PER_ORIGIN, timeout: IDLE_SOCKET_MS }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: SOCKETS_PER_ORIGIN, timeout: IDLE_SOCKET_MS }),
};

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
 * request's options as node:http derives them from a URL, and the headers it would add itself
 * (`host`, and `authorization` for credentials in the URL, which organizations cannot set).
 * Headers go to node:http as a flat list of names and values: it checks each as it writes it, as
 * it does for an object's, without storing each in a map first.
 */
interface Target {
  url: string;
  protocol: string;
  request: typeof http.request | null;
  options: http.RequestOptions;
  fixedHeaders: string[];
}

const targetOf = (url: string, lookup: http.RequestOptions['lookup']): Target => {
  const parsed = new URL(url);
  const { protocol } = parsed;
  if (protocol !== 'http:' && protocol !== 'https:') return { url, protocol, request: null, options: {}, fixedHeaders: [] };
  const options = urlToHttpOptions(parsed);
  const fixedHeaders = ['host', parsed.host];
  if (options.auth) fixedHeaders.push('authorization', `Basic ${Buffer.from(options.auth).toString('base64')}`);
  return { url, protocol, request: (protocol === 'https:' ? https : http).request, options: { ...options, method: 'POST', agent: agents[protocol], ...(lookup ? { lookup } : {}) }, fixedHeaders };
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
 * Sends attempts (sendWebhook). An organization's signing secret is opened once and kept in
 * memory, decrypted, with the sealed value it came from: a rotated secret (another sealed value)
 * is opened again at its first delivery. It is never logged. One listener on the shutdown signal
 * ends every request in flight.
 */
export class WebhookSender {
  private readonly organizations = new BoundedMap<string, OrganizationSettings>(ORGANIZATIONS_KEPT);
  private readonly requests = new Set<http.ClientRequest>();
  /** how a new connection resolves its host: in production, to public addresses only */
  private readonly lookup: http.RequestOptions['lookup'];

  constructor(private readonly options: SendOptions) {
    this.lookup = options.refuseInternalAddresses ? publicOnlyLookup(options.resolve ?? dnsLookup) : options.resolve;
    options.shutdown?.addEventListener(
      'abort',
      () => {
        for (const request of this.requests) request.destroy(new Error(SHUT_DOWN_ERROR));
      },
      { once: true },
    );
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
      // redirects are never followed: node:http does not follow them
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
    if (settings.target?.url !== url) settings.target = targetOf(url, this.lookup);
    return settings.target;
  }

  /** POSTs `body` with `headers` (and the target's own) and answers the status once the response headers arrive (the body is drained, unread). */
  private post(target: Target, headers: string[], body: Buffer): Promise<number> {
    return new Promise((resolve, reject) => {
      if (!target.request) {
        reject(new Error(`unsupported protocol ${target.protocol}`));
        return;
      }
      headers.push(...target.fixedHeaders, 'content-length', String(body.length));
      const request = target.request({ ...target.options, headers });
      const timer = setTimeout(() => request.destroy(new SendTimeoutError()), this.options.timeoutMs);
      this.requests.add(request);
      const done = () => {
        clearTimeout(timer);
        this.requests.delete(request);
      };
      request.on('response', (response) => {
        done();
        response.resume(); // drained so the socket can serve the next delivery
        resolve(response.statusCode ?? 0);
      });
      request.on('error', (error) => {
        done();
        reject(error);
      });
      request.end(body);
    });
  }
}

/** One attempt with a sender of its own; a dispatcher keeps one WebhookSender for all its attempts. */
export const sendWebhook = (claim: ClaimedDelivery, options: SendOptions): Promise<AttemptOutcome> => new WebhookSender(options).send(claim);
