/**
 * The landing's request body limit and its 413 over real sockets, with the functions server.mjs uses: a client still
 * sending a large body gets the 413 answer (a lingering close), not a connection reset; the connection is closed once
 * the client stops, or within the bounds.
 */
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LingerBounds } from '@stickers/shared';
import { BODY_LIMIT_BYTES, declaredTooLarge, readLimitedBody, refuseTooLarge } from '~/body-limit.server';

let server: Server;
let port = 0;
let bounds: LingerBounds | undefined;
const bodies: number[] = [];

beforeAll(async () => {
  // As server.mjs serves a POST: the body under the limit, then an answer.
  server = createServer((req, res) => {
    void readLimitedBody(req, res, bounds).then((body) => {
      if (body === null) return;
      bodies.push(body.length);
      res.end(`read ${body.length}\n`);
    });
  });
  server.on('checkContinue', (req, res) => {
    if (declaredTooLarge(req)) return refuseTooLarge(req, res, bounds);
    res.writeContinue();
    server.emit('request', req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** A 5 MB form, URL-encoded, as a browser or a script would post it. */
const FIVE_MB = Buffer.from(`comment=${'a'.repeat(5 * 1024 * 1024)}`);

/** Posts `body` in 64 KiB writes, with its Content-Length or chunked; resolves with the answer or rejects with the error. */
function post(body: Buffer, { chunked = false } = {}): Promise<{ status: number; text: string; connection?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/?index',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        ...(chunked ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': String(body.length) }),
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, connection: res.headers.connection }));
      res.on('error', reject);
    });
    req.on('error', reject);
    let offset = 0;
    const writeMore = () => {
      while (offset < body.length) {
        const piece = body.subarray(offset, offset + 64 * 1024);
        offset += piece.length;
        if (!req.write(piece)) return void req.once('drain', writeMore);
      }
      req.end();
    };
    writeMore();
  });
}

describe('a body over the limit', () => {
  it('a 5 MB form with its Content-Length: the client, still sending, receives the 413 answer', async () => {
    for (let i = 0; i < 5; i += 1) {
      expect(await post(FIVE_MB)).toEqual({ status: 413, text: 'Payload Too Large\n', connection: 'close' });
    }
  });

  it('a 5 MB chunked form: cut off with the 413 once past the limit, and the client receives it', async () => {
    for (let i = 0; i < 5; i += 1) {
      expect(await post(FIVE_MB, { chunked: true })).toEqual({ status: 413, text: 'Payload Too Large\n', connection: 'close' });
    }
  });

  it.each([
    ['its Content-Length', `Content-Length: ${FIVE_MB.length}`, FIVE_MB],
    [
      'chunked',
      'Transfer-Encoding: chunked',
      Buffer.concat([Buffer.from(`${FIVE_MB.length.toString(16)}\r\n`), FIVE_MB, Buffer.from('\r\n0\r\n\r\n')]),
    ],
  ])(
    'a client that reads only once it has sent the whole 5 MB (%s): the 413 is still there, then our FIN, no reset',
    async (_, framing, body) => {
      const socket = connect(port, '127.0.0.1');
      // Nothing is read until the body is sent: a reset would throw away the answer waiting unread.
      socket.pause();
      const received: Buffer[] = [];
      const outcome = new Promise<string>((resolve) => {
        socket.on('end', () => resolve('end'));
        socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      });
      socket.write(`POST /?index HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n${framing}\r\n\r\n`);
      const sent = await new Promise<string>((resolve) => socket.end(body, () => resolve('sent')));
      expect(sent).toBe('sent');
      socket.on('data', (d: Buffer) => received.push(d));
      socket.resume();
      expect(await outcome).toBe('end');
      const answer = Buffer.concat(received).toString('latin1');
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
      expect(answer).toMatch(/\r\nContent-Length: 18\r\n/i);
      expect(answer.endsWith('\r\n\r\nPayload Too Large\n')).toBe(true);
    },
  );

  it('a client that stops sending without closing: the connection is closed once it has been idle for the bound', async () => {
    bounds = { idleMs: 200, totalMs: 60_000, maxBytes: 64 * 1024 * 1024 };
    try {
      const socket = connect(port, '127.0.0.1');
      let answer = '';
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
      socket.on('error', () => undefined);
      // Declares 5 MB, sends a little, then nothing.
      socket.write(`POST /?index HTTP/1.1\r\nHost: x\r\nContent-Length: ${FIVE_MB.length}\r\n\r\n${'a'.repeat(1000)}`);
      await closed;
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    } finally {
      bounds = undefined;
    }
  });

  it('a client that goes on sending past the bytes bound: the connection is closed', async () => {
    bounds = { idleMs: 60_000, totalMs: 60_000, maxBytes: 256 * 1024 };
    try {
      const socket = connect(port, '127.0.0.1');
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.on('error', () => undefined);
      socket.on('data', () => undefined);
      socket.write(`POST /?index HTTP/1.1\r\nHost: x\r\nContent-Length: ${FIVE_MB.length}\r\n\r\n`);
      // Sends without end; only the bound can close it.
      const piece = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (!socket.destroyed && socket.write(piece));
        if (!socket.destroyed) socket.once('drain', pump);
      };
      pump();
      await closed;
    } finally {
      bounds = undefined;
    }
  });
});

describe('a body under the limit', () => {
  it('is read whole, and the same server goes on serving', async () => {
    const form = Buffer.from(`comment=${'b'.repeat(BODY_LIMIT_BYTES - 100)}`);
    expect(await post(form)).toMatchObject({ status: 200, text: `read ${form.length}\n` });
    expect(await post(form, { chunked: true })).toMatchObject({ status: 200, text: `read ${form.length}\n` });
    expect(bodies.slice(-2)).toEqual([form.length, form.length]);
  });
});
