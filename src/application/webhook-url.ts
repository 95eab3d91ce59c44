import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { DomainError } from '../errors.js';
import { isInternalAddress } from '../security/internal-addresses.js';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const MAX_LENGTH = 2048;

const invalid = (reason: string) => new DomainError('INVALID_WEBHOOK_URL', `webhookUrl must be an HTTPS URL: ${reason}`);

export type ResolveHost = (hostname: string) => Promise<string[]>;

const resolveWithDns: ResolveHost = async (hostname) => (await lookup(hostname, { all: true })).map((entry) => entry.address);

/**
 * CONTRACT §7: `https://` only; outside production also http://localhost, 127.0.0.1 and [::1].
 * In production a host that resolves to an internal address is refused (no SSRF into the network
 * the service runs in).
 */
export const checkWebhookUrl = async (value: string, options: { isProduction: boolean; resolve?: ResolveHost }): Promise<string> => {
  if (value.length > MAX_LENGTH) throw invalid(`at most ${MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('not a URL');
  }
  if (url.username || url.password) throw invalid('credentials in the URL are not allowed');
  if (url.protocol === 'http:') {
    if (options.isProduction || !LOCAL_HOSTS.has(url.hostname)) throw invalid('plain HTTP is allowed only for localhost outside production');
    return value;
  }
  if (url.protocol !== 'https:') throw invalid(`the ${url.protocol} scheme is not allowed`);
  if (options.isProduction) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses = isIP(host) ? [host] : await (options.resolve ?? resolveWithDns)(host).catch(() => []);
    if (addresses.length === 0) throw invalid('the host does not resolve');
    if (addresses.some(isInternalAddress)) throw invalid('the host resolves to a loopback, private or link-local address');
  }
  return value;
};
