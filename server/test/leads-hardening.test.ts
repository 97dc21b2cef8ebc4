/**
 * `POST /leads` under hostile conditions: a landing locked out by wrong secrets, a database file deleted or replaced
 * under the running server, uploads far over the size limit in parallel, and floods of aborted uploads.
 */
import { createHmac } from 'node:crypto';
import { copyFileSync, renameSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { SECRET_HEADER } from '@stickers/shared';
import { WriteHealth } from '../src/database/write-health';
import { LINGER_BOUNDS } from '../src/http/linger';
import { Metrics } from '../src/observability/metrics';
import { ADMIN_CHAT, FakeClock, SALT, SECRET, lead, postLead, waitFor, type TestServer, sandboxSuite, watchAlerts } from './harness';
import { describeSqliteOnly, sqlRow } from './support/test-database';

const MIN = 60_000;
const { tmp, sandbox, start } = sandboxSuite();
let server: TestServer;
let n = 0;

async function boot(options: { env?: Record<string, string>; clock?: FakeClock; telegram?: boolean } = {}) {
  server = await start({
    dbPath: join(tmp.dir, `hardening-${++n}`, 'leads.sqlite'),
    sandbox: options.telegram === false ? undefined : sandbox,
    clock: options.clock,
    env: { LEADS_HOURLY_LIMIT: '100000', LEADS_IP_LIMIT: '100000', ...options.env },
  });
  return server;
}

const count = async (sql: string, ...params: unknown[]) => (await sqlRow<{ n: number }>(server.db, sql, ...params))!.n;

describe('wrong-secret lockout alert', () => {
  it('the 5th wrong secret from one address sends one admin alert, naming the address by its hash only; no second one', async () => {
    const clock = new FakeClock();
    await boot({ clock });
    const callerHash = createHmac('sha256', SALT).update('caller:127.0.0.1').digest('hex');
    for (let i = 0; i < 5; i += 1) {
      expect((await postLead(server, lead(), { [SECRET_HEADER]: `wrong-${i}` })).status).toBe(401);
      clock.advance(MIN);
    }
    await waitFor(() => sandbox.messages(ADMIN_CHAT).length > 0, 5000, 'the lockout alert');
    const [alert] = sandbox.messages(ADMIN_CHAT);
    expect(alert.text).toContain(callerHash.slice(0, 10));
    expect(alert.text).toContain('LEADS_SECRET');
    expect(alert.text).not.toContain('127.0.0.1');

    // During the lockout: a 6th wrong secret and the right one are both refused, and alert nobody.
    const alerts = watchAlerts(server);
    expect(await postLead(server, lead(), { [SECRET_HEADER]: 'wrong-6' })).toMatchObject({ status: 429, body: { why: 'secret' } });
    expect((await postLead(server, lead())).status).toBe(429);
    expect(await alerts()).toEqual([]);
    expect(await count("select count(*) as n from alert_throttles where key like 'secret_lockout:%'")).toBe(1);
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(1);

    // The first failure leaves the window: one more wrong secret starts a new lockout, inside the alert's throttle.
    clock.advance(5 * MIN);
    expect((await postLead(server, lead(), { [SECRET_HEADER]: 'wrong-7' })).status).toBe(401);
    const throttled = (l: string) => l.includes('caller locked out') && l.includes('"alert":"throttled"');
    await waitFor(() => server.logger.lines.some(throttled), 5000, 'the throttled alert');
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(1);
    expect(server.logger.lines.join('\n')).not.toContain('127.0.0.1');
  });
});

describeSqliteOnly('the database file under a running server (SQLite only: the file at DATABASE_PATH)', () => {
  it('deleted: POST /leads answers 503 unavailable and stores nothing; /health stays 200; readiness learns the submit failed', async () => {
    await boot({ telegram: false });
    expect((await postLead(server, lead())).status).toBe(201);
    rmSync(server.config.databasePath);

    const refused = lead();
    const res = await postLead(server, refused);
    expect(res).toMatchObject({ status: 503, body: { error: 'unavailable' } });
    expect(res.body).toEqual({ error: 'unavailable' });
    expect(await count('select count(*) as n from leads where request_id = ?', refused.request_id)).toBe(0);
    expect(await count('select count(*) as n from leads')).toBe(1);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect(server.app.get(WriteHealth).failing('submit')).toMatchObject({ site: 'submit', code: 'DATABASE_FILE_GONE' });
    expect(server.app.get(Metrics).value('leads_submissions_total', { result: 'unavailable' })).toBe(1);
    // Retries of a lead acknowledged before are refused too: no answer may come from a file nobody will open again.
    expect((await postLead(server, refused)).status).toBe(503);
  });

  it('replaced by another file (moved over it): POST /leads answers 503 and the new file gets nothing', async () => {
    await boot({ telegram: false });
    expect((await postLead(server, lead())).status).toBe(201);
    const path = server.config.databasePath;
    copyFileSync(path, `${path}.copy`);
    renameSync(`${path}.copy`, path);
    const refused = lead();
    expect(await postLead(server, refused)).toMatchObject({ status: 503, body: { error: 'unavailable' } });
    expect(await count('select count(*) as n from leads where request_id = ?', refused.request_id)).toBe(0);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
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
    await boot({ telegram: false });
    const total = 20 * 1024 * 1024;
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => rawUpload(server.url, total, i % 2 === 1)));
    for (const r of results) {
      expect(r.error).toBeNull();
      expect(r.sent).toBe(total);
      expect(r.response).toMatch(/^HTTP\/1\.1 413 /);
      expect(r.response).toContain('Connection: close');
      expect(r.response).toContain('{"error":"payload_too_large"}');
    }
    expect(server.app.get(Metrics).value('leads_submissions_total', { result: 'rejected', reason: 'payload_too_large' })).toBe(16);
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
    await boot({ telegram: false });
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
    await boot({ telegram: false });
    const metrics = server.app.get(Metrics);
    await Promise.all(Array.from({ length: 50 }, () => abortedUpload(server.url)));
    await waitFor(() => metrics.value('leads_submissions_total', { result: 'aborted' }) === 50, 10_000, '50 aborted uploads seen');
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
