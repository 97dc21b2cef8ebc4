/**
 * Graceful shutdown with a keep-alive connection whose request is in flight: the request is answered and stored,
 * then the connection is closed at once, so that the server's close() ends without waiting for the keep-alive
 * timeout or being cut off by the drain's bound (closeAllConnections).
 */
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { SECRET_HEADER } from '@stickers/shared';
import { SECRET, lead, sandboxSuite } from './harness';
import { sqlRows } from './support/test-database';

const { tmp, sandbox, start } = sandboxSuite();

it('a request in flight at shutdown is answered and stored, and its keep-alive connection is closed right after', async () => {
  const server = await start({ dbPath: join(tmp.dir, 'shutdown.sqlite'), sandbox });
  const http = server.app.getHttpServer() as Server;
  // Long enough that only an explicit close ends the connection before the drain's bound.
  http.keepAliveTimeout = 60_000;
  const cutOff = jest.spyOn(http, 'closeAllConnections');
  // The server has the request (its head parsed, its body not complete).
  const inFlight = new Promise<void>((resolve) => http.once('request', () => resolve()));

  const body = JSON.stringify(lead());
  const { hostname, port } = new URL(server.url);
  const socket = connect(Number(port), hostname);
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('utf8')));
  const closedByServer = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(
    [
      'POST /leads HTTP/1.1',
      `Host: ${hostname}:${port}`,
      `${SECRET_HEADER}: ${SECRET}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body.slice(0, -1),
    ].join('\r\n'),
  );
  await inFlight;

  const closed = server.close();
  socket.write(body.slice(-1));
  await closedByServer;
  await closed;

  expect(received).toMatch(/^HTTP\/1\.1 201 /);
  expect(cutOff).not.toHaveBeenCalled();
  jest.restoreAllMocks();
});

it('the lead answered during the shutdown is in the database', async () => {
  // The same database file, opened again: what was acknowledged above was committed.
  const server = await start({ dbPath: join(tmp.dir, 'shutdown.sqlite'), sandbox });
  expect(await sqlRows(server.db, 'select id from leads')).toHaveLength(1);
});
