// Fast tier: the outbox's decisions with a fake Telegram and a hand-moved clock, on an in-memory SQLite through the real
// repositories. No HTTP, no sandbox (docs/requirements.md §4.1–§4.3, §12.7).
import { Logger } from '@nestjs/common';
import { AlertsService } from '../alerts/alerts.service';
import { LeadMessagesRepository } from '../conversations/lead-messages.repository';
import type { MessageSender } from './message-senders';
import { TelegramLinksRepository } from '../conversations/telegram-links.repository';
import { CardService } from '../cards/card.service';
import { ru } from '../i18n/ru';
import { LeadsChatService } from '../chats/leads-chat.service';
import { Clock } from '../clock/clock';
import { loadServerConfig } from '../config/config';
import { type LeadsDb, migrateToLatest, openDatabase } from '../database/database';
import { WriteHealth } from '../database/write-health';
import { Metrics } from '../observability/metrics';
import { DEFAULT_LEASE_TIMINGS, LeaseService } from '../cluster/lease.service';
import { SchedulerRegistry } from '@nestjs/schedule';
import { LeasesRepository } from '../repositories/leases.repository';
import { LeadsRepository } from '../repositories/leads.repository';
import { ChatMigrationsRepository } from '../repositories/chat-migrations.repository';
import { SettingsRepository } from '../repositories/settings.repository';
import type { OutgoingMessage, TelegramGateway } from '../telegram/telegram.gateway';
import type { TelegramResult } from '../telegram/telegram-result';
import { CardPublisher } from './card-publisher';
import { CardRewriter } from './card-rewriter';
import { FLOOD_UNTIL_SETTING, OutboxGate } from './outbox-gate';
import { OutboxService } from './outbox.service';
import { RepeatNotifier } from './repeat-notifier';
import { FallbackAnswerer } from './fallback-answerer';
import { OutboxRepository } from '../repositories/outbox.repository';
import type { WebhookDeliverer } from '../webhooks/webhook-deliverer';
import type { WebhookRecorder } from '../webhooks/webhook-recorder';

const LEADS_CHAT = '-1001';
const ADMIN_CHAT = '-1002';
const SEC = 1000;
const MIN = 60 * SEC;

class HandClock extends Clock {
  t = Date.UTC(2026, 10, 29, 9, 0, 0);
  override now(): number {
    return this.t;
  }
}

type Answer = TelegramResult<{ message_id: number }>;

/** Telegram as the outbox sees it: every call kept; the leads chat answers from a queue (then ok), the admin chat ok. */
class FakeTelegram {
  available = true;
  readonly sends: OutgoingMessage[] = [];
  readonly edits: { chatId: string; messageId: number; text: string }[] = [];
  readonly answers: Answer[] = [];
  private messageId = 100;

  /** Runs after each send is kept, before its answer: what happens elsewhere meanwhile. */
  afterSend: () => Promise<void> = () => Promise.resolve();

  async send(message: OutgoingMessage): Promise<Answer> {
    this.sends.push(message);
    await this.afterSend();
    const queued = message.chatId === ADMIN_CHAT ? undefined : this.answers.shift();
    return queued ?? { ok: true, value: { message_id: ++this.messageId } };
  }

  /** While set, an edit is answered only once it resolves (an edit still on its way). */
  editHeld: Promise<void> | null = null;

  async edit(chatId: string, messageId: number, text: string): Promise<TelegramResult<unknown>> {
    this.edits.push({ chatId, messageId, text });
    if (this.editHeld) await this.editHeld;
    return { ok: true, value: true };
  }

  cards(): OutgoingMessage[] {
    return this.sends.filter((m) => m.chatId !== ADMIN_CHAT);
  }

  alerts(): string[] {
    return this.sends.filter((m) => m.chatId === ADMIN_CHAT).map((m) => m.text);
  }
}

const BAD_GATEWAY: Answer = { ok: false, kind: 'failed', description: '502: Bad Gateway' };

/** Lets the alerts the outbox does not await reach the fake Telegram. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

function build() {
  const config = loadServerConfig({
    LEADS_SECRET: 'a-long-enough-secret',
    LEADS_IP_SALT: 'salt',
    TELEGRAM_BOT_TOKEN: '123:abc',
    LEADS_CHAT_ID: LEADS_CHAT,
    ADMIN_CHAT_ID: ADMIN_CHAT,
  });
  const { db } = openDatabase(':memory:');
  const clock = new HandClock();
  const telegram = new FakeTelegram();
  const gateway = telegram as unknown as TelegramGateway;
  const metrics = new Metrics();
  const leads = new LeadsRepository(db);
  const cards = new CardService(config, ru, new TelegramLinksRepository(db), new LeadMessagesRepository(db));
  const migrations = new ChatMigrationsRepository(new SettingsRepository(db));
  const adminAlerts = new AlertsService(config, gateway, new SettingsRepository(db), migrations, clock, metrics, ru);
  const chats = new LeadsChatService(config, migrations, leads, adminAlerts, clock, ru);
  const gate = new OutboxGate(gateway, clock, metrics, new SettingsRepository(db));
  const deps: ConstructorParameters<typeof CardPublisher> = [
    config,
    leads,
    new LeadMessagesRepository(db),
    cards,
    gateway,
    chats,
    adminAlerts,
    metrics,
    clock,
    gate,
    ru,
  ];
  const publisher = new CardPublisher(...deps);
  const rewriter = new CardRewriter(...deps);
  const notifier = new RepeatNotifier(...deps);
  const answerer = new FallbackAnswerer(...deps);
  const leases = new LeaseService(new LeasesRepository(db), DEFAULT_LEASE_TIMINGS, new SchedulerRegistry());
  const webhooks = null as unknown as WebhookDeliverer; // no endpoint configured: never called
  const recorder = null as unknown as WebhookRecorder;
  const repo = new OutboxRepository(db);
  const outbox = new OutboxService(
    config,
    repo,
    gate,
    chats,
    publisher,
    rewriter,
    recorder,
    leases,
    clock,
    new WriteHealth(),
    metrics,
    notifier,
    answerer,
    webhooks,
    null as unknown as MessageSender, // no conversation in these tests: never called
    false,
  );
  return { db, clock, telegram, leads, outbox };
}

async function storeLead(db: LeadsDb, now: number): Promise<number> {
  const row = await db
    .insertInto('leads')
    .values({
      request_id: crypto.randomUUID(),
      name: 'Анна',
      telegram: '@anna',
      telegram_key: '@anna',
      phone: '+79991234567',
      date: null,
      guests: '30',
      comment: null,
      ip_hash: null,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The lead's card row in the outbox: its failures, last error and next time. */
async function cardRow(db: LeadsDb, leadId: number) {
  return db
    .selectFrom('outbox')
    .select(['attempts', 'last_error', 'next_at', 'done_at'])
    .where('kind', '=', 'card')
    .where('lead_id', '=', leadId)
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
}

async function trace(db: LeadsDb, leadId: number): Promise<string[]> {
  const rows = await db.selectFrom('lead_events').select('kind').where('lead_id', '=', leadId).orderBy('id').execute();
  return rows.map((r) => r.kind);
}

describe('outbox with a fake Telegram', () => {
  let t: ReturnType<typeof build>;

  beforeAll(() => Logger.overrideLogger(false));
  beforeEach(async () => {
    t = build();
    await migrateToLatest(t.db);
  });
  afterEach(async () => {
    t.outbox.stop();
    await t.outbox.whenIdle();
    await t.db.destroy();
  });

  it('publishes a due lead and records its message', async () => {
    const id = await storeLead(t.db, t.clock.now());
    await t.outbox.tick();
    expect(t.telegram.cards()).toHaveLength(1);
    expect(t.telegram.cards()[0]).toMatchObject({ chatId: LEADS_CHAT, html: true });
    expect(t.telegram.cards()[0].text).toContain(`Заявка #${id}`);
    expect(await t.leads.findLead(id)).toMatchObject({
      published_at: t.clock.now(),
      chat_id: LEADS_CHAT,
      message_id: 101,
      card_format: 'html',
    });
    expect(await trace(t.db, id)).toEqual(['published']);
    expect(await t.leads.lastPublishedAt()).toBe(t.clock.now());
    await t.outbox.tick();
    expect(t.telegram.cards()).toHaveLength(1);
  });

  it('a 5xx schedules the next attempt 5 s, 15 s, 60 s, 5 min, then 15 min later, and nothing goes out before', async () => {
    const id = await storeLead(t.db, t.clock.now());
    const delays = [5 * SEC, 15 * SEC, 60 * SEC, 5 * MIN, 15 * MIN, 15 * MIN];
    for (const [i, delay] of delays.entries()) {
      t.telegram.answers.push(BAD_GATEWAY);
      await t.outbox.tick();
      expect(t.telegram.cards()).toHaveLength(i + 1);
      expect(await t.leads.findLead(id)).toMatchObject({ published_at: null });
      const row = await cardRow(t.db, id);
      expect(row).toMatchObject({ attempts: i + 1, last_error: '502: Bad Gateway' });
      expect(row.next_at - t.clock.now()).toBe(delay);
      t.clock.t += delay - 1;
      await t.outbox.tick();
      expect(t.telegram.cards()).toHaveLength(i + 1);
      t.clock.t += 1;
    }
    await t.outbox.tick();
    expect(await t.leads.findLead(id)).toMatchObject({ published_at: t.clock.now(), last_error: null });
    expect(await cardRow(t.db, id)).toMatchObject({ attempts: 6, done_at: t.clock.now(), last_error: null });
  });

  it('the 5th failure raises the alert, at most once per 30 minutes', async () => {
    const id = await storeLead(t.db, t.clock.now());
    const failOnce = async () => {
      t.telegram.answers.push(BAD_GATEWAY);
      t.clock.t = Math.max(t.clock.t, (await cardRow(t.db, id)).next_at);
      await t.outbox.tick();
      await settle();
    };
    for (let i = 0; i < 4; i += 1) await failOnce();
    expect(t.telegram.alerts()).toEqual([]);
    await failOnce(); // the 5th
    const fifthAt = t.clock.now();
    expect(t.telegram.alerts()).toHaveLength(1);
    expect(t.telegram.alerts()[0]).toContain('Карточки не публикуются');
    expect(t.telegram.alerts()[0]).toContain('попыток: 5');
    await failOnce(); // the 6th, 15 min later: throttled
    expect(t.clock.now() - fifthAt).toBe(15 * MIN);
    expect(t.telegram.alerts()).toHaveLength(1);
    await failOnce(); // the 7th, 30 min after the 5th: the alert again
    expect(t.clock.now() - fifthAt).toBe(30 * MIN);
    expect(t.telegram.alerts()).toHaveLength(2);
    expect(t.telegram.alerts()[1]).toContain('попыток: 7');
  });

  it('flood control: no call for exactly retry_after, the lead keeps its failure count', async () => {
    const id = await storeLead(t.db, t.clock.now());
    await storeLead(t.db, t.clock.now());
    t.telegram.answers.push({ ok: false, kind: 'flood', retryAfterSec: 7, description: 'Too Many Requests: retry after 7' });
    await t.outbox.tick();
    expect(t.telegram.cards()).toHaveLength(1); // the second lead waits too
    expect(await cardRow(t.db, id)).toMatchObject({ attempts: 0, next_at: t.clock.now() + 7 * SEC });
    t.clock.t += 7 * SEC - 1;
    await t.outbox.tick();
    expect(t.telegram.cards()).toHaveLength(1);
    t.clock.t += 1;
    await t.outbox.tick();
    expect(t.telegram.cards()).toHaveLength(3);
  });

  it('a pause another instance got during a pass stops this one before its next call', async () => {
    const ids = [await storeLead(t.db, t.clock.now()), await storeLead(t.db, t.clock.now()), await storeLead(t.db, t.clock.now())];
    // Another instance's 429, shared through the database while this instance's first card is on its way.
    t.telegram.afterSend = async () => {
      t.telegram.afterSend = () => Promise.resolve();
      await new SettingsRepository(t.db).set(FLOOD_UNTIL_SETTING, String(t.clock.now() + 7 * SEC), t.clock.now());
    };
    await t.outbox.tick();
    expect(t.telegram.cards()).toHaveLength(1);
    t.clock.t += 7 * SEC;
    await t.outbox.tick();
    expect(t.telegram.cards().map((m) => m.text.split('\n')[0])).toEqual(ids.map((id) => `<b>🆕 Заявка #${id}</b>`));
  });

  it("a rewrite asked for while the lane is rewriting the same card waits for the lane's edit, and says the card shows it", async () => {
    const id = await storeLead(t.db, t.clock.now());
    await t.outbox.tick();
    await t.db.updateTable('leads').set({ status: 'in_progress', card_dirty_at: t.clock.now() }).where('id', '=', id).execute();
    let release!: () => void;
    t.telegram.editHeld = new Promise((r) => (release = r));
    const pass = t.outbox.tick();
    while (t.telegram.edits.length === 0) await new Promise((r) => setImmediate(r));
    const refresh = t.outbox.refreshCard(id);
    let answered = false;
    void refresh.then(() => (answered = true));
    await settle();
    const answeredBeforeTheEdit = answered;
    release();
    expect(answeredBeforeTheEdit).toBe(false);
    expect(await refresh).toBe('shown');
    await pass;
    expect(t.telegram.edits).toHaveLength(1);
  });

  it('a card sent but not recorded is recorded by a later pass, never sent again', async () => {
    const id = await storeLead(t.db, t.clock.now());
    const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    const markPublished = jest.spyOn(t.leads, 'markPublished').mockRejectedValueOnce(full);
    await t.outbox.tick();
    expect(t.telegram.cards()).toHaveLength(1);
    expect(await t.leads.findLead(id)).toMatchObject({ published_at: null });
    // The failed pass backs off: 5 s later the next pass records the card first.
    t.clock.t += 5 * SEC;
    await t.outbox.tick();
    expect(markPublished).toHaveBeenCalledTimes(2);
    expect(t.telegram.cards()).toHaveLength(1);
    expect(await t.leads.findLead(id)).toMatchObject({ message_id: 101, chat_id: LEADS_CHAT });
    expect(await trace(t.db, id)).toEqual(['published']);
    await t.outbox.tick();
    expect(t.telegram.cards()).toHaveLength(1);
  });
});
