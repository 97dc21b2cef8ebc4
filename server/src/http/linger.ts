import type { IncomingMessage, ServerResponse } from 'node:http';
import { lingerAfterAnswer } from '@stickers/shared';

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
