/**
 * `POST /leads` reading its body: the size limit (16 KB), JSON, and what happens to uploads far over the limit — in
 * parallel, flooding after an early answer, or aborted (docs/requirements.md §1.1, step 4).
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { LINGER_BOUNDS, SECRET_HEADER } from '@stickers/shared';
import { NO_HOURLY_LIMIT, SECRET, counterValue, lead, postLead, sandboxSuite, waitFor, type BootOptions, type TestServer } from './harness';
import { sqlRow } from './support/test-database';

const suite = sandboxSuite();
let server: TestServer;
/** The app on a fresh database, with the Telegram sandbox and no hourly limit a test reaches. */
const boot = async (options: BootOptions = {}) => (server = await suite.boot({ limits: NO_HOURLY_LIMIT, ...options }));

function row(sql: string, ...params: unknown[]) {
  return sqlRow<Record<string, any>>(server.db, sql, ...params);
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe('step 4: size and JSON', () => {
  it('a wrong secret with a 20 KB body is 401, not 413', async () => {
    await boot();
    const res = await postLead(server, lead({ comment: 'x'.repeat(20_000) }), { [SECRET_HEADER]: 'wrong' });
    expect(res).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
  });

  it('the right secret with 16385 bytes is 413; 16384 bytes is read', async () => {
    await boot();
    const base = JSON.stringify(lead({ comment: '' }));
    const pad = (size: number) => base.slice(0, -1) + `,"pad":"${'p'.repeat(size - Buffer.byteLength(base) - 9)}"}`;
    expect(Buffer.byteLength(pad(16385))).toBe(16385);
    expect(await postLead(server, pad(16385))).toMatchObject({ status: 413, body: { error: 'payload_too_large' } });
    expect((await postLead(server, pad(16384))).status).toBe(201);
  });

  it('a declared Content-Length over the limit is 413 before a byte of the body is read: the headers alone get it', async () => {
    await boot();
    const { hostname, port } = new URL(server.url);
    const head = [
      `POST /leads HTTP/1.1`,
      `Host: ${hostname}`,
      `${SECRET_HEADER}: ${SECRET}`,
      'Content-Type: application/json',
      'Content-Length: 20000',
    ];
    // The client sends the headers and no body at all, and waits: only an answer given unread can reach it.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(`${head.join('\r\n')}\r\n\r\n`));
      const received: Buffer[] = [];
      socket.on('data', (d: Buffer) => {
        received.push(d);
        const text = Buffer.concat(received).toString('utf8');
        if (text.includes('payload_too_large')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(received).toString('utf8')));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('Connection: close');
    expect(answer).toContain('{"error":"payload_too_large"}');
    expect(await row('select count(*) as n from leads')).toEqual({ n: 0 });
  });

  it('a chunked body (no Content-Length) over the limit is 413', async () => {
    await boot();
    const body = JSON.stringify(lead({ comment: 'к'.repeat(9000) }));
    const res = await fetch(`${server.url}/leads`, {
      method: 'POST',
      headers: { [SECRET_HEADER]: SECRET, 'Content-Type': 'application/json' },
      body: new Blob([body]).stream(),
      duplex: 'half',
    });
    expect(res.status).toBe(413);
  });

  it.each([
    ['invalid JSON', '{"name": '],
    ['an array', '[1,2]'],
    ['null', 'null'],
    ['a string', '"hello"'],
    ['a number', '42'],
    ['an empty body', ''],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
    // 2.7 KB that class-transformer's copy would recurse through until the stack ran out (a 500 before).
    ['a lead with a field nested 1,320 deep', JSON.stringify({ ...lead(), junk: JSON.parse(`${'['.repeat(1320)}${']'.repeat(1320)}`) })],
  ])('%s is 422 invalid_body', async (_what, payload) => {
    await boot();
    const res = await fetch(`${server.url}/leads`, {
      method: 'POST',
      headers: { [SECRET_HEADER]: SECRET, 'Content-Type': 'application/json' },
      body: payload,
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ error: 'invalid_body' });
  });

  it('a 50 MB upload is refused without being read: the answer comes before the client has sent it', async () => {
    await boot();
    for (const declared of [true, false]) {
      const { status, sent } = await new Promise<{ status: number; sent: number }>((resolve, reject) => {
        const url = new URL(`${server.url}/leads`);
        const total = 50 * 1024 * 1024;
        const req = httpRequest({
          host: url.hostname,
          port: url.port,
          path: '/leads',
          method: 'POST',
          headers: { [SECRET_HEADER]: SECRET, 'Content-Type': 'application/json', ...(declared ? { 'Content-Length': total } : {}) },
        });
        let sent = 0;
        let answered = false;
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        req.on('response', (res) => {
          answered = true;
          res.resume();
          resolve({ status: res.statusCode ?? 0, sent });
          req.destroy();
        });
        req.on('error', (err) => (answered ? undefined : reject(err)));
        const pump = () => {
          while (!answered && sent < total) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          if (!answered) req.end();
        };
        pump();
      });
      expect(status).toBe(413);
      expect(sent).toBeLessThan(8 * 1024 * 1024);
    }
  });
});

interface RawUpload {
  response: string;
  sent: number;
  error: string | null;
}

/**
 * A client that sends all of `total` body bytes whatever the server answers, and reads the answer only once it has
 * sent everything (as a client does that writes its whole body first). Chunked when `chunked`.
 */
function rawUpload(url: string, total: number, chunked: boolean): Promise<RawUpload> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const received: Buffer[] = [];
    let sent = 0;
    let error: string | null = null;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const frame = chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk;
    socket.pause();
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    socket.on('close', () => resolve({ response: Buffer.concat(received).toString('latin1'), sent, error }));
    socket.on('connect', () => {
      const length = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${total}`;
      const head = [`POST /leads HTTP/1.1`, `Host: ${hostname}`, `${SECRET_HEADER}: ${SECRET}`, 'Content-Type: application/json', length];
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      const pump = () => {
        while (sent < total && !socket.destroyed) {
          sent += chunk.length;
          if (!socket.write(frame)) return void socket.once('drain', pump);
        }
        if (socket.destroyed) return;
        if (chunked) socket.write('0\r\n\r\n');
        // Everything is sent: now read the answer, then close our side.
        socket.resume();
        socket.end();
      };
      pump();
    });
  });
}

describe('413 with a lingering close', () => {
  it('16 parallel uploads of 20 MB (declared and chunked) that keep sending all read their 413, with no connection reset', async () => {
    await boot({ sandbox: undefined });
    const total = 20 * 1024 * 1024;
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => rawUpload(server.url, total, i % 2 === 1)));
    for (const r of results) {
      expect(r.error).toBeNull();
      expect(r.sent).toBe(total);
      expect(r.response).toMatch(/^HTTP\/1\.1 413 /);
      expect(r.response).toContain('Connection: close');
      expect(r.response).toContain('{"error":"payload_too_large"}');
    }
    expect(await counterValue(server, 'leads_submissions_total', { result: 'rejected', reason: 'payload_too_large' })).toBe(16);
  });
});

interface Flood {
  /** The answer's status line. */
  status: string;
  response: string;
  /** Body bytes the client's kernel took before the connection was closed (all it tried when it never was). */
  written: number;
}

/**
 * A hostile client: sends `total` body bytes to `path` as fast as the server takes them, whatever it answers, and goes
 * on after the server has ended its side (half-open, as a client that ignores the answer does); it reads the answer
 * as it comes. Chunked when `chunked`, else with `Content-Length: total`.
 */
function floodUpload(url: string, path: string, total: number, chunked: boolean): Promise<Flood> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
    const received: Buffer[] = [];
    let written = 0;
    let queued = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x7b);
    const frame = chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk;
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const response = Buffer.concat(received).toString('latin1');
      resolve({ status: response.split('\r\n')[0], response, written });
    });
    socket.on('connect', () => {
      const length = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${total}`;
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n${length}\r\n\r\n`);
      const pump = () => {
        while (queued < total && !socket.destroyed) {
          queued += chunk.length;
          const ok = socket.write(frame, (err) => {
            if (!err) written += chunk.length;
          });
          if (!ok) return void socket.once('drain', pump);
        }
        if (socket.destroyed) return;
        // All of it went: the server read it to the end. Close our side; the server's close ends the test.
        if (chunked) socket.write('0\r\n\r\n');
        socket.end();
      };
      pump();
    });
  });
}

describe('an early answer bounds what is read after it', () => {
  const TRIED = 200 * 1024 * 1024;
  // What the server reads and discards at most (LINGER_BOUNDS.maxBytes), and what the two sockets' kernel buffers hold
  // besides (a few MB on loopback).
  const BOUND = LINGER_BOUNDS.maxBytes + 16 * 1024 * 1024;

  it.each([
    ['a 401 (no secret) on POST /leads', '/leads', /^HTTP\/1\.1 401 /, false],
    ['a 401 (no secret) on POST /leads, chunked', '/leads', /^HTTP\/1\.1 401 /, true],
    ['a 404 on a route that does not exist', '/no/such/route', /^HTTP\/1\.1 404 /, false],
    ['a 404 on a route that does not exist, chunked', '/no/such/route', /^HTTP\/1\.1 404 /, true],
  ])('%s: answered, then closed after at most the lingering bound of a 200 MB upload', async (_name, path, status, chunked) => {
    await boot({ sandbox: undefined });
    const flood = await floodUpload(server.url, path, TRIED, chunked);
    expect(flood.status).toMatch(status);
    expect(flood.written).toBeLessThanOrEqual(BOUND);
    expect(flood.written).toBeLessThan(TRIED / 2);
    expect(flood.response).toContain('Connection: close');
  });
});

/** Sends the headers and part of a body, then goes away. */
function abortedUpload(url: string): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      const head = [`POST /leads HTTP/1.1`, `Host: ${hostname}`, `${SECRET_HEADER}: ${SECRET}`, 'Content-Length: 10000'];
      socket.write(`${head.join('\r\n')}\r\n\r\n{"name":"Ан`);
      socket.end();
    });
    socket.resume();
    socket.on('error', reject);
    socket.on('close', () => resolve());
  });
}

describe('aborted uploads', () => {
  it('50 aborted uploads: no error-level line, at most two lines in all, each with the count it stands for', async () => {
    await boot({ sandbox: undefined });
    await Promise.all(Array.from({ length: 50 }, () => abortedUpload(server.url)));
    const counted = () => counterValue(server, 'leads_submissions_total', { result: 'aborted' });
    await waitFor(async () => (await counted()) === 50, 10_000, '50 aborted uploads seen');
    // A real request still works after the flood.
    expect((await postLead(server, lead())).status).toBe(201);
    await server.close();

    const lines = server.logger.lines;
    expect(lines.filter((l) => l.startsWith('error ') || l.startsWith('fatal '))).toEqual([]);
    const aborted = lines.filter((l) => l.includes('aborted'));
    expect(aborted.length).toBeGreaterThanOrEqual(1);
    expect(aborted.length).toBeLessThanOrEqual(2);
    for (const l of aborted) expect(l.startsWith('warn ')).toBe(true);
    const counts = aborted.map((l) => Number(/"count":(\d+)/.exec(l)?.[1]));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(50);
  });
});
