import type { IncomingMessage } from 'node:http';
import { API_ERRORS, MAX_BODY_BYTES } from '@stickers/shared';
import { LeadsApiError } from './leads-api.error';

const tooLarge = () => new LeadsApiError(413, { error: API_ERRORS.payloadTooLarge }, { Connection: 'close' });
const invalidBody = () => new LeadsApiError(422, { error: API_ERRORS.invalidBody });

/**
 * Reads `POST /leads` body as a JSON object, after the secret guard (so a wrong secret with a large body is a 401).
 * Seed: "Body larger than 16 KB → 413. Not a JSON object → 422". A declared Content-Length over the limit is
 * refused before a byte is read; a chunked body is refused as soon as it passes the limit, and the rest of the
 * upload is never buffered (the connection is closed after the answer).
 */
export async function readJsonObject(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Record<string, unknown>> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge();

  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve();
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });

  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks, size));
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
