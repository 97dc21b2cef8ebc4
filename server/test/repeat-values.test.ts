/**
 * A repeat's values in `GET /leads` (`repeat_history`, on both databases): each repeat of a lead, oldest first, with
 * its request, its times and the value it sent for each field that differed from the lead — personal values null
 * where the lead is read with them hidden (LEADS_CARD_PII=0: the inbox's reading) and once the lead is erased, the
 * fields' names kept.
 */
import { SECRET_HEADER } from '@stickers/shared';
import request from 'supertest';
import { AnonymisationService } from '../src/anonymisation/anonymisation.service';
import { ExportService } from '../src/export/export.service';
import { lead, postLead, sandboxSuite, SECRET, submitLead, type TestServer } from './harness';
import { sqlRun } from './support/test-database';

const MIN = 60 * 1000;
const { boot } = sandboxSuite();

async function listed(server: TestServer, leadNumber: number): Promise<any> {
  const res = await request(server.app.getHttpServer()).get('/leads').set(SECRET_HEADER, SECRET);
  expect(res.status).toBe(200);
  return (res.body.leads as { lead_number: number }[]).find((l) => l.lead_number === leadNumber);
}

/** A lead and two repeats a minute apart: the first changes the phone and the comment, the second the comment. */
async function leadWithRepeats(server: TestServer) {
  const first = lead({ comment: 'first' });
  const id = await submitLead(server, first);
  const other = await submitLead(server);
  const repeats = [
    lead({ telegram: first.telegram, phone: '+79990000001', comment: 'second' }),
    lead({ telegram: first.telegram, phone: first.phone, comment: 'third' }),
  ];
  const times: string[] = [];
  for (const repeat of repeats) {
    server.clock.advance(MIN);
    times.push(new Date(server.clock.now()).toISOString());
    const res = await postLead(server, repeat);
    expect(res.body).toMatchObject({ lead_number: id, repeat: true });
  }
  return { id, other, repeats, times };
}

describe("GET /leads: a repeat's values", () => {
  it('lists each repeat with its request, times and the values it sent for the fields that changed', async () => {
    const server = await boot({ sandbox: undefined });
    const { id, other, repeats, times } = await leadWithRepeats(server);
    const shown = await listed(server, id);
    expect(shown.repeats).toBe(2);
    expect(shown.repeat_history).toEqual([
      {
        request_id: repeats[0].request_id,
        created_at: times[0],
        received_at: times[0],
        changes: { phone: '+79990000001', comment: 'second' },
      },
      { request_id: repeats[1].request_id, created_at: times[1], received_at: times[1], changes: { comment: 'third' } },
    ]);
    expect((await listed(server, other)).repeat_history).toEqual([]);
  });

  it('hides the personal values as LEADS_CARD_PII=0 does (the inbox reads leads so), the fields named', async () => {
    const server = await boot({ sandbox: undefined, env: { LEADS_CARD_PII: '0' } });
    const { id } = await leadWithRepeats(server);
    const page = await server.app.get(ExportService).page({}, { hidePersonal: true });
    const hidden = page.leads.find((l) => l.lead_number === id)!;
    expect(hidden.repeat_history.map((r) => r.changes)).toEqual([{ phone: null, comment: null }, { comment: null }]);
    expect(hidden.phone).toBeNull();
  });

  it('shows no personal value of an erased lead’s repeats, the fields named', async () => {
    const server = await boot({ sandbox: undefined });
    const { id, repeats } = await leadWithRepeats(server);
    expect(await server.app.get(AnonymisationService).forget(id)).toBe('done');
    const erased = await listed(server, id);
    expect(erased.anonymised_at).not.toBeNull();
    expect(erased.repeat_history.map((r: { request_id: string; changes: object }) => [r.request_id, r.changes])).toEqual([
      [repeats[0].request_id, { phone: null, comment: null }],
      [repeats[1].request_id, { comment: null }],
    ]);
    expect(JSON.stringify(erased)).not.toMatch(/second|third|\+79990000001/);

    // A value an older erasure left in a repeat (or one written while the erase ran) is not shown either.
    await sqlRun(server.db, 'update lead_repeats set changes = ? where request_id = ?', '{"comment":"left"}', repeats[1].request_id);
    expect((await listed(server, id)).repeat_history[1].changes).toEqual({ comment: null });
  });
});
