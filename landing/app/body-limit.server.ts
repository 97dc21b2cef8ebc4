/**
 * The largest request body the landing reads, and the 413 for a larger one, for `server.mjs` (which takes them from
 * the server build, like the spool's replay). The 413 closes the connection with a lingering close, as the leads
 * server's does: answering and closing while the client is still sending makes the kernel reset the connection, and
 * the reset can reach the client before it has read the answer ("connection reset" instead of the 413 it was owed).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The form is a few KiB at most. A larger declared Content-Length is refused before a byte is read; a chunked body
 * is cut off as soon as it passes the limit.
 */
export const BODY_LIMIT_BYTES = 64 * 1024;

export interface LingerBounds {
  /** Close when the client has sent nothing for this long. */
  idleMs: number;
  /** Close after this long in any case. */
  totalMs: number;
  /** Close after discarding this many body bytes. */
  maxBytes: number;
}

/** nginx's lingering close, with its idle timeout (5 s), a 30 s cap (its lingering_time) and 64 MB: the server's. */
export const LINGER_BOUNDS: LingerBounds = { idleMs: 5_000, totalMs: 30_000, maxBytes: 64 * 1024 * 1024 };

const lingering = new WeakSet<Socket>();

/**
 * Prepares a lingering close for a request answered (with `Connection: close`) before its body was read. Node
 * closes such a connection as soon as the answer is written (`destroySoon()`); here that only ends our side (FIN after
 * the answer), and the rest of the body is read and thrown away until the client stops sending or closes, within
 * `bounds`; only then is the socket closed.
 */
export function lingerAfterAnswer(req: IncomingMessage, bounds: LingerBounds = LINGER_BOUNDS): void {
  const socket = req.socket;
  if (lingering.has(socket)) return;
  lingering.add(socket);
  let discarded = 0;
  let idle: NodeJS.Timeout | undefined;
  let total: NodeJS.Timeout | undefined;
  const close = () => {
    clearTimeout(idle);
    clearTimeout(total);
    socket.destroy();
  };
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
    socket.once('close', () => {
      clearTimeout(idle);
      clearTimeout(total);
    });
  };
}

/** A declared `Content-Length` over the limit. */
export function declaredTooLarge(req: { headers: IncomingHttpHeaders }): boolean {
  return Number(req.headers['content-length']) > BODY_LIMIT_BYTES;
}

/** The 413, then the connection is closed once the client has stopped sending (`lingerAfterAnswer`). */
export function refuseTooLarge(req: IncomingMessage, res: ServerResponse, bounds: LingerBounds = LINGER_BOUNDS): void {
  lingerAfterAnswer(req, bounds);
  const text = 'Payload Too Large\n';
  res.writeHead(413, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text), Connection: 'close' });
  res.end(text);
}

/**
 * The request body, at most BODY_LIMIT_BYTES; null when it was refused (the 413 is on its way) or the client went
 * away. Buffered whole because it is small: the Remix action then reads it from memory.
 */
export function readLimitedBody(req: IncomingMessage, res: ServerResponse, bounds: LingerBounds = LINGER_BOUNDS): Promise<Buffer | null> {
  if (declaredTooLarge(req)) {
    refuseTooLarge(req, res, bounds);
    return Promise.resolve(null);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (finish: () => void) => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      finish();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_LIMIT_BYTES) chunks.push(chunk);
      else {
        done(() => resolve(null));
        refuseTooLarge(req, res, bounds);
      }
    };
    const onEnd = () => done(() => resolve(Buffer.concat(chunks, size)));
    const onError = (err: Error) => done(() => reject(err));
    const onClose = () => done(() => resolve(null));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}
