import type { IncomingMessage, ServerResponse } from 'node:http';
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

/** For a request answered (`Connection: close`) before its body was read: a client still sending reads its answer, not a reset. */
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
  // Node's HTTP server calls destroySoon() once the `Connection: close` answer is written.
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

/** Every route: an answer written before its body was read closes lingering; else Node would read the rest, however large. */
export function closeAfterEarlyAnswer(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  if (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0) {
    // The headers are written by writeHead, explicitly or from the first write or end: the last moment to say close.
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
    res.writeHead = (...args: unknown[]) => {
      if (!req.complete) {
        res.setHeader('Connection', 'close');
        lingerAfterAnswer(req);
      }
      return writeHead(...args);
    };
  }
  next();
}
