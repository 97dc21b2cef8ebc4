// The built landing as a process, over real sockets: a form body over the 64 KiB limit (5 MB) is answered 413 and the
// connection is closed only once the client has stopped sending (a lingering close), so a client that reads the
// answer after sending its whole body still finds it, instead of a connection reset that threw it away.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startLanding, waitForHttp } from './stack.mjs';

const SECRET = 'body-limit-secret-0123456789';
const FIVE_MB = Buffer.from(`comment=${'a'.repeat(5 * 1024 * 1024)}`);
let stand;
let landing;

before(async () => {
  stand = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res.writeHead(201, { 'Content-Type': 'application/json' }).end('{"lead_number":1,"duplicate":false,"repeat":false}'),
    );
  });
  await new Promise((r) => stand.listen(0, '127.0.0.1', r));
  landing = await startLanding(
    { LEADS_ENDPOINT: `http://127.0.0.1:${stand.address().port}/leads`, LEADS_SECRET: SECRET, MIN_FILL_MS: '0' },
    { wait: false },
  );
  await waitForHttp(`${landing.url}/health`, landing.child, 'landing');
});
after(async () => {
  if (landing?.child.exitCode === null) {
    landing.child.kill('SIGTERM');
    await new Promise((r) => landing.child.once('exit', r));
  }
  stand?.closeAllConnections();
  await new Promise((r) => (stand ? stand.close(r) : r()));
});

/**
 * Sends `head` and `body` on a raw connection without reading anything until the whole body is written, then reads:
 * resolves with what arrived and how the connection ended (`end`, or the error code of a reset).
 */
function sendThenRead(head, body) {
  return new Promise((resolve) => {
    const socket = connect(landing.port, '127.0.0.1');
    socket.pause();
    const received = [];
    let sent = false;
    const finish = (how) => resolve({ how, sent, answer: Buffer.concat(received).toString('latin1') });
    socket.on('end', () => finish('end'));
    socket.on('error', (err) => finish(err.code ?? err.message));
    socket.write(head);
    socket.end(body, () => {
      sent = true;
      socket.on('data', (d) => received.push(d));
      socket.resume();
    });
  });
}

describe('a form body over the limit', () => {
  it('5 MB with its Content-Length: the client reads the 413 after sending it all; then the landing closes, no reset', async () => {
    const head = `POST /?index HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${FIVE_MB.length}\r\n\r\n`;
    const { how, sent, answer } = await sendThenRead(head, FIVE_MB);
    assert.equal(how, 'end');
    assert.ok(sent, 'the whole body was sent');
    assert.equal(answer.split('\r\n')[0], 'HTTP/1.1 413 Payload Too Large');
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assert.ok(answer.endsWith('\r\n\r\nPayload Too Large\n'), answer);
  });

  it('5 MB chunked: cut off once past the limit, and the client still reads the 413', async () => {
    const head =
      'POST /?index HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n';
    const body = Buffer.concat([Buffer.from(`${FIVE_MB.length.toString(16)}\r\n`), FIVE_MB, Buffer.from('\r\n0\r\n\r\n')]);
    const { how, answer } = await sendThenRead(head, body);
    assert.equal(how, 'end');
    assert.equal(answer.split('\r\n')[0], 'HTTP/1.1 413 Payload Too Large');
  });

  it('fetch posting 5 MB gets the 413 answer, and the landing goes on serving', async () => {
    const res = await fetch(`${landing.url}/?index`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: FIVE_MB,
    });
    assert.equal(res.status, 413);
    assert.equal(await res.text(), 'Payload Too Large\n');
    assert.equal((await fetch(`${landing.url}/health`)).status, 200);
  });
});
