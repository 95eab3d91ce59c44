import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { DomainError } from '../errors.js';

/** Addresses a webhook must never reach in production: loopback, private, link-local, and the like. */
const internal = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  internal.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  internal.addSubnet(network, prefix, 'ipv6');
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const MAX_LENGTH = 2048;

const isInternalAddress = (address: string): boolean => {
  const mappedV4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mappedV4) return internal.check(mappedV4, 'ipv4');
  return internal.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
};

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
