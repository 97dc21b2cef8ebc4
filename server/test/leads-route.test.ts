/**
 * `POST /leads` is answered ahead of Express (issue 15, docs/decisions.md "The hot route"): the same requests as the
 * Nest route matched, the same answers, an unexpected error answered as Nest would, and every other request still
 * reaches Express.
 */
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import type { Express } from 'express';
import { SECRET_HEADER } from '@stickers/shared';
import { AppModule } from '../src/app.module';
import { loadServerConfig } from '../src/config/config';
import { writeJson } from '../src/leads/leads-api.error';
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

/** Spies on Express's own request handling (what Nest's routes go through). */
function expressHandled(): jest.SpyInstance {
  const express = server.app.getHttpAdapter().getInstance() as Express & { handle: (...args: unknown[]) => void };
  return jest.spyOn(express, 'handle');
}

describe('POST /leads ahead of Express', () => {
  it('answers POST /leads without Express, and sends GET /leads and every other route through it', async () => {
    const handle = expressHandled();
    const created = await postLead(server, lead());
    expect(created.status).toBe(201);
    expect(handle).not.toHaveBeenCalled();

    const listed = await fetch(`${server.url}/leads`, { headers: { [SECRET_HEADER]: SECRET } });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { leads: unknown[] }).leads).toHaveLength(1);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect(handle).toHaveBeenCalledTimes(2);
  });

  it('takes what the Nest route took: a trailing slash, any case, a query string', async () => {
    for (const path of ['/leads/', '/LEADS', '/Leads?utm=x']) {
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', [SECRET_HEADER]: SECRET },
        body: JSON.stringify(lead()),
      });
      expect({ path, status: res.status }).toEqual({ path, status: 201 });
    }
    // Not the route: another path under it is Nest's 404, not an answer of POST /leads.
    const other = await fetch(`${server.url}/leads/x`, { method: 'POST', headers: { [SECRET_HEADER]: SECRET }, body: '{}' });
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ statusCode: 404 });
  });

  it('takes the request targets Express read as /leads: the absolute form and one with a fragment', async () => {
    const { host } = new URL(server.url);
    expect(await rawPost(`http://${host}/leads`, JSON.stringify(lead()))).toBe(201);
    expect(await rawPost('/leads#top', JSON.stringify(lead()))).toBe(201);
    expect(await rawPost(`http://${host}/leads/x`, JSON.stringify(lead()))).toBe(404);
  });

  it('answers with the headers Express gave: JSON with charset and length, no ETag, no X-Powered-By, keep-alive', async () => {
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
  });

  it('an unexpected error is logged and answered 500 as Nest answers it; the next request is served', async () => {
    jest.spyOn(server.app.get(LeadsService), 'submit').mockRejectedValueOnce(new Error('boom in the service'));
    const failed = await postLead(server, lead());
    expect(failed).toMatchObject({ status: 500, body: { statusCode: 500, message: 'Internal server error' } });
    expect(logger.lines.some((l) => l.startsWith('error') && l.includes('boom in the service'))).toBe(true);
    expect((await postLead(server, lead())).status).toBe(201);
  });

  it('is mounted by the leads module itself: an app built without configureApp serves POST /leads too', async () => {
    const env = testEnv({ dbPath: join(tmp.dir, `route-bare-${++n}.sqlite`) });
    if (onPostgres) env.DATABASE_URL = await postgresDatabaseFor(env.DATABASE_PATH);
    const moduleRef = await Test.createTestingModule({ imports: [AppModule.register(loadServerConfig(env))] })
      .setLogger(new CapturingLogger())
      .compile();
    const app = moduleRef.createNestApplication({ bodyParser: false, logger: false });
    try {
      await app.listen(0, '127.0.0.1');
      const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      expect((await postLead({ url }, lead())).status).toBe(201);
    } finally {
      await app.close();
    }
  });

  it('an answer already begun is not written again: the connection is ended instead of throwing', () => {
    const res = { headersSent: true, destroy: jest.fn(), writeHead: jest.fn(), end: jest.fn() };
    expect(() => writeJson(res as unknown as ServerResponse, 500, { statusCode: 500 })).not.toThrow();
    expect(res.destroy).toHaveBeenCalledTimes(1);
    expect(res.writeHead).not.toHaveBeenCalled();
  });
});
