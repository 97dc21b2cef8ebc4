/**
 * The routes' input through their DTOs' ValidationPipes, against the real app on both databases: a 422 names every bad
 * parameter in the documented order (a rule between two parameters last) with the documented words, byte for byte;
 * the inbox's `:number` and bodies are checked by their pipes before the handler, so a path naming no lead is 404
 * whatever the body, and an erasure's body is refused (422) before who may erase is asked. `POST /leads`'s fields are
 * refused by its body's pipe before the service is asked.
 */
import { join } from 'node:path';
import type { SandboxUser } from '@stickers/telegram-sandbox';
import { IDEMPOTENCY_HEADER } from '@stickers/shared';
import { LeadsService } from '../src/leads/leads.service';
import { lead, LEADS_CHAT, NO_RATE_LIMITS, postLead, sandboxSuite, submitLead } from './harness';
import { inboxCall, secretGet } from './support/inbox-client';

const { tmp, sandbox, start } = sandboxSuite();
const MEMBER: SandboxUser = { id: 502, is_bot: false, first_name: 'Пётр', username: 'petr_member' };
let n = 0;
const startApp = () => start({ dbPath: join(tmp.dir, `input-${(n += 1)}.sqlite`), env: NO_RATE_LIMITS });

const TIME = 'must be an ISO 8601 date or time that exists (no 30 February, no 24:00), or milliseconds since the epoch';
const STATUS = 'must be one of new, in_progress, won, lost, spam';

describe('queries', () => {
  it('answers 422 invalid_query naming every bad parameter in order, until-after-since last, as the exact documented text', async () => {
    const server = await startApp();
    await submitLead(server);
    const many = 'status=open&until=3&since=5&limit=0&cursor=nonsense';
    const expected = JSON.stringify({
      error: 'invalid_query',
      errors: {
        limit: 'must be an integer from 1 to 200',
        cursor: 'is not a cursor this API gave',
        status: STATUS,
        until: 'must be after since',
      },
    });
    const direct = await secretGet(server, `/leads?${many}`);
    expect([direct.status, direct.text]).toEqual([422, expected]);
    const inbox = await inboxCall(server, sandbox, `leads?${many}`);
    expect([inbox.status, inbox.text]).toEqual([422, expected]);

    const csv = await secretGet(server, '/leads/export.csv?since=2026-02-30&status=&until=2026-12-01T24:00Z&limit=0');
    expect([csv.status, csv.text]).toEqual([422, JSON.stringify({ error: 'invalid_query', errors: { since: TIME, until: TIME } })]);
    const inboxCsv = await inboxCall(server, sandbox, 'leads.csv?status=a&status=b&q=&source=%2Dx');
    expect([inboxCsv.status, inboxCsv.text]).toEqual([
      422,
      JSON.stringify({
        error: 'invalid_query',
        errors: { source: 'must be a source name (as LANDING_SOURCE) or none', status: 'must be given once' },
      }),
    ]);
  });
});

describe("the inbox's :number and bodies", () => {
  it('is 404 for a :number that names no lead whatever the body, 422 for the fields of a body to a lead that exists', async () => {
    const server = await startApp();
    const number = await submitLead(server);
    for (const path of ['leads/abc/status', 'leads/0/erase', 'leads/007/status']) {
      for (const body of [[], 'x', { status: 'done' }]) {
        const res = await inboxCall(server, sandbox, path, { method: 'POST', body });
        expect([path, body, res.status, res.text]).toEqual([path, body, 404, '{"error":"not_found"}']);
      }
    }
    // A %-escape that decodes to no text names nothing either (the router's 400 before).
    const undecodable = await inboxCall(server, sandbox, 'leads/%E0%A4%A/status', { method: 'POST', body: { status: 'new' } });
    expect([undecodable.status, undecodable.text]).toEqual([404, '{"error":"not_found"}']);
    const trace = await secretGet(server, '/leads/%E0%A4%A/trace');
    expect([trace.status, trace.text]).toEqual([404, '{"error":"not_found"}']);
    const bad = await inboxCall(server, sandbox, `leads/${number}/status`, { method: 'POST', body: { status: ['new'], extra: 1 } });
    expect([bad.status, bad.text]).toEqual([
      422,
      JSON.stringify({ error: 'invalid_body', errors: { status: STATUS, expected: `${STATUS} (the status shown)` } }),
    ]);
  });

  it("refuses an erasure's unconfirmed body (422) before it asks whether the user may erase (403)", async () => {
    sandbox.state.setMember(LEADS_CHAT, MEMBER, 'member');
    const server = await startApp();
    const number = await submitLead(server);
    const unconfirmed = await inboxCall(server, sandbox, `leads/${number}/erase`, {
      user: MEMBER,
      method: 'POST',
      body: { confirm: 'true' },
    });
    expect([unconfirmed.status, unconfirmed.text]).toEqual([
      422,
      JSON.stringify({ error: 'invalid_body', errors: { confirm: 'must be true: erasure cannot be undone' } }),
    ]);
    const confirmed = await inboxCall(server, sandbox, `leads/${number}/erase`, { user: MEMBER, method: 'POST', body: { confirm: true } });
    expect([confirmed.status, confirmed.body]).toEqual([403, { error: 'forbidden' }]);
  });
});

describe('POST /leads', () => {
  it("refuses the body's fields by its DTO's rules before the service is asked; request_id may come from Idempotency-Key", async () => {
    const server = await startApp();
    const submit = jest.spyOn(server.app.get(LeadsService), 'submit');
    const refused = await postLead(server, { name: 'A', telegram: '@ab', phone: '12' });
    expect([refused.status, JSON.stringify(refused.body)]).toEqual([
      422,
      '{"error":"invalid","errors":{"name":"too_short","telegram":"invalid","phone":"invalid","request_id":"required"}}',
    ]);
    expect(submit).not.toHaveBeenCalled();

    const { request_id: key, ...withoutId } = lead();
    const keyed = await postLead(server, withoutId, { [IDEMPOTENCY_HEADER]: String(key) });
    expect([keyed.status, submit.mock.calls.length]).toEqual([201, 1]);
    // The service takes the body as the pipe checked it: the rules ran once, the header's key is the request_id.
    expect(submit.mock.calls[0][0]).toMatchObject({ lead: { request_id: key, name: withoutId.name }, late: null, consent: null });
  });
});
