/**
 * IP address rules for `client_ip` (docs/requirements.md §2.2: optional, IPv4 or IPv6) and proxy hops (§12.1).
 * The address rules are written without `node:net` or any dependency: the browser bundle uses them
 * (`validateLeadFields`). `TRUST_PROXY` ranges are matched by proxy-addr (Express's own), which only server code
 * reaches; for browser builds `dist/esm/package.json` maps proxy-addr to nothing (`"browser": {"proxy-addr": false}`),
 * so the landing's client bundle does not carry it.
 */
import proxyaddr from 'proxy-addr';

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

/**
 * An address range: `10.0.0.0/8`, `2001:db8::/32`, or one address (a full-length prefix). The address is canonical
 * (`canonicalIp`), so an IPv4-mapped `::ffff:10.0.0.0/8` is the IPv4 range `10.0.0.0/8`.
 */
export interface IpRange {
  address: string;
  prefix: number;
}

/**
 * A canonical address as proxy-addr reads it: its ipaddr.js takes a dotted IPv4 tail only in the full eight-group
 * form, so `64:ff9b::198.51.100.7` is given as `64:ff9b::c633:6407`.
 */
function forProxyAddr(address: string): string {
  const tail = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  if (!tail) return address;
  const [a, b, c, d] = tail.slice(2).map(Number);
  return `${tail[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** The range in proxy-addr's notation. proxy-addr refuses a zero prefix, so `/0` is given as its two halves. */
function notations({ address, prefix }: IpRange): string[] {
  if (prefix > 0) return [`${forProxyAddr(address)}/${prefix}`];
  return isIPv4(address) ? ['0.0.0.0/1', '128.0.0.0/1'] : ['::/1', '8000::/1'];
}

const compiled = new WeakMap<readonly IpRange[], (address: string) => boolean>();

/** Whether a canonical address lies in one of the ranges; proxy-addr compiles each list once. */
function matcher(ranges: readonly IpRange[]): (address: string) => boolean {
  let match = compiled.get(ranges);
  if (!match) {
    const trust = proxyaddr.compile(ranges.flatMap(notations));
    match = (address) => trust(forProxyAddr(address), 0);
    compiled.set(ranges, match);
  }
  return match;
}

/**
 * Parses `address` or `address/prefix` (a prefix length, not a netmask); null when it is neither. The address must
 * be one `canonicalIp` takes: proxy-addr alone would also read `012.0.0.1` (octal), `167772161` or zones.
 */
export function parseIpRange(value: string): IpRange | null {
  const [addressText, prefixText, extra] = value.trim().split('/');
  if (extra !== undefined) return null;
  const address = canonicalIp(addressText);
  if (address === null) return null;
  const max = isIPv4(address) ? 32 : 128;
  if (prefixText !== undefined && (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max)) return null;
  const range = { address, prefix: prefixText === undefined ? max : Number(prefixText) };
  try {
    proxyaddr.compile(notations(range));
  } catch {
    return null;
  }
  return range;
}

export function ipInRange(address: string, range: IpRange): boolean {
  const ip = canonicalIp(address);
  return ip !== null && matcher([range])(ip);
}

/**
 * Names for common groups of proxy addresses: proxy-addr's (and Express's) words and ranges, listed here as well so
 * that a keyword becomes its ranges in `TrustProxy`.
 */
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
 *
 * This is `proxyaddr.all(req, trust)` and its last entry, with the hops read by `parseHopAddress`; the header is split
 * here because proxy-addr (through `forwarded`) drops empty entries, and an empty right-most entry must stop the walk,
 * not hand the visitor the entry they wrote to its left.
 */
export function visitorAddress(
  socketAddress: string | null | undefined,
  forwardedFor: string | null | undefined,
  trust: TrustProxy,
): string | null {
  const chain = [socketAddress ?? ''];
  if (trust.mode !== 'none' && forwardedFor) chain.push(...forwardedFor.split(',').reverse());
  const trusted = trustFunction(trust);
  let i = 0;
  while (i < chain.length - 1 && trusted(chain[i], i)) i += 1;
  return parseHopAddress(chain[i]);
}

function trustFunction(trust: TrustProxy): (hop: string, index: number) => boolean {
  if (trust.mode === 'none') return () => false;
  if (trust.mode === 'hops') return (_hop, index) => index < trust.hops;
  const match = matcher(trust.ranges);
  return (hop) => {
    const address = parseHopAddress(hop);
    return address !== null && match(address);
  };
}
