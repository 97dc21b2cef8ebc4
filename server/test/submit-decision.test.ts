/**
 * The submit decision, case by case, as the app's runner of the database underneath decides it from a plan: SQLite's
 * TypeScript decision over its prepared statements, PostgreSQL's function `leads_submit`. The same cases on both
 * (`npx jest test/submit-decision.test.ts`, and again with LEADS_TEST_DATABASE=postgres): they hold the two together.
 */
import { SUBMIT_LOCK_KEY, SubmitRunner, type SubmitPlan } from '../src/repositories/submit-runner';
import { startServer, tempDir, type TestServer } from './harness';
import { planOf } from './support/submit-plans';
import { itPostgresOnly, sqlRow, sqlRows, sqlRun } from './support/test-database';

const NOW = 1_796_000_000_000;
const MIN = 60_000;
const HOUR = 60 * MIN;

const tmp = tempDir();
let files = 0;
let server: TestServer;
let runner: SubmitRunner;
const submit = (plan: SubmitPlan) => runner.submit(plan);
const row = <T = Record<string, unknown>>(text: string, ...params: unknown[]) => sqlRow<T>(server.db, text, ...params);

beforeEach(async () => {
  server = await startServer({ dbPath: `${tmp.dir}/decision-${(files += 1)}.sqlite` });
  runner = server.app.get(SubmitRunner);
});
afterEach(() => server.close());
afterAll(() => tmp.remove());

describe('a new request', () => {
  it('is a new lead: its row as the plan has it, counted at its arrival', async () => {
    const plan = planOf(NOW);
    const verdict = await submit(plan);
    expect(verdict).toEqual({ kind: 'created', lead_number: expect.any(Number) });
    const lead = await row('select * from leads where id = ?', verdict.kind === 'created' && verdict.lead_number);
    expect(lead).toMatchObject({ request_id: plan.request_id, name: plan.lead.name, phone: plan.lead.phone, created_at: NOW });
    expect(await sqlRows(server.db, 'select kind, key_hash, at from rate_events')).toEqual([
      { kind: 'accepted', key_hash: plan.ip_hash, at: NOW },
    ]);
    expect(await row('select count(*) as n from lead_events')).toEqual({ n: 0 });
  });
});

describe('a known request_id', () => {
  it('is a duplicate of its lead or its repeat, whatever the limits say, and counts nothing', async () => {
    const first = planOf(NOW, { ipHash: 'v', limits: { visitor: 1 } });
    const created = await submit(first);
    const repeat = planOf(NOW + 1, { fields: { phone: first.lead.phone } });
    expect(await submit(repeat)).toEqual({ kind: 'repeat', lead_number: (created as { lead_number: number }).lead_number });

    const again = { ...planOf(NOW + 2, { ipHash: 'v', limits: { visitor: 1, hourly: 1 } }), request_id: first.request_id };
    expect(await submit(again)).toEqual({
      kind: 'duplicate',
      lead_number: (created as { lead_number: number }).lead_number,
      repeat: false,
      fallback_noted: false,
    });
    const repeatAgain = { ...planOf(NOW + 3), request_id: repeat.request_id };
    expect(await submit(repeatAgain)).toMatchObject({ kind: 'duplicate', repeat: true, fallback_noted: false });
    expect(await row('select count(*) as n from rate_events')).toEqual({ n: 2 });
  });
});

describe('the limits', () => {
  it('a visitor over its limit in the window is limited, with the time of the limit-th newest of its requests', async () => {
    const plans = [0, 1, 2].map((i) => planOf(NOW + i * MIN, { ipHash: 'v', limits: { visitor: 2 } }));
    for (const p of plans.slice(0, 2)) expect(await submit(p)).toMatchObject({ kind: 'created' });
    expect(await submit(plans[2])).toEqual({ kind: 'limited', why: 'visitor', nth: NOW });
    // Another visitor is not limited by it; the window moves on.
    expect(await submit(planOf(NOW + 2 * MIN, { ipHash: 'w', limits: { visitor: 2 } }))).toMatchObject({ kind: 'created' });
    expect(await submit(planOf(NOW + HOUR + 1, { ipHash: 'v', limits: { visitor: 2 } }))).toMatchObject({ kind: 'created' });
  });

  it('the hourly limit counts every visitor, read over the minutes: limited with the limit-th newest time', async () => {
    const hourly = (t: number) => submit(planOf(NOW + t, { limits: { hourly: 3 } }));
    for (const t of [0, 10 * MIN, 10 * MIN + 5]) expect(await hourly(t)).toMatchObject({ kind: 'created' });
    expect(await hourly(40 * MIN)).toEqual({ kind: 'limited', why: 'hourly', nth: NOW });
    // The window starts inside a minute: only that minute's requests after its start count.
    expect(await hourly(HOUR)).toMatchObject({ kind: 'created' });
    expect(await hourly(HOUR + 10 * MIN - 1)).toEqual({ kind: 'limited', why: 'hourly', nth: NOW + 10 * MIN });
    expect(await hourly(HOUR + 10 * MIN)).toMatchObject({ kind: 'created' });
  });

  it('a late request is counted apart: replays neither use up the visitors\u2019 hour nor pass their own', async () => {
    const late = (t: number) => planOf(NOW + t, { limits: { hourly: 2 }, late: { createdAt: NOW - HOUR, story: 'replayed' } });
    expect(await submit(late(0))).toMatchObject({ kind: 'created' });
    expect(await submit(late(1))).toMatchObject({ kind: 'created' });
    expect(await submit(late(2))).toEqual({ kind: 'limited', why: 'hourly', nth: NOW });
    expect(await submit(planOf(NOW + 3, { limits: { hourly: 2 } }))).toMatchObject({ kind: 'created' });
    expect(await sqlRows(server.db, 'select kind, count(*) as n from rate_events group by kind order by kind')).toEqual([
      { kind: 'accepted', n: 1 },
      { kind: 'late', n: 2 },
    ]);
  });
});

describe('a repeat', () => {
  it('of the newest lead with the username (any letter case) or the phone within 24 h, with the fields that changed', async () => {
    const older = planOf(NOW - 1000);
    await submit(older);
    const first = planOf(NOW, { fields: { comment: 'first' } });
    const lead = (await submit(first)) as { lead_number: number };

    // The username of the newer lead, the phone of the older: the newer one.
    const byUsername = planOf(NOW + MIN, {
      fields: {
        telegram: first.lead.telegram!.toUpperCase(),
        phone: older.lead.phone,
        name: 'Анна',
        date: null,
        guests: '40',
        comment: 'first',
      },
    });
    expect(await submit(byUsername)).toEqual({ kind: 'repeat', lead_number: lead.lead_number });
    const stored = await row<{ lead_id: number; changes: string; request_id: string }>(
      'select lead_id, changes, request_id from lead_repeats where request_id = ?',
      byUsername.request_id,
    );
    // In the form's order, as JSON.stringify writes it: an empty field and a username in another case are no change.
    expect(stored).toEqual({
      lead_id: lead.lead_number,
      changes: JSON.stringify({ name: 'Анна', phone: older.lead.phone, guests: '40' }),
      request_id: byUsername.request_id,
    });

    const byPhone = planOf(NOW + 2 * MIN, { fields: { ...first.incoming, telegram: '@someone_else' } });
    expect(await submit(byPhone)).toEqual({ kind: 'repeat', lead_number: lead.lead_number });
    expect(await row('select changes from lead_repeats where request_id = ?', byPhone.request_id)).toEqual({
      changes: '{"telegram":"@someone_else"}',
    });
  });

  it('not of a lead older than 24 h, a spam one, or an anonymised one: a new lead then', async () => {
    const old = planOf(NOW - 24 * HOUR - 1);
    await submit(old);
    expect(await submit(planOf(NOW, { fields: { phone: old.lead.phone } }))).toMatchObject({ kind: 'created' });
    const spam = planOf(NOW);
    const spamLead = (await submit(spam)) as { lead_number: number };
    await sqlRun(server.db, "update leads set status = 'spam' where id = ?", spamLead.lead_number);
    expect(await submit(planOf(NOW + 1, { fields: { telegram: spam.lead.telegram } }))).toMatchObject({ kind: 'created' });
  });
});

describe('a late request', () => {
  it('keeps the visitor\u2019s time, repeats a lead stored after it within 24 h, and tells its story', async () => {
    const stored = planOf(NOW);
    const lead = (await submit(stored)) as { lead_number: number };
    const late = planOf(NOW + 2 * HOUR, { fields: { phone: stored.lead.phone }, late: { createdAt: NOW - HOUR, story: 'replayed' } });
    expect(await submit(late)).toEqual({ kind: 'repeat', lead_number: lead.lead_number });
    const repeat = await row<{ id: number; created_at: number; received_at: number }>(
      'select id, created_at, received_at from lead_repeats where request_id = ?',
      late.request_id,
    );
    expect(repeat).toMatchObject({ created_at: NOW - HOUR, received_at: NOW + 2 * HOUR });
    expect(await sqlRows(server.db, 'select lead_id, repeat_id, kind, at, detail from lead_events')).toEqual([
      {
        lead_id: lead.lead_number,
        repeat_id: repeat!.id,
        kind: 'received_late',
        at: NOW + 2 * HOUR,
        detail: `replayed as a repeat of #${lead.lead_number}`,
      },
    ]);

    const alone = planOf(NOW + 2 * HOUR, { late: { createdAt: NOW - HOUR, story: 'replayed' } });
    const created = (await submit(alone)) as { lead_number: number };
    expect(await row('select created_at from leads where id = ?', created.lead_number)).toEqual({ created_at: NOW - HOUR });
    expect(await row('select detail from lead_events where lead_id = ?', created.lead_number)).toEqual({
      detail: `replayed as lead #${created.lead_number}`,
    });
  });

  it('whose contact was erased after it was submitted is stored without its personal data, repeating nothing', async () => {
    const stored = planOf(NOW);
    await submit(stored);
    await sqlRun(server.db, 'insert into erased_contacts (contact_hash, erased_at) values (?, ?)', 'hash-of-phone', NOW - 10);
    const late = planOf(NOW + HOUR, {
      fields: { phone: stored.lead.phone },
      late: { createdAt: NOW - 20, story: 'replayed' },
      erased: ['hash-of-phone'],
    });
    const verdict = (await submit(late)) as { kind: string; lead_number: number };
    expect(verdict.kind).toBe('created');
    expect(await row('select name, phone, telegram, anonymised_at from leads where id = ?', verdict.lead_number)).toEqual({
      name: null,
      phone: null,
      telegram: null,
      anonymised_at: NOW + HOUR,
    });
    expect(await row('select detail from lead_events where lead_id = ?', verdict.lead_number)).toEqual({
      detail: `replayed as lead #${verdict.lead_number}, anonymised: its contact was erased after it was submitted`,
    });
    // Erased before it was submitted: the person sent it again after asking to be forgotten, and it is theirs.
    const after = planOf(NOW + HOUR, { late: { createdAt: NOW, story: 'replayed' }, erased: ['hash-of-phone'] });
    const theirs = (await submit(after)) as { lead_number: number };
    expect(await row('select phone from leads where id = ?', theirs.lead_number)).toEqual({ phone: after.lead.phone });
  });
});

describe('a fallback message reported by a replay of a stored request', () => {
  const message = (id: number) => ({
    fallback_chat_id: '-100777',
    fallback_message_id: id,
    fallback_sent_at: NOW - 5,
  });
  const replayOf = (plan: SubmitPlan, id: number) => ({
    ...planOf(NOW + HOUR, { late: { createdAt: NOW, story: 'replayed' }, fallback: message(id) }),
    request_id: plan.request_id,
  });

  it('is recorded once, with its event: a lead without a card may adopt it, a published one answers it', async () => {
    const unpublished = planOf(NOW);
    const a = (await submit(unpublished)) as { lead_number: number };
    expect(await submit(replayOf(unpublished, 11))).toEqual({
      kind: 'duplicate',
      lead_number: a.lead_number,
      repeat: false,
      fallback_noted: true,
    });
    expect(
      await row('select fallback_chat_id, fallback_message_id, fallback_sent_at, fallback_state from leads where id = ?', a.lead_number),
    ).toEqual({
      ...message(11),
      fallback_state: 'pending',
    });
    expect(await row('select repeat_id, detail from lead_events where lead_id = ?', a.lead_number)).toEqual({
      repeat_id: null,
      detail: `replayed as lead #${a.lead_number}, stored before; the fallback message is recorded`,
    });
    // A second message for the same request changes nothing.
    expect(await submit(replayOf(unpublished, 12))).toMatchObject({ kind: 'duplicate', fallback_noted: false });
    expect(await row('select fallback_message_id from leads where id = ?', a.lead_number)).toEqual({ fallback_message_id: 11 });
    expect(await row('select count(*) as n from lead_events')).toEqual({ n: 1 });

    const published = planOf(NOW);
    const b = (await submit(published)) as { lead_number: number };
    await sqlRun(
      server.db,
      'update leads set published_at = ?, chat_id = ?, message_id = ? where id = ?',
      NOW + 1,
      '-100',
      5,
      b.lead_number,
    );
    expect(await submit(replayOf(published, 13))).toMatchObject({ fallback_noted: true });
    expect(await row('select fallback_state, chat_id, message_id from leads where id = ?', b.lead_number)).toEqual({
      fallback_state: 'answer',
      chat_id: '-100',
      message_id: 5,
    });
  });

  it('on a repeat is answered', async () => {
    const lead = planOf(NOW);
    const l = (await submit(lead)) as { lead_number: number };
    const repeat = planOf(NOW + 1, { fields: { phone: lead.lead.phone } });
    await submit(repeat);
    expect(await submit(replayOf(repeat, 21))).toEqual({
      kind: 'duplicate',
      lead_number: l.lead_number,
      repeat: true,
      fallback_noted: true,
    });
    const r = await row<{ id: number; fallback_state: string; fallback_message_id: number }>(
      'select id, fallback_state, fallback_message_id from lead_repeats where request_id = ?',
      repeat.request_id,
    );
    expect(r).toMatchObject({ fallback_state: 'answer', fallback_message_id: 21 });
    expect(await row('select repeat_id, detail from lead_events')).toEqual({
      repeat_id: r!.id,
      detail: `replayed as a repeat of #${l.lead_number}, stored before; the fallback message is recorded`,
    });
  });

  itPostgresOnly('in the plan of the version before (during a deploy) is recorded as well', async () => {
    const lead = planOf(NOW);
    const l = (await submit(lead)) as { lead_number: number };
    // As an instance of the version before calls it.
    const before = { ...replayOf(lead, 31), fallback: { chat_id: '-100777', message_id: 31, sent_at: NOW - 5 }, lock_key: SUBMIT_LOCK_KEY };
    expect(await row('select leads_submit(?::jsonb) as verdict', JSON.stringify(before))).toEqual({
      verdict: { kind: 'duplicate', lead_number: l.lead_number, repeat: false, fallback_noted: true },
    });
    expect(
      await row('select fallback_chat_id, fallback_message_id, fallback_sent_at, fallback_state from leads where id = ?', l.lead_number),
    ).toEqual({
      fallback_chat_id: '-100777',
      fallback_message_id: 31,
      fallback_sent_at: NOW - 5,
      fallback_state: 'pending',
    });
  });
});

describe('races', () => {
  it('requests of one visitor at once: exactly its limit passes', async () => {
    const verdicts = await Promise.all(
      Array.from({ length: 12 }, (_, i) => submit(planOf(NOW + i, { ipHash: 'v', limits: { visitor: 5 } }))),
    );
    expect(verdicts.filter((v) => v.kind === 'created')).toHaveLength(5);
    expect(verdicts.filter((v) => v.kind === 'limited')).toHaveLength(7);
    expect(await row('select count(*) as n from leads')).toEqual({ n: 5 });
  });

  it('one request_id at once: one lead, the others its duplicates', async () => {
    const plan = planOf(NOW);
    const verdicts = await Promise.all(Array.from({ length: 8 }, () => submit(plan)));
    const created = verdicts.filter((v) => v.kind === 'created') as { lead_number: number }[];
    expect(created).toHaveLength(1);
    expect(verdicts.filter((v) => v.kind === 'duplicate')).toEqual(
      Array.from({ length: 7 }, () => ({ kind: 'duplicate', lead_number: created[0].lead_number, repeat: false, fallback_noted: false })),
    );
  });

  it('one contact at once: one lead, the others its repeats', async () => {
    const first = planOf(NOW);
    const verdicts = await Promise.all(
      Array.from({ length: 6 }, (_, i) => submit(planOf(NOW + i, { fields: { phone: first.lead.phone } }))),
    );
    const created = verdicts.filter((v) => v.kind === 'created') as { lead_number: number }[];
    expect(created).toHaveLength(1);
    expect(verdicts.filter((v) => v.kind === 'repeat')).toHaveLength(5);
    expect(await row('select count(*) as n from lead_repeats where lead_id = ?', created[0].lead_number)).toEqual({ n: 5 });
  });
});
