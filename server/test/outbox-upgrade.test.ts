/**
 * Upgrading to the outbox loses nothing (migration 2026-12-05-0018): a database at the migration before it, holding one
 * of each kind of pending work as an older server left it in its columns and in `webhook_deliveries`, is opened by the
 * real app, which migrates it; the outbox's runner then does each piece of work exactly once — with the attempts and next
 * times the older server had counted —, and leaves no row waiting. Telegram is the sandbox (the cards, the fallback
 * message are real messages there), the webhook endpoint a local receiver; time is the FakeClock's.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import { type Kysely, Migrator } from 'kysely';
import { type LeadsDb, openDatabase, openPostgres } from '../src/database/database';
import { MIGRATIONS } from '../src/database/migrations';
import { ru } from '../src/i18n/ru';
import { TraceService, type LeadTrace } from '../src/trace/trace.service';
import { FakeClock, LEADS_CHAT, callBotApi, sandboxSuite, type TestServer } from './harness';
import { onPostgres, postgresDatabaseFor, sqlRows } from './support/test-database';

const SEC = 1000;
const MIN = 60 * SEC;
const HOOK_SECRET = 'whsec_upgrade_0123456789abcdef';
const EVENT_ID = `evt_${'5'.repeat(32)}`;

const suite = sandboxSuite();
const { tmp, sandbox } = suite;

/** A webhook endpoint that records every request and answers 200. */
class Receiver {
  readonly received: { headers: IncomingHttpHeaders; body: any }[] = [];
  url = '';
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(200).end();
    });
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/hooks`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** The database the app will open for `dbPath` (its SQLite file, or the PostgreSQL database standing for it). */
async function openOld(dbPath: string): Promise<LeadsDb> {
  return onPostgres ? openPostgres(await postgresDatabaseFor(dbPath)).db : openDatabase(dbPath).db;
}

/** A message the bot sends to the leads chat itself (as an older server did: a card, or the landing's fallback message). */
async function botMessage(text: string): Promise<number> {
  const sent = await callBotApi<{ message_id: number }>(sandbox, 'sendMessage', { chat_id: LEADS_CHAT, text });
  return sent.message_id;
}

interface OldDatabase {
  unpublished: number;
  statusChanged: number;
  repeated: number;
  repeat: number;
  late: number;
  fallbackMessage: number;
  lateRepeat: number;
  repeatFallbackMessage: number;
  cardOf: Map<number, number>;
  eventRowId: number;
}

/**
 * The database at the migration before the outbox, as an older server left it at `now`: one piece of pending work of
 * each kind, the failed ones with their attempts and next times.
 */
async function buildOld(dbPath: string, now: number, webhookUrl: string): Promise<OldDatabase> {
  const db = (await openOld(dbPath)) as unknown as Kysely<any>;
  try {
    const names = Object.keys(MIGRATIONS);
    const { error } = await new Migrator({ db, provider: { getMigrations: () => Promise.resolve(MIGRATIONS) } }).migrateTo(
      names[names.indexOf('2026-12-05-0018-outbox') - 1],
    );
    expect(error).toBeUndefined();
    const t0 = now - 10 * MIN;
    let n = 0;
    const addLead = async (row: Record<string, unknown>): Promise<number> => {
      n += 1;
      const values = {
        request_id: `req-upgrade-${n}`,
        name: `Гость ${n}`,
        telegram: `@guest_${n}`,
        telegram_key: `guest_${n}`,
        date: '14 февраля',
        guests: '30',
        created_at: t0,
        received_at: t0,
        next_attempt_at: t0,
        ...row,
      };
      return (await db.insertInto('leads').values(values).returning('id').executeTakeFirstOrThrow()).id as number;
    };
    const cardOf = new Map<number, number>();
    /** The lead's card, a real message in the leads chat, stored as published. */
    const publish = async (id: number) => {
      const messageId = await botMessage(`🆕 Заявка #${id}\nИмя: Гость`);
      cardOf.set(id, messageId);
      await db
        .updateTable('leads')
        .set({ published_at: t0 + SEC, chat_id: String(LEADS_CHAT), message_id: messageId, card_format: 'html' })
        .where('id', '=', id)
        .execute();
    };

    // 1. No card yet: two failed attempts, the next one due.
    const unpublished = await addLead({ publish_attempts: 2, next_attempt_at: now - 5 * SEC, last_error: '502: Bad Gateway' });

    // 2. Published; a status changed, its card marked for rewriting (one failed rewrite, the next in 15 s).
    const statusChanged = await addLead({});
    await publish(statusChanged);
    await db
      .updateTable('leads')
      .set({
        status: 'in_progress',
        status_changed_by: '@manager',
        status_changed_at: now - MIN,
        card_dirty_at: now - MIN,
        card_refresh_attempts: 1,
        card_refresh_next_at: now + 15 * SEC,
      })
      .where('id', '=', statusChanged)
      .execute();
    const change = await db
      .insertInto('lead_status_changes')
      .values({ lead_id: statusChanged, from_status: 'new', to_status: 'in_progress', user_id: 42, user_name: '@manager', at: now - MIN })
      .returning('id')
      .executeTakeFirstOrThrow();

    // 3. Published, then repeated: the repeat not notified (one failed ping, the next in 20 s).
    const repeated = await addLead({});
    await publish(repeated);
    const repeat = await db
      .insertInto('lead_repeats')
      .values({
        lead_id: repeated,
        request_id: 'req-upgrade-repeat',
        created_at: now - 30 * SEC,
        received_at: now - 30 * SEC,
        changes: JSON.stringify({ comment: 'ещё 5 гостей' }),
        notify_attempts: 1,
        next_attempt_at: now + 20 * SEC,
        last_error: 'network',
      })
      .returning('id')
      .executeTakeFirstOrThrow();

    // 4. Late, through the landing's fallback message, which waits for its reply (one failed reply, the next in 25 s).
    const late = await addLead({ created_at: t0 - 30 * MIN });
    const fallbackMessage = await botMessage(
      `⚠️ Запасной канал: сервер заявок не ответил — заявки нет в базе (request_id req-upgrade-${late})`,
    );
    await publish(late);
    await db
      .updateTable('leads')
      .set({
        late_route: 'fallback',
        late_reason: '503',
        fallback_chat_id: String(LEADS_CHAT),
        fallback_message_id: fallbackMessage,
        fallback_sent_at: t0 - 30 * MIN + SEC,
        fallback_state: 'answer',
        fallback_attempts: 1,
        fallback_next_at: now + 25 * SEC,
      })
      .where('id', '=', late)
      .execute();
    // Its repeat came late too, through a fallback message of its own: pinged already, the reply waits (due now).
    const repeatFallbackMessage = await botMessage(
      '⚠️ Запасной канал: сервер заявок не ответил — заявки нет в базе (request_id req-upgrade-late-repeat)',
    );
    const lateRepeat = await db
      .insertInto('lead_repeats')
      .values({
        lead_id: late,
        request_id: 'req-upgrade-late-repeat',
        created_at: t0 - 20 * MIN,
        received_at: t0,
        changes: '{}',
        notified_at: t0 + 2 * SEC,
        notify_outcome: 'pinged',
        next_attempt_at: t0,
        late_route: 'fallback',
        late_reason: 'timeout',
        fallback_chat_id: String(LEADS_CHAT),
        fallback_message_id: repeatFallbackMessage,
        fallback_sent_at: t0 - 20 * MIN + SEC,
        fallback_state: 'answer',
      })
      .returning('id')
      .executeTakeFirstOrThrow();

    // 5. The status change's webhook event, its delivery not through (one failed attempt, the next in 30 s).
    const event = await db
      .insertInto('webhook_events')
      .values({
        public_id: EVENT_ID,
        lead_id: statusChanged,
        type: 'lead.status_changed',
        source_id: change.id,
        at: now - MIN,
        data: JSON.stringify({ from: 'new', to: 'in_progress', by: { telegram_user_id: 42, name: '@manager' } }),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('webhook_deliveries')
      .values({
        event_id: event.id,
        lead_id: statusChanged,
        endpoint: webhookUrl,
        created_at: now - MIN,
        attempts: 1,
        next_attempt_at: now + 30 * SEC,
        first_failed_at: now - MIN,
        last_error: 'HTTP 503',
      })
      .execute();
    // Webhooks were configured before these rows: none of them is announced again.
    for (const [type, since_id] of [
      ['lead.created', late],
      ['lead.repeat', lateRepeat.id],
      ['lead.status_changed', change.id],
      ['lead.anonymised', 0],
    ] as const)
      await db.insertInto('webhook_sources').values({ type, since_id, created_at: t0 }).execute();

    return {
      unpublished,
      statusChanged,
      repeated,
      repeat: repeat.id as number,
      late,
      fallbackMessage,
      lateRepeat: lateRepeat.id as number,
      repeatFallbackMessage,
      cardOf,
      eventRowId: event.id as number,
    };
  } finally {
    await db.destroy();
  }
}

let receiver: Receiver;
beforeEach(async () => {
  receiver = new Receiver();
  await receiver.start();
});
afterEach(async () => {
  await receiver.stop();
});

describe('upgrading to the outbox', () => {
  it('loses nothing: each pending piece of work of an older server is done exactly once, with its attempts and next time', async () => {
    const clock = new FakeClock();
    const boot = clock.now();
    const dbPath = join(tmp.dir, 'before-outbox.sqlite');
    const old = await buildOld(dbPath, boot, receiver.url);

    const server: TestServer = await suite.boot({
      dbPath,
      clock,
      env: { LEADS_WEBHOOK_URL: receiver.url, LEADS_WEBHOOK_SECRET: HOOK_SECRET },
    });
    const rows = () =>
      sqlRows<{ kind: string; lead_id: number; repeat_id: number | null; event_id: number | null; target: string }>(
        server.db,
        'select kind, lead_id, repeat_id, event_id, target, attempts, next_at, last_error, done_at from outbox order by id',
      );
    const trace = async (id: number) => ((await server.app.get(TraceService).read(String(id))) as LeadTrace).lead;
    const messages = () => sandbox.messages(LEADS_CHAT);
    const cardsOf = (id: number) => messages().filter((m) => m.text.startsWith(`${ru.card.title(id)}\n`));
    const pings = () => messages().filter((m) => m.text === ru.group.repeatPing(old.repeated));
    const replies = () => messages().filter((m) => m.reply_to_message_id === old.fallbackMessage);
    const repeatReplies = () => messages().filter((m) => m.reply_to_message_id === old.repeatFallbackMessage);
    const edits = (id: number) => sandbox.state.message(LEADS_CHAT, old.cardOf.get(id)!)!.history.length;

    // The app migrated: every piece of work is an outbox row, with the attempts, error and next time it had.
    const telegram = { target: 'telegram', event_id: null, done_at: null };
    expect(await rows()).toEqual([
      {
        ...telegram,
        kind: 'card',
        lead_id: old.unpublished,
        repeat_id: null,
        attempts: 2,
        next_at: boot - 5 * SEC,
        last_error: '502: Bad Gateway',
      },
      {
        ...telegram,
        kind: 'card_edit',
        lead_id: old.statusChanged,
        repeat_id: null,
        attempts: 1,
        next_at: boot + 15 * SEC,
        last_error: null,
      },
      {
        ...telegram,
        kind: 'repeat_ping',
        lead_id: old.repeated,
        repeat_id: old.repeat,
        attempts: 1,
        next_at: boot + 20 * SEC,
        last_error: 'network',
      },
      { ...telegram, kind: 'fallback_reply', lead_id: old.late, repeat_id: null, attempts: 1, next_at: boot + 25 * SEC, last_error: null },
      { ...telegram, kind: 'fallback_reply', lead_id: old.late, repeat_id: old.lateRepeat, attempts: 0, next_at: 0, last_error: null },
      {
        kind: 'webhook',
        lead_id: old.statusChanged,
        repeat_id: null,
        event_id: old.eventRowId,
        target: receiver.url,
        attempts: 1,
        next_at: boot + 30 * SEC,
        last_error: 'HTTP 503',
        done_at: null,
      },
    ]);
    // `npm run leads -- trace` tells the same story as before the upgrade.
    expect(await trace(old.unpublished)).toMatchObject({
      published_at: null,
      publish_attempts: 2,
      last_error: '502: Bad Gateway',
      next_attempt_at: boot - 5 * SEC,
    });

    // Only what was due goes out: lead 1's card, at the attempt its two failures left it.
    await server.outbox.tick();
    expect(cardsOf(old.unpublished)).toHaveLength(1);
    expect([edits(old.statusChanged), edits(old.repeated), pings().length, replies().length, receiver.received.length]).toEqual([
      0, 0, 0, 0, 0,
    ]);
    // The late repeat's reply was due too, but waits behind its lead's own reply (one lead's rows go in order).
    expect(repeatReplies()).toHaveLength(0);

    // Past every next time: each of the others, once.
    clock.advance(MIN);
    await server.outbox.tick();
    const statusCard = sandbox.state.message(LEADS_CHAT, old.cardOf.get(old.statusChanged)!)!;
    expect(statusCard.text).toContain(ru.card.status(ru.statuses.in_progress));
    expect(pings()).toHaveLength(1);
    expect(pings()[0].reply_to_message_id).toBe(old.cardOf.get(old.repeated));
    expect(replies().map((m) => m.text)).toEqual([ru.group.fallbackAnswer(old.late)]);
    expect(receiver.received.map((r) => [r.headers['stickers-event-id'], r.body.type, r.body.data.lead.lead_number])).toEqual([
      [EVENT_ID, 'lead.status_changed', old.statusChanged],
    ]);

    // More passes, hours later: nothing is sent twice, and nothing waits.
    for (const later of [MIN, 60 * MIN]) {
      clock.advance(later);
      await server.outbox.tick();
    }
    expect([
      cardsOf(old.unpublished).length,
      edits(old.statusChanged),
      edits(old.repeated),
      pings().length,
      replies().length,
      receiver.received.length,
    ]).toEqual([1, 1, 1, 1, 1, 1]);
    expect(cardsOf(old.unpublished)[0].history).toHaveLength(0);
    expect(repeatReplies().map((m) => m.text)).toEqual([ru.group.fallbackAnswerRepeat(old.late)]);
    const done = await sqlRows<{ kind: string; attempts: number; outcome: string; waiting: number }>(
      server.db,
      'select kind, attempts, outcome, case when done_at is null then 1 else 0 end as waiting from outbox order by id',
    );
    expect(done).toEqual([
      { kind: 'card', attempts: 2, outcome: 'sent', waiting: 0 },
      { kind: 'card_edit', attempts: 1, outcome: 'sent', waiting: 0 },
      { kind: 'repeat_ping', attempts: 1, outcome: 'sent', waiting: 0 },
      { kind: 'fallback_reply', attempts: 1, outcome: 'answered', waiting: 0 },
      { kind: 'fallback_reply', attempts: 0, outcome: 'answered', waiting: 0 },
      // The delivery's attempt counts on from the older server's one.
      { kind: 'webhook', attempts: 2, outcome: 'delivered', waiting: 0 },
    ]);
    expect(await trace(old.unpublished)).toMatchObject({
      published_at: boot,
      publish_attempts: 2,
      message_id: cardsOf(old.unpublished)[0].message_id,
    });
  });
});
