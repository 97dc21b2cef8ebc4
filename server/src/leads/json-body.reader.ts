import type { IncomingMessage } from 'node:http';
import { API_ERRORS, MAX_BODY_BYTES } from '@stickers/shared';
import { LeadsApiError } from './leads-api.error';
import { lingerAfterAnswer } from './linger';

/** Stateless between calls (no `stream` option), so one serves every request. */
const utf8 = new TextDecoder('utf-8', { fatal: true });
const invalidBody = () => new LeadsApiError(422, { error: API_ERRORS.invalidBody });

/** The 413 ends the connection; the rest of the upload is read and discarded first, so the client reads its 413. */
function tooLarge(req: IncomingMessage): LeadsApiError {
  lingerAfterAnswer(req);
  return new LeadsApiError(413, { error: API_ERRORS.payloadTooLarge }, { Connection: 'close' });
}

/** The client went away before its body was read: nobody is left to answer, and it is not a server error. */
export class UploadAbortedError extends Error {
  constructor(readonly received: number) {
    super('upload aborted by the client');
  }
}

/**
 * Reads `POST /leads` body as a JSON object, after the secret guard (so a wrong secret with a large body is a 401).
 * docs/requirements.md §1.1 step 4: over the limit → 413, not a JSON object → 422. A declared Content-Length over the limit is
 * refused before a byte is read; a chunked body is refused as soon as it passes the limit, and the rest of the
 * upload is never buffered (read and discarded for a bounded time, then the connection is closed: linger.ts).
 */
export async function readJsonObject(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Record<string, unknown>> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(req);
  // The connection closed while the guard ran: no events will come.
  if (req.destroyed) throw new UploadAbortedError(0);

  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        reject(tooLarge(req));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve();
    };
    // Every failure of the request stream here is the client's connection going away (reset, or closed early).
    const onAbort = () => {
      cleanup();
      reject(new UploadAbortedError(size));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onAbort);
  });

  let text: string;
  try {
    text = utf8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
  } catch {
    throw invalidBody();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidBody();
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalidBody();
  return parsed as Record<string, unknown>;
}
