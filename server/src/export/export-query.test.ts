import { ApiValidationPipe } from '../http/validation';
import {
  cursorKey,
  encodeCursor,
  InboxChartsQuery,
  InboxFilterQuery,
  InboxPageQuery,
  LeadsFilterQuery,
  LeadsPageQuery,
  QUERY_RULES,
} from './export-query';

const KEY = cursorKey('a-secret', 'a-salt');
class Refused extends Error {
  constructor(readonly problems: Record<string, string>) {
    super('refused');
  }
}

/** A query through ApiValidationPipe, as its route's pipe runs it: the checked instance, or every problem by name. */
async function check<T extends object>(type: new () => T, plain: Record<string, unknown>, context: object | null = { cursorKey: KEY }) {
  const pipe = new ApiValidationPipe((problems) => new Refused(problems), context ?? undefined);
  try {
    return { ok: true as const, value: (await pipe.transform(plain, { type: 'query', metatype: type })) as T };
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    return { ok: false as const, problems: err.problems };
  }
}
const problems = async <T extends object>(type: new () => T, plain: Record<string, unknown>) => {
  const checked = await check(type, plain);
  return checked.ok ? null : JSON.stringify(checked.problems);
};

describe('the queries of the routes that read leads, as DTOs', () => {
  it('names every bad parameter in the order of the documented 422, a rule between two parameters last', async () => {
    const bad = { status: 'open', until: '3', since: '5', limit: '0', cursor: 'nonsense', q: 'a\u0000', source: '-x' };
    expect(await problems(LeadsPageQuery, bad)).toBe(
      JSON.stringify({ limit: QUERY_RULES.limit, cursor: QUERY_RULES.cursor, status: QUERY_RULES.status, until: QUERY_RULES.afterSince }),
    );
    expect(await problems(InboxPageQuery, bad)).toBe(
      JSON.stringify({
        limit: QUERY_RULES.limit,
        cursor: QUERY_RULES.cursor,
        source: QUERY_RULES.source,
        q: QUERY_RULES.q,
        status: QUERY_RULES.status,
        until: QUERY_RULES.afterSince,
      }),
    );
    expect(await problems(InboxFilterQuery, { ...bad, since: '2026-02-30' })).toBe(
      JSON.stringify({ source: QUERY_RULES.source, q: QUERY_RULES.q, since: QUERY_RULES.time, status: QUERY_RULES.status }),
    );
    expect(await problems(InboxChartsQuery, bad)).toBe(JSON.stringify({ source: QUERY_RULES.source }));
  });

  it('takes an empty parameter as absent, reads limit as a number and drops what no rule names', async () => {
    const checked = await check(LeadsPageQuery, { limit: '', cursor: '', since: '', until: '', status: '', q: 'x', extra: '1' });
    expect(checked).toEqual({ ok: true, value: expect.any(LeadsPageQuery) });
    expect(checked.ok && { ...checked.value }).toEqual({
      limit: undefined,
      cursor: undefined,
      since: undefined,
      until: undefined,
      status: undefined,
    });
    const page = await check(LeadsPageQuery, { limit: '007', cursor: encodeCursor(9, KEY), status: 'won' });
    expect(page.ok && [page.value.limit, page.value.cursor, page.value.status]).toEqual([7, encodeCursor(9, KEY), 'won']);
    const times = await check(LeadsFilterQuery, { since: '2026-12-01', until: '1796083200001', updated_since: '2026-12-01T10:00Z' });
    expect(times.ok && [times.value.since, times.value.until, times.value.updated_since]).toEqual([
      Date.UTC(2026, 11, 1),
      1796083200001,
      Date.UTC(2026, 11, 1, 10),
    ]);
  });

  it('refuses a day that does not exist, a repeated parameter and a cursor signed with another key', async () => {
    expect(await problems(LeadsFilterQuery, { since: '2026-02-30', until: '2026-12-01T24:00Z' })).toBe(
      JSON.stringify({ since: QUERY_RULES.time, until: QUERY_RULES.time }),
    );
    expect(await problems(LeadsFilterQuery, { status: ['won', 'lost'] })).toBe(JSON.stringify({ status: QUERY_RULES.status }));
    expect(await problems(LeadsPageQuery, { limit: '1e2', cursor: encodeCursor(3, cursorKey('another', 'a-salt')) })).toBe(
      JSON.stringify({ limit: QUERY_RULES.limit, cursor: QUERY_RULES.cursor }),
    );
    await expect(check(LeadsPageQuery, { cursor: 'x' }, null)).rejects.toThrow('cursor key');
  });
});
