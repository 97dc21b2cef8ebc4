/**
 * GET /leads's cursor is the API's own: a cursor made by hand (base64url of `{"id":n}`, or one signed with another
 * key) is 422; an empty `limit=` or `cursor=` counts as absent, as the docs say of every empty parameter.
 */
import { join } from 'node:path';
import { cursorKey, encodeCursor } from '../src/export/export-query';
import { NO_RATE_LIMITS, SALT, sandboxSuite, SECRET, submitLead } from './harness';
import { secretGet } from './support/inbox-client';

const { tmp, start } = sandboxSuite();

describe("GET /leads's cursor and empty parameters", () => {
  it('takes only the cursors it gave, and an empty limit or cursor as absent', async () => {
    const server = await start({ dbPath: join(tmp.dir, 'cursor.sqlite'), env: NO_RATE_LIMITS });
    for (let i = 0; i < 3; i++) await submitLead(server);

    const first = await secretGet(server, '/leads?limit=1');
    expect(first.body.leads.map((l: { lead_number: number }) => l.lead_number)).toEqual([3]);
    const next = await secretGet(server, `/leads?limit=1&cursor=${first.body.next_cursor}`);
    expect([next.status, next.body.leads.map((l: { lead_number: number }) => l.lead_number)]).toEqual([200, [2]]);

    const refused = { error: 'invalid_query', errors: { cursor: 'is not a cursor this API gave' } };
    for (const cursor of [
      Buffer.from('{"id":3}').toString('base64url'),
      encodeCursor(3, cursorKey('another-secret', SALT)),
      encodeCursor(3, cursorKey(SECRET, SALT)).replace(/\.(.)/, (_, c: string) => `.${c === 'A' ? 'B' : 'A'}`),
    ]) {
      const res = await secretGet(server, `/leads?cursor=${cursor}`);
      expect([cursor, res.status, res.body]).toEqual([cursor, 422, refused]);
    }

    for (const query of ['limit=', 'cursor=', 'limit=&cursor=']) {
      const res = await secretGet(server, `/leads?${query}`);
      expect([query, res.status, res.body.leads?.length]).toEqual([query, 200, 3]);
    }
  });
});
