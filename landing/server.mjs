// The landing's HTTP server: Express with the Remix handler, so the action knows the visitor's socket address.
// Development (default): Vite in middleware mode, with hot reload. Production (NODE_ENV=production): the build.
import { createRequestHandler } from '@remix-run/express';
import express from 'express';

const production = process.env.NODE_ENV === 'production';
const vite = production
  ? undefined
  : await import('vite').then((v) => v.createServer({ root: new URL('.', import.meta.url).pathname, server: { middlewareMode: true } }));

// In production the build's entry checks the environment as it loads: a bad value stops the start here,
// with one line per problem.
let build;
try {
  build = vite ? () => vite.ssrLoadModule('virtual:remix/server-build') : await import('./build/server/index.js');
} catch (err) {
  if (Array.isArray(err?.problems)) {
    for (const problem of err.problems) console.error(`config error: ${problem}`);
    process.exit(1);
  }
  throw err;
}

const app = express();
app.disable('x-powered-by');
if (vite) app.use(vite.middlewares);
else {
  app.use('/assets', express.static(new URL('./build/client/assets', import.meta.url).pathname, { immutable: true, maxAge: '1y' }));
  app.use(express.static(new URL('./build/client', import.meta.url).pathname, { maxAge: '1h' }));
}
app.get('/health', (_req, res) => res.json({ status: 'ok' }));
app.all('*', createRequestHandler({ build, getLoadContext: (req) => ({ clientAddress: req.socket.remoteAddress }) }));

const port = Number(process.env.PORT ?? 3001);
const host = process.env.HOST ?? '0.0.0.0';
const server = app.listen(port, host, () => console.log(`landing on http://localhost:${port} (${production ? 'production' : 'development'})`));
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 5000).unref();
  });
}
