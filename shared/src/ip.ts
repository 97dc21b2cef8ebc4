/**
 * IP address rules for `client_ip` (docs/requirements.md §2.2: optional, IPv4 or IPv6) and proxy hops (§12.1).
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

/**
 * One hop of `X-Forwarded-For` (or a socket address) read leniently, as proxies spell it: `1.2.3.4`, `1.2.3.4:5678`,
 * `[2001:db8::1]:443`, `[2001:db8::1]`, `::ffff:1.2.3.4`, a zone `fe80::1%eth0`, surrounding quotes or spaces.
 * Returns the canonical address, or null for `unknown`, obfuscated names (`_hidden`) and anything else.
 */
export function parseHopAddress(value: string): string | null {
  let v = value.trim();
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1).trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(v);
  if (bracketed) v = bracketed[1];
  else {
    const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(v);
    if (v4WithPort) v = v4WithPort[1];
  }
  const zone = v.indexOf('%');
  if (zone > 0 && v.includes(':')) v = v.slice(0, zone);
  return canonicalIp(v);
}

/** An address as bytes (4 for IPv4, 16 for IPv6), for range checks; null when it is not an address. */
function addressBytes(value: string): number[] | null {
  const ip = canonicalIp(value);
  if (ip === null) return null;
  if (isIPv4(ip)) return ip.split('.').map(Number);
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, null];
  const hextets = (chunk: string): number[] => {
    const out: number[] = [];
    for (const part of chunk === '' ? [] : chunk.split(':')) {
      if (part.includes('.')) {
        const [a, b, c, d] = part.split('.').map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else out.push(parseInt(part, 16));
    }
    return out;
  };
  const left = hextets(head);
  const right = tail === null ? [] : hextets(tail);
  const all = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  return all.flatMap((h) => [h >> 8, h & 255]);
}

/** An address range: `10.0.0.0/8`, `2001:db8::/32`, or one address (a full-length prefix). */
export interface IpRange {
  bytes: number[];
  prefix: number;
}

/** Parses `address` or `address/prefix`; null when it is neither. */
export function parseIpRange(value: string): IpRange | null {
  const [address, prefixText, extra] = value.trim().split('/');
  if (extra !== undefined) return null;
  const bytes = addressBytes(address);
  if (!bytes) return null;
  const max = bytes.length * 8;
  if (prefixText === undefined) return { bytes, prefix: max };
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) return null;
  return { bytes, prefix: Number(prefixText) };
}

export function ipInRange(address: string, range: IpRange): boolean {
  const bytes = addressBytes(address);
  if (!bytes || bytes.length !== range.bytes.length) return false;
  for (let bit = 0; bit < range.prefix; bit += 8) {
    const bits = Math.min(8, range.prefix - bit);
    const mask = (0xff << (8 - bits)) & 0xff;
    if ((bytes[bit / 8] & mask) !== (range.bytes[bit / 8] & mask)) return false;
  }
  return true;
}

/** Names for common groups of proxy addresses (the same words Express uses). */
export const TRUST_PROXY_KEYWORDS: Record<string, readonly string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/**
 * Which hops in front of the app are proxies we run, so their `X-Forwarded-For` entries can be believed:
 * none (the socket address is the visitor), a number of hops, or the proxies' addresses.
 */
export type TrustProxy = { mode: 'none' } | { mode: 'hops'; hops: number } | { mode: 'addresses'; ranges: IpRange[] };

export const TRUST_PROXY_MAX_HOPS = 10;

/**
 * Reads a `TRUST_PROXY` setting: empty, `0` or `false` → none; a whole number → that many hops; otherwise a comma
 * list of addresses, CIDR ranges and the keywords `loopback`, `linklocal`, `uniquelocal`.
 * `true` ("trust everything") is refused: the visitor could then name any address.
 */
export function parseTrustProxy(raw: string | null | undefined): { ok: true; value: TrustProxy } | { ok: false; error: string } {
  const value = (raw ?? '').trim();
  if (value === '' || value === '0' || value.toLowerCase() === 'false') return { ok: true, value: { mode: 'none' } };
  const usage =
    'a number of proxy hops (1 behind one nginx or load balancer), or a comma list of proxy addresses, CIDR ranges, ' +
    'loopback, linklocal, uniquelocal';
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > TRUST_PROXY_MAX_HOPS) {
      return { ok: false, error: `TRUST_PROXY must be ${usage}; ${TRUST_PROXY_MAX_HOPS} hops at most (got "${value}")` };
    }
    return { ok: true, value: { mode: 'hops', hops } };
  }
  const ranges: IpRange[] = [];
  const bad: string[] = [];
  for (const item of value.split(',').map((s) => s.trim())) {
    const keyword = TRUST_PROXY_KEYWORDS[item.toLowerCase()];
    if (keyword) ranges.push(...keyword.map((r) => parseIpRange(r)!));
    else {
      const range = parseIpRange(item);
      if (range) ranges.push(range);
      else bad.push(item === '' ? '(empty)' : item);
    }
  }
  if (bad.length > 0) return { ok: false, error: `TRUST_PROXY must be 0/false, ${usage} (not understood: ${bad.join(', ')})` };
  return { ok: true, value: { mode: 'addresses', ranges } };
}

/**
 * The visitor's address: the chain is the socket address followed by the `X-Forwarded-For` entries read from the
 * right (each proxy appends the address it saw). Trusted hops are skipped; the first untrusted one is the visitor.
 * When every hop is trusted, the left-most one is. Null when that hop is not an address (`unknown`, garbage):
 * nothing further left can be believed, so no address is better than a made-up one.
 */
export function visitorAddress(
  socketAddress: string | null | undefined,
  forwardedFor: string | null | undefined,
  trust: TrustProxy,
): string | null {
  const chain = [socketAddress ?? ''];
  if (trust.mode !== 'none' && forwardedFor) chain.push(...forwardedFor.split(',').reverse());
  if (trust.mode === 'none') return parseHopAddress(chain[0]);
  if (trust.mode === 'hops') return parseHopAddress(chain[Math.min(trust.hops, chain.length - 1)]);
  for (let i = 0; i < chain.length - 1; i += 1) {
    const hop = parseHopAddress(chain[i]);
    if (hop === null || !trust.ranges.some((range) => ipInRange(hop, range))) return hop;
  }
  return parseHopAddress(chain[chain.length - 1]);
}
