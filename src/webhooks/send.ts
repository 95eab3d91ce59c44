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

const describeFailure = (error: unknown, options: SendOptions): string => {
  if (options.shutdown?.aborted) return SHUT_DOWN_ERROR;
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `timed out: no response within ${options.timeoutMs} ms`;
  }
  // undici puts the network reason (ECONNREFUSED, ENOTFOUND, a TLS error…) in `cause`
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  const reason = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : String(error);
  return `request failed: ${reason}`;
};

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
    const response = await fetch(claim.webhookUrl, {
      method: 'POST',
      headers: webhookHeaders(claim, secret),
      body: Buffer.from(claim.body, 'utf8'),
      redirect: 'manual',
      signal: options.shutdown ? AbortSignal.any([AbortSignal.timeout(options.timeoutMs), options.shutdown]) : AbortSignal.timeout(options.timeoutMs),
    });
    // the response body is not read: only the status acknowledges
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) {
      return { delivered: true, statusCode: response.status, error: null, durationMs: performance.now() - started };
    }
    const redirect = response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : '';
    return failed(`HTTP ${response.status}${redirect}`, response.status);
  } catch (error) {
    return failed(describeFailure(error, options));
  }
};
