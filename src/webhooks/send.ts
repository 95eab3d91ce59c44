import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isInternalAddress } from '../security/internal-addresses.js';
import { decryptSecret, secretPurpose } from '../security/secret-box.js';
import type { AttemptOutcome, ClaimedDelivery } from './claims.js';
import { signWebhookBody } from './signature.js';

export const WEBHOOK_USER_AGENT = 'ledgergate-webhooks';
export const NO_WEBHOOK_URL_ERROR = 'no webhook URL configured';

/** The headers of one attempt (CONTRACT §7); the signature uses the secret as it is now. */
export const webhookHeaders = (claim: ClaimedDelivery, signingSecret: string): Record<string, string> => {
  const signature = signWebhookBody(signingSecret, claim.body);
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'x-webhook-id': claim.id,
    'x-webhook-timestamp': claim.eventTimestamp.toISOString(),
    'x-webhook-signature': signature,
    'x-signature': signature,
  };
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

/** POSTs `body` and answers the status once the response headers arrive (the body is drained, unread). */
const post = (url: URL, headers: Record<string, string>, body: Buffer, options: SendOptions): Promise<number> =>
  new Promise((resolve, reject) => {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      reject(new Error(`unsupported protocol ${url.protocol}`));
      return;
    }
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(body.length) },
      agent: agents[url.protocol],
      ...(options.refuseInternalAddresses ? { lookup: publicOnlyLookup(options.resolve ?? dnsLookup) } : options.resolve ? { lookup: options.resolve } : {}),
    });
    const timer = setTimeout(() => request.destroy(new SendTimeoutError()), options.timeoutMs);
    const onShutdown = () => request.destroy(new Error(SHUT_DOWN_ERROR));
    options.shutdown?.addEventListener('abort', onShutdown, { once: true });
    const done = () => {
      clearTimeout(timer);
      options.shutdown?.removeEventListener('abort', onShutdown);
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

/**
 * One attempt: POST the stored body bytes to the organization's URL as it is now. A 2xx within
 * `timeoutMs` is delivered; anything else (another status, a redirect, which is never followed, a
 * network error, the time-out, no URL, an unreadable secret) is a failed attempt. Never throws.
 */
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

export const sendWebhook = async (claim: ClaimedDelivery, options: SendOptions): Promise<AttemptOutcome> => {
  const started = performance.now();
  const failed = (error: string, statusCode: number | null = null): AttemptOutcome => ({
    delivered: false,
    statusCode,
    error,
    durationMs: performance.now() - started,
  });
  if (!claim.signingSecretEncrypted) return failed('the organization is unknown');
  if (!claim.webhookUrl) return failed(NO_WEBHOOK_URL_ERROR);
  let secret: string;
  try {
    secret = decryptSecret(options.encryptionKey, claim.signingSecretEncrypted, secretPurpose.webhookSigningSecret(claim.orgId));
  } catch {
    return failed('the signing secret cannot be decrypted');
  }
  try {
    // redirects are never followed: node:http does not follow them
    const status = await post(new URL(claim.webhookUrl), webhookHeaders(claim, secret), Buffer.from(claim.body, 'utf8'), options);
    if (status >= 200 && status < 300) {
      return { delivered: true, statusCode: status, error: null, durationMs: performance.now() - started };
    }
    const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
    return failed(`HTTP ${status}${redirect}`, status);
  } catch (error) {
    return failed(describeFailure(error, options));
  }
};
