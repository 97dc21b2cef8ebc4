// The landing's HTTP server: Express with the Remix handler, so the action knows the visitor's socket address.
// Development (default): Vite in middleware mode, with hot reload. Production (NODE_ENV=production): the build.
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequestHandler, writeReadableStreamToWritable } from '@remix-run/node';
import express from 'express';

const production = process.env.NODE_ENV === 'production';
// Without a build (after `npm run dev`, which builds none): one line saying to build, as the server's start says it.
if (production && !existsSync(new URL('./build/server/index.js', import.meta.url))) {
  console.error('the landing is not built (no landing/build/server/index.js): run npm run build first');
  process.exit(2);
}
// The HTTP server first: in development Vite's hot reload shares it (its port), rather than taking a port of its own,
// which a second working copy's landing would find in use.
const server = createServer();
const vite = production
  ? undefined
  : await import('vite').then((v) =>
      v.createServer({ root: new URL('.', import.meta.url).pathname, server: { middlewareMode: true, hmr: { server } } }),
    );

// The build's entry checks the environment as it loads: a bad value stops the start here, with one line per problem.
// It is loaded now in both modes (in development through Vite, which reloads it for requests after an edit), so that
// the configuration is checked and the spool's replay runs from the start, not from the first visitor on.
let build;
let entry;
try {
  build = vite ? () => vite.ssrLoadModule('virtual:remix/server-build') : await import('./build/server/index.js');
  entry = (vite ? await build() : build).entry.module;
} catch (err) {
  if (Array.isArray(err?.problems)) {
    for (const problem of err.problems) console.error(`config error: ${problem}`);
    process.exit(1);
  }
  throw err;
}

// The spool (requests the server's database did not get) is replayed by this process, which holds its lock: a second
// landing on the same LANDING_SPOOL_DIR does not start.
const spool = await entry.startSpoolReplay();
if (!spool.ok) {
  console.error(`spool error: ${spool.problem}`);
  process.exit(1);
}

// The body limit (64 KiB; a larger declared Content-Length is refused before a byte is read, a chunked body as soon
// as it passes the limit) and its 413 with a lingering close live in the build (app/body-limit.server.ts).
const { declaredTooLarge, readLimitedBody, refuseTooLarge } = entry;

function remixHeaders(nodeHeaders) {
  const headers = new Headers();
  for (const [key, values] of Object.entries(nodeHeaders)) {
    if (Array.isArray(values)) for (const value of values) headers.append(key, value);
    else if (values) headers.set(key, values);
  }
  return headers;
}

// What @remix-run/express does, with the body read under the limit above instead of streamed without one.
const handleRemix = createRequestHandler(build, process.env.NODE_ENV);
async function remix(req, res, next) {
  try {
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const body = hasBody ? await readLimitedBody(req, res) : undefined;
    if (body === null) return;
    const controller = new AbortController();
    // Abort loaders and actions when the response can no longer be written (`close` before `finish`).
    res.on('close', () => res.writableFinished || controller.abort());
    const url = new URL(`${req.protocol}://${req.get('host') ?? 'localhost'}${req.originalUrl}`);
    const request = new Request(url.href, { method: req.method, headers: remixHeaders(req.headers), body, signal: controller.signal });
    const response = await handleRemix(request, { clientAddress: req.socket.remoteAddress });
    res.statusMessage = response.statusText;
    res.status(response.status);
    for (const [key, value] of response.headers.entries()) res.append(key, value);
    if (/text\/event-stream/i.test(response.headers.get('Content-Type') ?? '')) res.flushHeaders();
    if (response.body) await writeReadableStreamToWritable(response.body, res);
    else res.end();
  } catch (err) {
    next(err);
  }
}

const app = express();
app.disable('x-powered-by');
if (vite) app.use(vite.middlewares);
else {
  app.use('/assets', express.static(new URL('./build/client/assets', import.meta.url).pathname, { immutable: true, maxAge: '1y' }));
  app.use(express.static(new URL('./build/client', import.meta.url).pathname, { maxAge: '1h' }));
}
app.get('/health', (_req, res) => res.json({ status: 'ok' }));
app.get('/metrics', async (_req, res, next) => {
  try {
    res.type('text/plain; version=0.0.4; charset=utf-8').send(await entry.spoolMetrics());
  } catch (err) {
    next(err);
  }
});
app.all('*', remix);

const port = Number(process.env.PORT ?? 3001);
const host = process.env.HOST ?? '0.0.0.0';
server.on('request', app);
// A port in use or an address not of this machine: one line naming the variable, as the server says it.
server.on('error', (err) => {
  const problem =
    ['listen', 'getaddrinfo'].includes(err.syscall) &&
    {
      EADDRINUSE: `PORT=${port}: port ${port} is already in use (EADDRINUSE): stop the other process, or choose another PORT`,
      EACCES: `PORT=${port}: this process may not listen on port ${port} (EACCES; ports below 1024 need privileges): choose another PORT`,
      EADDRNOTAVAIL: `HOST=${host}: not an address of this machine (EADDRNOTAVAIL): use one of its addresses, or 0.0.0.0`,
      ENOTFOUND: `HOST=${host}: the host name does not resolve (ENOTFOUND): use an address of this machine, or 0.0.0.0`,
    }[err.code];
  if (!problem) throw err;
  console.error(`config error: ${problem}`);
  process.exit(1);
});
// `Expect: 100-continue` (curl sends it for large bodies): refuse an oversized body before the client sends it.
server.on('checkContinue', (req, res) => {
  if (declaredTooLarge(req)) return refuseTooLarge(req, res);
  res.writeContinue();
  app(req, res);
});
server.listen(port, host, () => console.log(`landing on http://localhost:${port} (${production ? 'production' : 'development'})`));
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    // A stop we were asked for is a clean exit, also when Vite's own SIGTERM handler (development) ends the process.
    process.exitCode = 0;
    // The replay stops at once (an in-flight one is abandoned, its entry stays); the lock goes at the latest on exit.
    const stopped = spool.stop().catch((err) => console.error(`[spool] stop: ${err?.message ?? err}`));
    server.close(() => stopped.then(() => process.exit(0)));
    setTimeout(() => process.exit(0), 5000).unref();
  });
}
