/**
 * Fuzzing POST /leads over real HTTP (bounded: a few hundred requests): arbitrary bodies, headers, content types,
 * sizes and encodings. No 5xx, no crash, no lead stored from an invalid body, every 422 names real fields.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import fc from 'fast-check';
import { LEAD_FIELDS, SERVER_FIELDS, SECRET_HEADER } from '@stickers/shared';
import { SECRET, startServer, tempDir, type TestServer } from './harness';
import { sqlRow } from './support/test-database';

let tmp: ReturnType<typeof tempDir>;
let server: TestServer;
const KNOWN_FIELDS = new Set<string>([...LEAD_FIELDS, ...SERVER_FIELDS]);

beforeAll(async () => {
  tmp = tempDir();
  server = await startServer({ dbPath: join(tmp.dir, 'fuzz.sqlite'), env: { LEADS_IP_LIMIT: '1000000', LEADS_HOURLY_LIMIT: '1000000' } });
});
afterAll(async () => {
  await server.close();
  tmp.remove();
});

function send(body: Buffer, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const url = new URL(`${server.url}/leads`);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: '/leads',
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(body.length) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const validLead = fc.record({
  request_id: fc.uuid({ version: 4 }),
  name: fc.string({ unit: 'grapheme', minLength: 2, maxLength: 30 }),
  telegram: fc.stringMatching(/^@[A-Za-z][A-Za-z0-9_]{4,20}$/),
  phone: fc.stringMatching(/^\+[1-9]\d{7,13}$/),
  client_ip: fc.ipV4(),
});
const anyJson = fc.oneof(
  fc.jsonValue(),
  fc.dictionary(fc.oneof(fc.constantFrom(...KNOWN_FIELDS), fc.string()), fc.jsonValue()),
  validLead.chain((l) =>
    fc.record({ ...Object.fromEntries(Object.entries(l).map(([k, v]) => [k, fc.oneof(fc.constant(v), fc.jsonValue())])) }),
  ),
);
const bodyBytes = fc.oneof(
  validLead.map((v) => Buffer.from(JSON.stringify(v))),
  anyJson.map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
  fc.uint8Array({ maxLength: 2048 }).map((a) => Buffer.from(a)),
  fc.string({ unit: 'binary', maxLength: 500 }).map((s) => Buffer.from(s, 'utf16le')),
  anyJson.map((v) => Buffer.from(`\uFEFF${JSON.stringify(v)}`)),
  fc.integer({ min: 16000, max: 17000 }).map((n) => Buffer.from(JSON.stringify({ pad: 'x'.repeat(n) }))),
);
const headers = fc.record(
  {
    'Content-Type': fc.constantFrom(
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=latin1',
      '',
    ),
    'Content-Encoding': fc.constantFrom('gzip', 'identity', 'br'),
    'Idempotency-Key': fc.oneof(fc.uuid({ version: 4 }), fc.string({ maxLength: 60 })),
    [SECRET_HEADER]: fc.oneof({ arbitrary: fc.constant(SECRET), weight: 9 }, { arbitrary: fc.string({ maxLength: 40 }), weight: 1 }),
  },
  { requiredKeys: [SECRET_HEADER] },
);

describe('fuzz POST /leads', () => {
  it('answers every input with a status of requirements §1.2, stores only valid leads, names only real fields', async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(bodyBytes, headers, async (body, hdrs) => {
        const clean = Object.fromEntries(
          Object.entries(hdrs).filter(([, v]) => typeof v === 'string' && /^[\t\x20-\x7e]*$/.test(v)),
        ) as Record<string, string>;
        const before = (await sqlRow<{ n: number }>(
          server.db,
          'select (select count(*) from leads) + (select count(*) from lead_repeats) as n',
        ))!;
        // Wrong secrets lock the caller out for 10 minutes; each input starts after the last window closed.
        server.clock.advance(11 * 60 * 1000);
        const res = await send(body, clean);
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
        expect([200, 201, 401, 413, 422, 429]).toContain(res.status);
        const parsed = JSON.parse(res.text) as { error?: string; errors?: Record<string, string> };
        const after = (await sqlRow<{ n: number }>(
          server.db,
          'select (select count(*) from leads) + (select count(*) from lead_repeats) as n',
        ))!;
        if (res.status >= 400) expect(after.n).toBe(before.n);
        if (res.status === 422 && parsed.error === 'invalid') {
          expect(Object.keys(parsed.errors ?? {}).length).toBeGreaterThan(0);
          for (const field of Object.keys(parsed.errors ?? {})) expect(KNOWN_FIELDS).toContain(field);
        }
      }),
      { numRuns: 400 },
    );
    // The generators reach the interesting answers, not only one of them.
    for (const status of [201, 413, 422]) expect(seen.get(status) ?? 0).toBeGreaterThan(0);
  });
});
