/**
 * The Telegram webhook reads its update with the bounded body reader POST /leads uses (server/src/http): an update
 * over its 1 MB limit is answered 413 and the connection closed with the same lingering close, so a sender that keeps
 * sending reads its 413 instead of a connection reset.
 */
import { connect } from 'node:net';
import { TELEGRAM_SECRET_HEADER } from '../src/bot/telegram-webhook.controller';
import { freePort, sandboxSuite, waitFor } from './harness';

const SECRET_TOKEN = 'webhook-secret-0123456789_abc-XYZ';
const { tmp, sandbox, start } = sandboxSuite();

interface RawUpload {
  response: string;
  sent: number;
  error: string | null;
}

/** Sends a chunked body of `total` bytes whatever the server answers, and reads the answer only once all is sent. */
function chunkedUpload(url: string, total: number): Promise<RawUpload> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const received: Buffer[] = [];
    let sent = 0;
    let error: string | null = null;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
    socket.pause();
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    socket.on('close', () => resolve({ response: Buffer.concat(received).toString('latin1'), sent, error }));
    socket.on('connect', () => {
      const head = [
        `POST ${pathname} HTTP/1.1`,
        `Host: ${hostname}`,
        `${TELEGRAM_SECRET_HEADER}: ${SECRET_TOKEN}`,
        'Content-Type: application/json',
        'Transfer-Encoding: chunked',
      ];
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      const pump = () => {
        while (sent < total && !socket.destroyed) {
          sent += chunk.length;
          if (!socket.write(frame)) return void socket.once('drain', pump);
        }
        if (socket.destroyed) return;
        socket.write('0\r\n\r\n');
        socket.resume();
        socket.end();
      };
      pump();
    });
  });
}

describe('the Telegram webhook on the shared body reader', () => {
  it('8 parallel chunked updates of 1.25 MB that keep sending all read their bare 413, with no connection reset', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/telegram/webhook`;
    await start({
      dbPath: `${tmp.dir}/webhook-413.sqlite`,
      port,
      polling: true,
      env: { TELEGRAM_WEBHOOK_URL: url, TELEGRAM_WEBHOOK_SECRET: SECRET_TOKEN },
    });
    await waitFor(() => sandbox.state.webhook, 5000, 'setWebhook');
    const total = 20 * 64 * 1024;
    const results = await Promise.all(Array.from({ length: 8 }, () => chunkedUpload(url, total)));
    for (const r of results) {
      expect(r.error).toBeNull();
      expect(r.sent).toBe(total);
      expect(r.response).toMatch(/^HTTP\/1\.1 413 /);
      expect(r.response).toContain('Connection: close');
    }
  });
});
