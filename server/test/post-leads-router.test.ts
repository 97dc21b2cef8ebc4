/**
 * `POST /leads` is a Nest route (docs/decisions.md, "`POST /leads` is a Nest route"): what the app adds for every
 * route (an `app.use` middleware, a global interceptor) runs for it too; Express's router takes the paths it takes
 * for every route; the answers keep their headers; an unexpected error is answered as Nest answers it.
 */
import { connect } from 'node:net';
import { join } from 'node:path';
import { type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { NextFunction, Request, Response } from 'express';
import { tap } from 'rxjs';
import { SECRET_HEADER } from '@stickers/shared';
import { AppModule } from '../src/app.module';
import { configureApp } from '../src/app';
import { loadServerConfig } from '../src/config/config';
import { LeadsService } from '../src/leads/leads.service';
import { CapturingLogger, SECRET, lead, postLead, sandboxSuite, testEnv, type TestServer } from './harness';
import { onPostgres, postgresDatabaseFor } from './support/test-database';

const { tmp, sandbox, start } = sandboxSuite();
let server: TestServer;
let logger: CapturingLogger;
let n = 0;

beforeEach(async () => {
  logger = new CapturingLogger();
  server = await start({ dbPath: join(tmp.dir, `route-${++n}.sqlite`), sandbox, logger, env: { LEADS_HOURLY_LIMIT: '100000' } });
});
afterEach(() => jest.restoreAllMocks());

/** Sends one raw HTTP/1.1 request with `target` as written (fetch would normalise it) and resolves with the status. */
function rawPost(target: string, body: string): Promise<number> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let head = '';
    socket.on('data', (chunk) => {
      head += chunk.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (status) {
        socket.destroy();
        resolve(Number(status[1]));
      }
    });
    socket.on('error', reject);
    socket.write(
      [
        `POST ${target} HTTP/1.1`,
        `Host: ${hostname}:${port}`,
        `${SECRET_HEADER}: ${SECRET}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        '',
        body,
      ].join('\r\n'),
    );
  });
}

describe('POST /leads on Nest’s router', () => {
  it('runs an app-wide middleware (app.use) and a global interceptor, as for every other route', async () => {
    const env = testEnv({ dbPath: join(tmp.dir, `route-app-${++n}.sqlite`) });
    if (onPostgres) env.DATABASE_URL = await postgresDatabaseFor(env.DATABASE_PATH);
    const moduleRef = await Test.createTestingModule({ imports: [AppModule.register(loadServerConfig(env))] })
      .setLogger(new CapturingLogger())
      .compile();
    const app = moduleRef.createNestApplication({ bodyParser: false, logger: false });
    configureApp(app);
    const seen: string[] = [];
    app.use((req: Request, res: Response, next: NextFunction) => {
      seen.push(`middleware ${req.method} ${req.url}`);
      res.setHeader('X-Middleware', 'ran');
      next();
    });
    const interceptor: NestInterceptor = {
      intercept(context: ExecutionContext, next: CallHandler) {
        const req = context.switchToHttp().getRequest<Request>();
        seen.push(`interceptor ${req.method} ${context.getClass().name}.${context.getHandler().name}`);
        return next.handle().pipe(tap({ error: (err: unknown) => seen.push(`interceptor saw ${(err as Error).message}`) }));
      },
    };
    app.useGlobalInterceptors(interceptor);
    try {
      await app.listen(0, '127.0.0.1');
      const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      const created = await fetch(`${url}/leads`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', [SECRET_HEADER]: SECRET },
        body: JSON.stringify(lead()),
      });
      expect(created.status).toBe(201);
      expect(created.headers.get('x-middleware')).toBe('ran');
      expect(seen).toEqual(['middleware POST /leads', 'interceptor POST LeadsController.submit']);
      // A refusal of the service goes through the interceptor too (as an error), then the route's filter.
      seen.length = 0;
      const invalid = await postLead({ url }, { ...lead(), phone: 'nope' });
      expect(invalid.status).toBe(422);
      expect(seen).toEqual(['middleware POST /leads', 'interceptor POST LeadsController.submit', 'interceptor saw 422 invalid']);
    } finally {
      await app.close();
    }
  });

  it('takes what Express’s router takes: a trailing slash, any case, a query string', async () => {
    for (const path of ['/leads/', '/LEADS', '/Leads?utm=x']) {
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', [SECRET_HEADER]: SECRET },
        body: JSON.stringify(lead()),
      });
      expect({ path, status: res.status }).toEqual({ path, status: 201 });
    }
    // Not the route: another path under it is the documented 404, not an answer of POST /leads.
    const other = await fetch(`${server.url}/leads/x`, { method: 'POST', headers: { [SECRET_HEADER]: SECRET }, body: '{}' });
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ error: 'not_found' });
  });

  it('answers a path no route serves with the documented 404 body, whatever the method', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['POST', '/leads/x/y'],
      ['DELETE', '/leads'],
      ['GET', '/inbox/api/nothing'],
    ]) {
      const res = await fetch(`${server.url}${path}`, { method });
      expect({ method, path, status: res.status, body: await res.json() }).toEqual({
        method,
        path,
        status: 404,
        body: { error: 'not_found' },
      });
    }
  });

  it('takes the request targets Express reads as /leads: the absolute form and one with a fragment', async () => {
    const { host } = new URL(server.url);
    expect(await rawPost(`http://${host}/leads`, JSON.stringify(lead()))).toBe(201);
    expect(await rawPost('/leads#top', JSON.stringify(lead()))).toBe(201);
    expect(await rawPost(`http://${host}/leads/x`, JSON.stringify(lead()))).toBe(404);
  });

  it('answers JSON with charset and length, no ETag, no X-Powered-By, keep-alive; a refusal JSON without ETag too', async () => {
    const res = await fetch(`${server.url}/leads`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', [SECRET_HEADER]: SECRET },
      body: JSON.stringify(lead()),
    });
    const text = await res.text();
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(res.headers.get('etag')).toBeNull();
    expect(res.headers.get('x-powered-by')).toBeNull();
    expect(res.headers.get('connection')).toBe('keep-alive');

    const refused = await fetch(`${server.url}/leads`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', [SECRET_HEADER]: SECRET },
      body: '[1]',
    });
    expect(refused.status).toBe(422);
    expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(refused.headers.get('etag')).toBeNull();
    expect(await refused.json()).toEqual({ error: 'invalid_body' });
  });

  it('an unexpected error is logged and answered 500 as Nest answers it; the next request is served', async () => {
    jest.spyOn(server.app.get(LeadsService), 'submit').mockRejectedValueOnce(new Error('boom in the service'));
    const errors = jest.spyOn(logger, 'error');
    const failed = await postLead(server, lead());
    expect(failed).toMatchObject({ status: 500, body: { statusCode: 500, message: 'Internal server error' } });
    // Nest's handler logs the error itself (the JSON logger writes its message).
    expect(errors.mock.calls.some(([m]) => m instanceof Error && m.message === 'boom in the service')).toBe(true);
    expect((await postLead(server, lead())).status).toBe(201);
  });
});
