/**
 * The lingering close of a request answered before its body was read (a 413, a 401), for the leads server and the
 * landing's server alike. Answering and closing while the client is still sending makes the kernel reset the
 * connection, and the reset can reach the client before it has read the answer ("connection reset" instead of the
 * answer it was owed). Types only from Node: nothing here runs in a browser bundle, and nothing pulls Node into one.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** Close when the client has sent nothing for `idleMs`, after `totalMs` in any case, or past `maxBytes` discarded. */
export interface LingerBounds {
  idleMs: number;
  totalMs: number;
  maxBytes: number;
}

/** nginx's lingering close: 5 s idle, 30 s in all (its lingering_time), 64 MB. */
export const LINGER_BOUNDS: LingerBounds = { idleMs: 5_000, totalMs: 30_000, maxBytes: 64 * 1024 * 1024 };

const lingering = new WeakSet<Socket>();

/**
 * Prepares the lingering close of a request answered (with `Connection: close`) before its body was read. Node closes
 * such a connection as soon as the answer is written (`destroySoon()`); here that only ends our side (FIN after the
 * answer), and the rest of the body is read and thrown away until the client stops sending or closes, within
 * `bounds`; only then is the socket closed.
 */
export function lingerAfterAnswer(req: IncomingMessage, bounds: LingerBounds = LINGER_BOUNDS): void {
  const socket = req.socket;
  if (lingering.has(socket)) return;
  lingering.add(socket);
  let discarded = 0;
  let idle: NodeJS.Timeout | undefined;
  let total: NodeJS.Timeout | undefined;
  const close = () => socket.destroy();
  // The client going away now is expected, not an error of this request.
  req.on('error', () => undefined);
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    idle?.refresh();
    if (discarded > bounds.maxBytes) close();
  });
  req.resume();
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
    idle = setTimeout(close, bounds.idleMs).unref();
    total = setTimeout(close, bounds.totalMs).unref();
    // However it closes (here, by the client, by a timer), the timers go with it.
    socket.once('close', () => {
      clearTimeout(idle);
      clearTimeout(total);
    });
  };
}
