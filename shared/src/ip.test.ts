import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ipInRange, parseHopAddress, parseIpRange, parseTrustProxy, visitorAddress, type TrustProxy } from './ip.js';

const trust = (raw: string): TrustProxy => {
  const parsed = parseTrustProxy(raw);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
};

describe('parseHopAddress: the spellings proxies use', () => {
  it.each([
    ['1.2.3.4', '1.2.3.4'],
    [' 1.2.3.4 ', '1.2.3.4'],
    ['1.2.3.4:5678', '1.2.3.4'],
    ['[2001:db8::1]:443', '2001:db8::1'],
    ['[2001:DB8::1]', '2001:db8::1'],
    ['2001:db8::1', '2001:db8::1'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['[::ffff:203.0.113.7]:80', '203.0.113.7'],
    ['fe80::1%eth0', 'fe80::1'],
    ['"[2001:db8::2]:8080"', '2001:db8::2'],
  ])('%s → %s', (hop, address) => {
    expect(parseHopAddress(hop)).toBe(address);
  });

  const notAddresses = ['unknown', '', '   ', '_hidden', 'localhost', '1.2.3.4:', '1.2.3.4:port', '[1.2.3.4', '256.1.1.1:80'];
  notAddresses.push('1.2.3.4, 5.6.7.8', '[]:80');
  it.each(notAddresses)('%j is not an address', (hop) => {
    expect(parseHopAddress(hop)).toBeNull();
  });
});

describe('ranges', () => {
  it('matches IPv4 and IPv6 prefixes, an IPv4-mapped address as IPv4, and single addresses', () => {
    const ten = parseIpRange('10.0.0.0/8')!;
    expect(ipInRange('10.200.3.4', ten)).toBe(true);
    expect(ipInRange('::ffff:10.1.1.1', ten)).toBe(true);
    expect(ipInRange('11.0.0.1', ten)).toBe(false);
    expect(ipInRange('2001:db8::1', ten)).toBe(false);
    const twelve = parseIpRange('172.16.0.0/12')!;
    expect(ipInRange('172.31.255.255', twelve)).toBe(true);
    expect(ipInRange('172.32.0.0', twelve)).toBe(false);
    const v6 = parseIpRange('2001:db8::/32')!;
    expect(ipInRange('2001:db8:ffff::1', v6)).toBe(true);
    expect(ipInRange('2001:db9::1', v6)).toBe(false);
    const one = parseIpRange('::1')!;
    expect(ipInRange('::1', one)).toBe(true);
    expect(ipInRange('::2', one)).toBe(false);
    expect(ipInRange('0:0:0:0:0:0:0:1', one)).toBe(true);
    expect(ipInRange('1.2.3.4', parseIpRange('0.0.0.0/0')!)).toBe(true);
  });
  it('refuses what is not a range', () => {
    for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/8/8', 'nope/8', '10.0.0/8', '10.0.0.0/-1']) {
      expect(parseIpRange(bad)).toBeNull();
    }
  });
});

describe('parseTrustProxy', () => {
  it('unset, empty, 0 and false trust nobody', () => {
    for (const raw of [undefined, null, '', ' ', '0', 'false', 'FALSE']) {
      expect(parseTrustProxy(raw)).toEqual({ ok: true, value: { mode: 'none' } });
    }
  });
  it('a number is a count of hops', () => {
    expect(parseTrustProxy('2')).toEqual({ ok: true, value: { mode: 'hops', hops: 2 } });
  });
  it('a list of addresses, ranges and keywords', () => {
    const value = trust('127.0.0.1, 10.0.0.0/8,::1,loopback');
    expect(value.mode).toBe('addresses');
    expect(value.mode === 'addresses' && value.ranges).toHaveLength(5);
  });
  it('bad values are one clear line naming what was not understood', () => {
    const refused = (raw: string) => {
      const parsed = parseTrustProxy(raw);
      return parsed.ok ? 'accepted' : parsed.error;
    };
    expect(refused('true')).toMatch(/^TRUST_PROXY must be .*not understood: true\)$/);
    expect(refused('10.0.0.0/8, nginx, ')).toContain('not understood: nginx, (empty))');
    expect(parseTrustProxy('99')).toMatchObject({ ok: false, error: expect.stringContaining('10 hops at most (got "99")') });
    for (const raw of ['true', 'nginx', '99', '1.2.3.4/40']) {
      const parsed = parseTrustProxy(raw);
      expect(!parsed.ok && parsed.error.includes('\n')).toBe(false);
    }
  });
});

describe('visitorAddress', () => {
  const none = trust('0');
  it('trusting nobody: the socket address, whatever X-Forwarded-For says', () => {
    expect(visitorAddress('::ffff:198.51.100.7', '203.0.113.1', none)).toBe('198.51.100.7');
    expect(visitorAddress('198.51.100.7', null, none)).toBe('198.51.100.7');
    expect(visitorAddress(undefined, '203.0.113.1', none)).toBeNull();
  });
  it('N hops: the N-th entry from the right; the left-most when the chain is shorter', () => {
    const xff = '203.0.113.66, 198.51.100.7, 10.0.0.2';
    expect(visitorAddress('10.0.0.1', xff, trust('1'))).toBe('10.0.0.2');
    expect(visitorAddress('10.0.0.1', xff, trust('2'))).toBe('198.51.100.7');
    expect(visitorAddress('10.0.0.1', '198.51.100.7', trust('3'))).toBe('198.51.100.7');
    expect(visitorAddress('10.0.0.1', null, trust('1'))).toBe('10.0.0.1');
  });
  it('N hops: a spoofed left part never wins, and the spellings of the hop are understood', () => {
    expect(visitorAddress('127.0.0.1', '1.1.1.1, 2.2.2.2, 198.51.100.7:5678', trust('1'))).toBe('198.51.100.7');
    expect(visitorAddress('127.0.0.1', '1.1.1.1, [2001:db8::1]:443', trust('1'))).toBe('2001:db8::1');
  });
  it('N hops: an unknown or garbage hop gives no address (nothing left of it can be believed)', () => {
    expect(visitorAddress('127.0.0.1', '198.51.100.7, unknown', trust('1'))).toBeNull();
    expect(visitorAddress('127.0.0.1', '198.51.100.7,', trust('1'))).toBeNull();
  });
  it('addresses: skips trusted proxies from the right, takes the first untrusted hop', () => {
    const proxies = trust('loopback,10.0.0.0/8');
    expect(visitorAddress('127.0.0.1', '203.0.113.66, 198.51.100.7, 10.1.2.3', proxies)).toBe('198.51.100.7');
    expect(visitorAddress('::ffff:127.0.0.1', '198.51.100.7', proxies)).toBe('198.51.100.7');
    // A direct connection from outside: its X-Forwarded-For is the visitor's own invention.
    expect(visitorAddress('198.51.100.9', '10.0.0.5, 1.1.1.1', proxies)).toBe('198.51.100.9');
    expect(visitorAddress('127.0.0.1', '10.0.0.5', proxies)).toBe('10.0.0.5');
    expect(visitorAddress('127.0.0.1', null, proxies)).toBe('127.0.0.1');
    expect(visitorAddress('127.0.0.1', '198.51.100.7, unknown', proxies)).toBeNull();
  });
});

describe('ranges on proxy-addr: what this project keeps of its own', () => {
  it('a zero prefix is a range (proxy-addr refuses it): all addresses of its family', () => {
    const v6 = parseIpRange('::/0')!;
    expect(ipInRange('2001:db8::1', v6)).toBe(true);
    expect(ipInRange('ffff::1', v6)).toBe(true);
    expect(ipInRange('1.2.3.4', v6)).toBe(false);
    expect(ipInRange('255.255.255.255', parseIpRange('0.0.0.0/0')!)).toBe(true);
    expect(ipInRange('2001:db8::1', parseIpRange('0.0.0.0/0')!)).toBe(false);
  });
  it('only prefix lengths and strict addresses, though proxy-addr would read netmasks, octal, long numbers and zones', () => {
    for (const bad of ['10.0.0.0/255.0.0.0', '012.0.0.1', '010.0.0.0/8', '167772161', '0x0a.0.0.1', 'fe80::1%eth0', 'fe80::/10%eth0']) {
      expect(parseIpRange(bad)).toBeNull();
    }
    expect(parseTrustProxy('10.0.0.0/255.0.0.0')).toMatchObject({
      ok: false,
      error: expect.stringContaining('not understood: 10.0.0.0/255.0.0.0)'),
    });
  });
  it('IPv6 with a dotted IPv4 tail, which proxy-addr reads only in the eight-group form', () => {
    const nat64 = parseIpRange('64:ff9b::/96')!;
    expect(ipInRange('64:ff9b::198.51.100.7', nat64)).toBe(true);
    expect(ipInRange('64:ff9b::1:198.51.100.7', nat64)).toBe(false);
    expect(ipInRange('64:ff9b::c633:6407', parseIpRange('64:ff9b::198.51.100.0/120')!)).toBe(true);
    expect(visitorAddress('64:ff9b::10.0.0.1', '198.51.100.7', trust('64:ff9b::10.0.0.0/120'))).toBe('198.51.100.7');
  });
  it('every address canonicalIp accepts is a range of one that contains itself', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (address) => {
        const range = parseIpRange(address);
        expect(range).not.toBeNull();
        expect(ipInRange(address, range!)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
  it('an IPv4-mapped IPv6 range in hex matches its IPv4 addresses (before, it could never match: hops are IPv4)', () => {
    const mapped = trust('::ffff:a00:0/104');
    expect(visitorAddress('10.0.0.1', '198.51.100.7', mapped)).toBe('198.51.100.7');
    expect(visitorAddress('::ffff:10.0.0.1', '198.51.100.7', mapped)).toBe('198.51.100.7');
    expect(visitorAddress('11.0.0.1', '198.51.100.7', mapped)).toBe('11.0.0.1');
    // Other IPv6 ranges never cover IPv4 hops.
    expect(visitorAddress('10.0.0.1', '198.51.100.7', trust('::/0'))).toBe('10.0.0.1');
    expect(ipInRange('::ffff:a00:1', parseIpRange('10.0.0.0/8')!)).toBe(true);
  });
  it('an empty X-Forwarded-For entry stops the walk (proxy-addr would drop it and believe the entry to its left)', () => {
    const proxies = trust('loopback');
    expect(visitorAddress('127.0.0.1', '198.51.100.7, ', proxies)).toBeNull();
    expect(visitorAddress('127.0.0.1', '198.51.100.7,,127.0.0.2', proxies)).toBeNull();
    expect(visitorAddress('127.0.0.1', '198.51.100.7, 127.0.0.2', proxies)).toBe('198.51.100.7');
  });
  it('proxy hops in their spellings are trusted by their address; with a count, our proxies are skipped whatever they wrote', () => {
    const proxies = trust('10.0.0.0/8');
    expect(visitorAddress('10.0.0.1', '198.51.100.7, "[::ffff:10.0.0.2]:80", 10.0.0.3:8080', proxies)).toBe('198.51.100.7');
    expect(visitorAddress('10.0.0.1', '198.51.100.7, unknown', trust('2'))).toBe('198.51.100.7');
    expect(visitorAddress(undefined, '198.51.100.7', proxies)).toBeNull();
  });
});
