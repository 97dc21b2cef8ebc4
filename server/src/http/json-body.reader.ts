import type { IncomingMessage } from 'node:http';
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { API_ERRORS, lingerAfterAnswer, LINGER_BOUNDS, MAX_BODY_BYTES, type LingerBounds } from '@stickers/shared';
import { ApiError, UploadAbortedError } from './api-error';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const invalidBody = () => new ApiError(422, { error: API_ERRORS.invalidBody });

/** The 413 ends the connection; the rest of the upload is read and discarded first, so the client reads its 413. */
function tooLarge(req: IncomingMessage, bounds: LingerBounds): ApiError {
  lingerAfterAnswer(req, bounds);
  return new ApiError(413, { error: API_ERRORS.payloadTooLarge }, { Connection: 'close' });
}

/** The body as a JSON object, after the guards (§1.1 step 4): over `limit` 413, else not an object (or nested over 32 deep) 422; the client gone: UploadAbortedError. */
export async function readJsonObject(
  req: IncomingMessage,
  { limit = MAX_BODY_BYTES, linger: bounds = LINGER_BOUNDS }: { limit?: number; linger?: LingerBounds } = {},
): Promise<Record<string, unknown>> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(req, bounds);
  // The connection closed while the guard ran: no events will come.
  if (req.destroyed) throw new UploadAbortedError();

  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        reject(tooLarge(req, bounds));
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
      reject(new UploadAbortedError());
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

  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
  } catch {
    throw invalidBody();
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || !nestedWithin(parsed, MAX_DEPTH)) throw invalidBody();
  return parsed as Record<string, unknown>;
}

/** The API's bodies nest 3 deep, a Telegram update about 8; the validation's copy (class-transformer) would recurse through any depth. */
const MAX_DEPTH = 32;

/** Whether no object or array in `value` lies deeper than `max` levels below it (read level by level, no recursion). */
function nestedWithin(value: unknown, max: number): boolean {
  let level: unknown[] = [value];
  for (let depth = 0; level.length > 0; depth += 1) {
    if (depth > max) return false;
    level = level.flatMap((v) => (v !== null && typeof v === 'object' ? (Object.values(v) as unknown[]) : []));
  }
  return true;
}

/** readJsonObject as a handler parameter: Nest resolves it after the guards, so the body stays unread until then. */
export const JsonBody = createParamDecorator((_: unknown, ctx: ExecutionContext) =>
  readJsonObject(ctx.switchToHttp().getRequest<IncomingMessage>()),
);
