/**
 * The app's own pages through the real Remix handler, its modules built by Vite with the Remix plugin (as `npm run dev`
 * serves them), started before a file's tests and closed after: the HTML a browser without JavaScript gets, for the
 * page, a post of its form, or any other address. Not a test file: vite.config.ts collects only `*.test.ts`.
 */
import { createRequestHandler, type ServerBuild } from '@remix-run/node';
import { createServer, type ViteDevServer } from 'vite';
import { afterAll, beforeAll } from 'vitest';
import { setEnv } from './support';

export function appPages() {
  let vite: ViteDevServer;
  let handle: (request: Request, context: { clientAddress?: string }) => Promise<Response>;
  let visitor = 0;

  beforeAll(async () => {
    // vite.config.ts leaves the Remix plugin out under Vitest; this server is the app's own, so it is built with it.
    const underVitest = process.env.VITEST;
    delete process.env.VITEST;
    try {
      vite = await createServer({
        root: new URL('..', import.meta.url).pathname,
        server: { middlewareMode: true, hmr: false },
        logLevel: 'silent',
      });
    } finally {
      process.env.VITEST = underVitest;
    }
    const build = () => vite.ssrLoadModule('virtual:remix/server-build') as Promise<ServerBuild>;
    handle = createRequestHandler(build, 'development');
  }, 60_000);
  afterAll(async () => {
    await vite?.close();
  });

  const app = {
    /** Clears `keys`, sets `env`, and has the handler's modules (Vite's, not the test file's) read it again. */
    async env(env: Record<string, string | undefined>, keys: readonly string[]): Promise<void> {
      setEnv(env, keys);
      ((await vite.ssrLoadModule('/app/env.server.ts')) as { resetEnv(): void }).resetEnv();
    },
    /** The answer to a GET of `path` (`/`, `/no-such-page`), with the request's `headers`. */
    get: (path: string, headers: Record<string, string> = {}) => handle(new Request(`http://landing.test${path}`, { headers }), {}),
    /**
     * The page after its form was posted with `values` (with the page's own request id and token; the form is sent as
     * soon as MIN_FILL_MS allows, so set it to 0), from an address of its own, as a browser without JavaScript gets it.
     */
    async post(values: Record<string, string>): Promise<{ status: number; html: string }> {
      const page = await (await app.get('/')).text();
      const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(page)![1];
      const body = new URLSearchParams({ ...values, company: '', requestId: hidden('requestId'), startedAt: hidden('startedAt') });
      visitor += 1;
      const res = await handle(
        new Request('http://landing.test/?index', {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body,
        }),
        { clientAddress: `198.51.100.${visitor}` },
      );
      return { status: res.status, html: await res.text() };
    },
  };
  return app;
}

/** The visible text of a page: markup, scripts and the loader data left out, the characters React escapes read back. */
export const visibleText = (html: string) =>
  html
    .replace(/<script[\s\S]*?<\/script>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .replace(/&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The page's form, from its opening tag to its closing one. */
export const formOf = (html: string) => html.slice(html.indexOf('<form'), html.indexOf('</form>') + '</form>'.length);
