/**
 * IP address rules for `client_ip` (CONTRACT section 4: "optional, IPv4 or IPv6").
 * Written without `node:net` so the browser bundle can use it too.
 */

const IPV4_OCTET = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

export function isIPv4(value: string): boolean {
  const parts = value.split('.');
  return parts.length === 4 && parts.every((p) => IPV4_OCTET.test(p));
}

const HEXTET = /^[0-9a-fA-F]{1,4}$/;

export function isIPv6(value: string): boolean {
  if (value.length > 45 || !value.includes(':')) return false;
  const groups = value.split('::');
  if (groups.length > 2) return false;
  const compressed = groups.length === 2;
  const parse = (chunk: string): string[] | null => (chunk === '' ? [] : chunk.split(':'));
  const head = parse(groups[0]);
  const tail = compressed ? parse(groups[1]) : [];
  if (!head || !tail) return false;
  const all = [...head, ...tail];
  let count = 0;
  for (let i = 0; i < all.length; i += 1) {
    const part = all[i];
    const last = i === all.length - 1;
    if (last && part.includes('.')) {
      if (!isIPv4(part)) return false;
      count += 2;
    } else if (HEXTET.test(part)) {
      count += 1;
    } else {
      return false;
    }
  }
  return compressed ? count <= 7 : count === 8;
}

/**
 * The canonical spelling of an address, so that one visitor is one `ip_hash`:
 * IPv4 as is, IPv6 lower-cased, and an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) as its IPv4.
 * Returns null for anything that is not an address.
 */
export function canonicalIp(value: string): string | null {
  const v = value.trim();
  if (isIPv4(v)) return v;
  if (!isIPv6(v)) return null;
  const lower = v.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped && isIPv4(mapped[1])) return mapped[1];
  return lower;
}
