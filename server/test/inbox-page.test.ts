/**
 * The inbox page's own logic against the real API: the list's period is of LEADS_TIMEZONE's days, as the charts count
 * them, and a refused change is worded as what it is. The page in a browser: e2e/inbox.e2e.test.mjs.
 */
import { sandboxSuite, submitLead } from './harness';
import { inboxCall } from './support/inbox-client';

// The page's code is typechecked with DOM types by its own tsconfig (inbox-page/tsconfig.json); the server's program
// has none, so it is loaded here untyped, the few functions it tests named with their shapes.
/* eslint-disable @typescript-eslint/no-require-imports */
const { ApiFailure, filterQuery } = require('../inbox-page/api') as {
  ApiFailure: new (status: number, body: Record<string, unknown> | null) => Error;
  filterQuery: (filters: Record<'q' | 'status' | 'source' | 'since' | 'until', string>) => URLSearchParams;
};
const { failureText } = require('../inbox-page/app') as { failureText: (app: object, err: unknown, change?: boolean) => string };
const { textsFor } = require('../inbox-page/catalogue') as { textsFor: (locale: string) => object };
/* eslint-enable @typescript-eslint/no-require-imports */

const { sandbox, boot } = sandboxSuite();

describe('the list’s period', () => {
  it('selects the days of LEADS_TIMEZONE, the days the charts count a lead on', async () => {
    const server = await boot({ env: { LEADS_TIMEZONE: 'Europe/Moscow' } });
    server.clock.t = Date.UTC(2026, 11, 1, 22, 30); // 2 December, 01:30 in Moscow
    const night = await submitLead(server);
    server.clock.t = Date.UTC(2026, 11, 2, 10, 0);
    const charts = (await inboxCall(server, sandbox, 'charts')).body;
    expect(charts.per_day[0].counts[charts.days.indexOf('2026-12-02')]).toBe(1);
    const day = (date: string) => filterQuery({ q: '', status: '', source: '', since: date, until: date }).toString();
    const numbers = async (date: string) =>
      ((await inboxCall(server, sandbox, `leads?${day(date)}`)).body.leads as { lead_number: number }[]).map((l) => l.lead_number);
    expect({ dec1: await numbers('2026-12-01'), dec2: await numbers('2026-12-02') }).toEqual({ dec1: [], dec2: [night] });
  });
});

describe('a refused change, in the manager’s words', () => {
  const app = { t: textsFor('ru') };
  const says = (status: number, body: Record<string, unknown> | null, change = true) =>
    failureText(app, new ApiFailure(status, body), change);

  it('403 on a change is the managers’ list (LEADS_MANAGER_IDS), on opening the page the group’s membership', () => {
    expect(says(403, { error: 'forbidden' })).toBe('Менять статус и писать клиенту могут только менеджеры (LEADS_MANAGER_IDS).');
    expect(says(403, { error: 'forbidden' }, false)).toBe('У вас нет доступа к заявкам: страница открыта не участником группы заявок.');
  });

  it('409 anonymised says the lead was erased, 429 to wait: neither blames the connection', () => {
    expect(says(409, { error: 'anonymised' })).toBe('Персональные данные этой заявки удалены: изменить её нельзя.');
    expect(says(429, { error: 'rate_limited' })).toBe('Слишком много запросов: повторите через минуту.');
  });
});
