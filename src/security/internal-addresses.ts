import { BlockList, isIP } from 'node:net';

/**
 * Addresses the service must never send to on an integrator's behalf (SSRF): loopback, private,
 * carrier-grade NAT, link-local, multicast and reserved ranges, and the IPv6 forms that embed an
 * IPv4 address (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4
 * 2002::/16), which route to whatever IPv4 address they carry.
 */
const internal = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  internal.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // :: and ::1, and IPv4-compatible ::a.b.c.d
  ['64:ff9b::', 96], // NAT64
  ['64:ff9b:1::', 48], // local-use NAT64
  ['2002::', 16], // 6to4
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  internal.addSubnet(network, prefix, 'ipv6');
}

/** the IPv4 address an IPv4-mapped IPv6 address (::ffff:a.b.c.d, or ::ffff:hhhh:hhhh) carries */
const mappedIpv4 = (address: string): string | null => {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (dotted) return dotted;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return null;
  const [high, low] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
};

export const isInternalAddress = (address: string): boolean => {
  const family = isIP(address);
  if (family === 0) return true; // not an address: never trusted
  const mapped = family === 6 ? mappedIpv4(address) : null;
  if (mapped) return internal.check(mapped, 'ipv4');
  return internal.check(address, family === 6 ? 'ipv6' : 'ipv4');
};
