import { PassThrough } from 'node:stream';
import type { EntryContext } from '@remix-run/node';
import { createReadableStreamFromReadable } from '@remix-run/node';
import { RemixServer } from '@remix-run/react';
import { isbot } from 'isbot';
import { renderToPipeableStream } from 'react-dom/server';
import { getEnv } from './env.server';

// Checked when the server build loads, i.e. at start in production: bad configuration never waits for a visitor.
const env = getEnv();
if (env.signingKeyIsRandom)
  console.warn('[landing] neither LEADS_SECRET nor TELEGRAM_BOT_TOKEN is set: form timestamps are signed with a per-process key');

const ABORT_DELAY = 5000;

export default function handleRequest(request: Request, responseStatusCode: number, responseHeaders: Headers, remixContext: EntryContext) {
  const ready = isbot(request.headers.get('user-agent') ?? '') ? 'onAllReady' : 'onShellReady';
  return new Promise((resolve, reject) => {
    let shellRendered = false;
    const { pipe, abort } = renderToPipeableStream(<RemixServer context={remixContext} url={request.url} abortDelay={ABORT_DELAY} />, {
      [ready]() {
        shellRendered = true;
        const body = new PassThrough();
        responseHeaders.set('Content-Type', 'text/html; charset=utf-8');
        resolve(new Response(createReadableStreamFromReadable(body), { headers: responseHeaders, status: responseStatusCode }));
        pipe(body);
      },
      onShellError(error: unknown) {
        reject(error instanceof Error ? error : new Error(String(error)));
      },
      onError(error: unknown) {
        responseStatusCode = 500;
        if (shellRendered) console.error(error);
      },
    });
    setTimeout(abort, ABORT_DELAY);
  });
}

// For server.mjs, which loads this build at start in production and in development: the spool's replay and metrics,
// and the request body limit with its 413.
export { spoolMetrics, startSpoolReplay } from './leads/spool-replay.server';
export { declaredTooLarge, readLimitedBody, refuseTooLarge } from './body-limit.server';
