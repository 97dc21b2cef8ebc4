/**
 * The largest request body the landing reads, and the 413 for a larger one, for `server.mjs` (which takes them from
 * the server build, like the spool's replay). The 413 closes the connection with shared's lingering close, as the
 * leads server's does, so a client still sending reads its 413 rather than a connection reset.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { lingerAfterAnswer, LINGER_BOUNDS, type LingerBounds } from '@stickers/shared';

/**
 * The form is a few KiB at most. A larger declared Content-Length is refused before a byte is read; a chunked body
 * is cut off as soon as it passes the limit.
 */
export const BODY_LIMIT_BYTES = 64 * 1024;

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
