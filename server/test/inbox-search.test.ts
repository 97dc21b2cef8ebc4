/**
 * The inbox's search and the query text of the routes that read leads, against the real app on both databases: a
 * control character in any text parameter is a 422 `invalid_query` before any query (PostgreSQL refuses a NUL in any
 * text, SQLite would read the rest as a pattern), never a 500 and never a CSV cut after its 200.
 */
import { join } from 'node:path';
import { NO_RATE_LIMITS, sandboxSuite, submitLead } from './harness';
import { inboxCall, secretGet } from './support/inbox-client';

const { tmp, sandbox, start } = sandboxSuite();
let n = 0;
const startInbox = (env: Record<string, string> = {}) =>
  start({ dbPath: join(tmp.dir, `inbox-search-${(n += 1)}.sqlite`), env: { ...NO_RATE_LIMITS, ...env } });

const CONTROL_VALUES = ['a\u0000b', '\u0000', '79\u0000', 'anna\u0001', '\u007f', 'x\u0085'];

describe('control characters in the query', () => {
  it('answers 422 invalid_query for a control character in any text parameter of the inbox, the list, the CSV and the charts', async () => {
    const server = await startInbox();
    await submitLead(server, { name: 'Анна Ким', telegram: '@anna_nul', phone: '+79991112233' });

    const inboxRoutes: Record<string, string[]> = {
      leads: ['q', 'source', 'status', 'since', 'until', 'cursor', 'limit'],
      'leads.csv': ['q', 'source', 'status', 'since', 'until'],
      charts: ['source'],
    };
    for (const [route, params] of Object.entries(inboxRoutes)) {
      for (const param of params) {
        for (const value of CONTROL_VALUES) {
          const res = await inboxCall(server, sandbox, `${route}?${param}=${encodeURIComponent(value)}`);
          expect([route, param, value, res.status, res.body?.error, Object.keys(res.body?.errors ?? {})]).toEqual([
            route,
            param,
            value,
            422,
            'invalid_query',
            [param],
          ]);
        }
      }
    }

    const secretRoutes: Record<string, string[]> = {
      '/leads': ['status', 'since', 'until', 'cursor', 'limit'],
      '/leads/export.csv': ['status', 'since', 'until'],
    };
    for (const [route, params] of Object.entries(secretRoutes)) {
      for (const param of params) {
        for (const value of CONTROL_VALUES) {
          const res = await secretGet(server, `${route}?${param}=${encodeURIComponent(value)}`);
          expect([route, param, value, res.status, res.body?.error, Object.keys(res.body?.errors ?? {})]).toEqual([
            route,
            param,
            value,
            422,
            'invalid_query',
            [param],
          ]);
        }
      }
    }

    // The same searches without the control character are answered.
    expect((await inboxCall(server, sandbox, `leads?q=${encodeURIComponent('анна')}`)).body.leads).toHaveLength(1);
    const csv = await inboxCall(server, sandbox, 'leads.csv?q=anna_nul');
    expect([csv.status, csv.text]).toEqual([200, expect.stringContaining('@anna_nul')]);
  });
});
