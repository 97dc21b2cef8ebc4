/**
 * `POST /leads` is answered ahead of Express (issue 15, docs/decisions.md "The hot route"): the same requests as the
 * Nest route matched, the same answers, an unexpected error answered as Nest would, and every other request still
 * reaches Express.
 */
import { join } from 'node:path';
import type { Express } from 'express';
import { SECRET_HEADER } from '@stickers/shared';
import { CapturingLogger, SECRET, lead, postLead, sandboxSuite, type TestServer } from './harness';
import { LeadsService } from '../src/leads/leads.service';

const { tmp, sandbox, start } = sandboxSuite();
let server: TestServer;
let logger: CapturingLogger;
let n = 0;

beforeEach(async () => {
  logger = new CapturingLogger();
  server = await start({ dbPath: join(tmp.dir, `route-${++n}.sqlite`), sandbox, logger, env: { LEADS_HOURLY_LIMIT: '100000' } });
});
afterEach(() => jest.restoreAllMocks());

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
});
