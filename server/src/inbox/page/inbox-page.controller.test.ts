import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ConfigModule } from '../../config/config.module';
import type { ServerConfig } from '../../config/config';
import { INBOX_PAGE_DIR, InboxPageController, sandboxPageOf } from './inbox-page.controller';

/**
 * InboxPageController alone, serving the page from `dir` (a build, or nothing), on a free loopback port; the server talks
 * to Telegram at `apiRoot`.
 */
async function pageApp(dir: string, apiRoot = 'https://api.telegram.org'): Promise<{ app: INestApplication; url: string }> {
  const config = { telegram: { apiRoot }, locale: 'ru' } as ServerConfig;
  const moduleRef = await Test.createTestingModule({
    imports: [ConfigModule.register(config)],
    controllers: [InboxPageController],
    providers: [{ provide: INBOX_PAGE_DIR, useValue: dir }],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
  return { app, url: `http://127.0.0.1:${port}` };
}

describe('the inbox page', () => {
  let dir: string;
  let app: INestApplication | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'inbox-page-'));
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 with how to build it when the page was not built', async () => {
    const started = await pageApp(dir);
    app = started.app;
    const res = await fetch(`${started.url}/inbox`);
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('npm run build -w server');
  });

  it('serves the page once it is built, without a restart (npm run dev builds it after the server started)', async () => {
    const started = await pageApp(dir);
    app = started.app;
    expect((await fetch(`${started.url}/inbox`)).status).toBe(503);
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Заявки</title>');
    const page = await fetch(`${started.url}/inbox`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Заявки');
  });

  it('serves the built page with its policy, and its hashed assets', async () => {
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Заявки</title><script src="/inbox/assets/main-ABC.js"></script>');
    writeFileSync(join(dir, 'assets', 'main-ABC.js'), 'console.log(1);');
    const started = await pageApp(dir);
    app = started.app;

    const page = await fetch(`${started.url}/inbox`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/inbox/assets/main-ABC.js');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('cache-control')).toBe('no-cache');

    const asset = await fetch(`${started.url}/inbox/assets/main-ABC.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(await asset.text()).toBe('console.log(1);');
  });

  it('answers 404 for an unknown asset and for a path out of the assets folder', async () => {
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>x</title>');
    const started = await pageApp(dir);
    app = started.app;
    const missing = await fetch(`${started.url}/inbox/assets/nothing.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'not_found' });
    const outside = await fetch(`${started.url}/inbox/assets/..%2Findex.html`);
    expect(outside.status).toBe(404);
  });

  it('names the sandbox page in development (the server talks to a sandbox on the loopback), and nothing against Telegram', async () => {
    writeFileSync(join(dir, 'index.html'), '<!doctype html><html><head><title>Заявки</title></head><body></body></html>');
    const dev = await pageApp(dir, 'http://127.0.0.1:3002');
    app = dev.app;
    expect(await (await fetch(`${dev.url}/inbox`)).text()).toContain(
      '<meta name="inbox-sandbox" content="http://127.0.0.1:3002/" /></head>',
    );
    await app.close();
    const prod = await pageApp(dir);
    app = prod.app;
    expect(await (await fetch(`${prod.url}/inbox`)).text()).not.toContain('inbox-sandbox');
  });
});

describe('sandboxPageOf', () => {
  it('is the root of a loopback Bot API address, and null for any other', () => {
    expect(sandboxPageOf('http://127.0.0.1:3002')).toBe('http://127.0.0.1:3002/');
    expect(sandboxPageOf('http://localhost:8081/bot-api/')).toBe('http://localhost:8081/');
    expect(sandboxPageOf('http://[::1]:3002')).toBe('http://[::1]:3002/');
    expect(sandboxPageOf('https://api.telegram.org')).toBeNull();
    expect(sandboxPageOf('http://sandbox:8081')).toBeNull();
    expect(sandboxPageOf('not a url')).toBeNull();
  });
});
