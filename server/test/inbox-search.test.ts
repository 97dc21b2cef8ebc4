/**
 * The inbox's search and the query text of the routes that read leads, against the real app on both databases: a
 * control character in any text parameter is a 422 `invalid_query` before any query (PostgreSQL refuses a NUL in any
 * text, SQLite would read the rest as a pattern), never a 500 and never a CSV cut after its 200. With personal values
 * hidden (LEADS_CARD_PII=0) the search, the list's and the CSV's, matches only what the viewer sees.
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

describe('with personal values hidden (LEADS_CARD_PII=0)', () => {
  it('matches only the lead number and the source, in the list and in the CSV; never a hidden name, username or phone', async () => {
    const server = await startInbox({ LEADS_CARD_PII: '0' });
    const hidden = await submitLead(server, {
      name: 'Скрытая Анна',
      telegram: '@hidden_anna',
      phone: '+79991234567',
      source: { landing: 'Wedding', utm_campaign: 'secret_campaign' },
    });
    const other = await submitLead(server, { name: 'Другой', telegram: '@other_lead', phone: '+79997654321' });

    const listed = async (q: string) =>
      ((await inboxCall(server, sandbox, `leads?q=${encodeURIComponent(q)}`)).body.leads as any[]).map((l) => l.lead_number);
    const exported = async (q: string) =>
      (await inboxCall(server, sandbox, `leads.csv?q=${encodeURIComponent(q)}`)).text
        .split('\r\n')
        .slice(1)
        .filter((row) => row !== '')
        .map((row) => Number(row.split(',')[0]));

    for (const q of ['скрытая', 'АННА', 'hidden', '@hidden_anna', 'anna', '79991234567', '7999123', '+7 999 123', '4567', 'secret']) {
      expect([q, await listed(q)]).toEqual([q, []]);
      expect([q, await exported(q)]).toEqual([q, []]);
    }
    // What the viewer sees: the lead number and the landing's source.
    for (const [q, expected] of [
      [`#${hidden}`, [hidden]],
      [`№${other}`, [other]],
      [String(hidden), [hidden]],
      ['wedd', [hidden]],
      ['WEDDING', [hidden]],
    ] as const) {
      expect([q, await listed(q)]).toEqual([q, expected]);
      expect([q, await exported(q)]).toEqual([q, expected]);
    }
  });

  it('with personal values shown, the same searches find the lead by its name, username and phone', async () => {
    const server = await startInbox();
    const shown = await submitLead(server, { name: 'Скрытая Анна', telegram: '@hidden_anna', phone: '+79991234567' });
    // A whole number as the form takes it in LEADS_PHONE_REGION (RU): its national form too.
    for (const q of ['скрытая', '@hidden_anna', '7999123', '+7 999 123', '8 999 123-45-67', '89991234567', '8 (999) 123-45-67']) {
      const res = await inboxCall(server, sandbox, `leads?q=${encodeURIComponent(q)}`);
      expect([q, res.body.leads.map((l: any) => l.lead_number)]).toEqual([q, [shown]]);
    }
  });
});
