/**
 * "Continue in Telegram", the conversation: what a bound visitor sends the bot is stored and relayed into the group as
 * a reply to the lead's card; a member's reply to the card or to a relayed message is stored and copied to the visitor;
 * `/stop` (undone by `/start`), a blocked bot, an unbound person and an erasure each end it their way; replies to one visitor are spaced
 * out. Against the sandbox, on both databases.
 */
import type { SandboxUser } from '@stickers/telegram-sandbox';
import { DEFAULT_USER } from '@stickers/telegram-sandbox';
import { SECRET_HEADER } from '@stickers/shared';
import { LEADS_CHAT, SECRET, lead, memberActions, postLead, sandboxSuite, waitFor, type TestServer } from './harness';
import { WebhookReceiver } from './support/webhook-receiver';
import { AnonymisationService } from '../src/anonymisation/anonymisation.service';
import { LeadMessagesRepository } from '../src/conversations/lead-messages.repository';
import { MessagesService } from '../src/conversations/messages.service';
import { TelegramGateway } from '../src/telegram/telegram.gateway';

const VISITOR: SandboxUser = { id: 7001, is_bot: false, first_name: 'Анна', last_name: 'Ким', username: 'anna_k' };
const STRANGER: SandboxUser = { id: 7002, is_bot: false, first_name: 'Олег' };
const LINK = /^https:\/\/t\.me\/stickers_leads_bot\?start=([A-Za-z0-9_-]{1,64})$/;

const { sandbox, boot } = sandboxSuite((s) => {
  s.state.addChat({ id: VISITOR.id, type: 'private', title: 'Анна' });
  s.state.addChat({ id: STRANGER.id, type: 'private', title: 'Олег' });
});

async function settled(server: TestServer): Promise<void> {
  await server.outbox.tick();
  await server.outbox.whenIdle();
}

/** A published lead whose link the visitor opened: its number and card message. */
async function boundLead(
  server: TestServer,
  overrides: Record<string, unknown> = {},
): Promise<{ leadNumber: number; card: number; requestId: string }> {
  const body = lead({ telegram: '@anna_k', ...overrides });
  const created = await postLead(server, body);
  const leadNumber = created.body.lead_number as number;
  await settled(server);
  const payload = LINK.exec(String(created.body.telegram_link))![1];
  expect(await memberActions(sandbox).command(VISITOR.id, `/start ${payload}`, VISITOR)).toContain(`#${leadNumber}`);
  await settled(server);
  const card = sandbox.messages(LEADS_CHAT).find((m) => m.from.is_bot && m.text.includes(`#${leadNumber}`))!;
  return { leadNumber, card: card.message_id, requestId: body.request_id as string };
}

const rows = (server: TestServer, leadNumber: number) =>
  server.db.db.selectFrom('lead_messages').selectAll().where('lead_id', '=', leadNumber).orderBy('id').execute();

/** Waits until the app stored `n` messages of the lead (the bot handles updates as they come). */
function waitStored(server: TestServer, leadNumber: number, n: number) {
  return waitFor(
    async () => {
      const found = await rows(server, leadNumber);
      return found.length >= n && found;
    },
    10_000,
    `${n} messages of lead #${leadNumber} stored`,
  );
}

const botMessagesIn = (chatId: number) => sandbox.messages(chatId).filter((m) => m.from.is_bot);

describe('visitor → team', () => {
  it("a text and a photo are stored and relayed as replies to the card, with the visitor's name", async () => {
    const server = await boot({ polling: true });
    const { leadNumber, card } = await boundLead(server);
    sandbox.say(VISITOR.id, 'Можно на 30 гостей?', VISITOR);
    sandbox.say(VISITOR.id, 'вот макет', VISITOR, undefined, { photo: true });
    await waitStored(server, leadNumber, 2);
    await settled(server);
    // One a second into the group too.
    server.clock.advance(1_000);
    await settled(server);
    const relayed = sandbox.messages(LEADS_CHAT).filter((m) => m.reply_to_message_id === card);
    expect(relayed.map((m) => m.text)).toEqual([
      `💬 Анна Ким (@anna_k) · заявка #${leadNumber}\nМожно на 30 гостей?`,
      `💬 Анна Ким (@anna_k) · заявка #${leadNumber}\nвот макет`,
    ]);
    expect(relayed[1].photo).toBeDefined();
    const messages = await rows(server, leadNumber);
    expect(messages.map((m) => [m.direction, m.text, m.media, m.state, m.author_name])).toEqual([
      ['in', 'Можно на 30 гостей?', null, 'delivered', 'Анна Ким (@anna_k)'],
      ['in', 'вот макет', 'photo', 'delivered', 'Анна Ким (@anna_k)'],
    ]);
    expect(messages.map((m) => m.copy_message_id)).toEqual(relayed.map((m) => m.message_id));
  });

  it('a text or caption too long for the group with the header is cut there with a mark; the history keeps it whole', async () => {
    const server = await boot({ polling: true });
    const { leadNumber, card } = await boundLead(server);
    const [text, caption] = ['а'.repeat(4096), 'б'.repeat(1024)];
    sandbox.say(VISITOR.id, text, VISITOR);
    sandbox.say(VISITOR.id, caption, VISITOR, undefined, { photo: true });
    await waitStored(server, leadNumber, 2);
    await settled(server);
    server.clock.advance(1_000);
    await settled(server);
    const relayed = sandbox.messages(LEADS_CHAT).filter((m) => m.reply_to_message_id === card);
    const mark = '… ✂️ (обрезано: сообщение целиком — в инбоксе)';
    expect(relayed.map((m) => [m.text.length, m.text.endsWith(`а${mark}`) || m.text.endsWith(`б${mark}`)])).toEqual([
      [4096, true],
      [1024, true],
    ]);
    expect((await rows(server, leadNumber)).map((m) => m.text)).toEqual([text, caption]);
  });

  it('a caption, a text that starts with "/" and a command the bot does not know are relayed; its own is answered', async () => {
    const server = await boot({ polling: true });
    const { leadNumber, card } = await boundLead(server);
    sandbox.say(VISITOR.id, '/home/anna/maket.png вот файл', VISITOR, undefined, { photo: true });
    sandbox.say(VISITOR.id, '/ 30 гостей, можно?', VISITOR);
    sandbox.say(VISITOR.id, '/price сколько стоит?', VISITOR);
    sandbox.say(VISITOR.id, '/help', VISITOR);
    sandbox.say(VISITOR.id, 'и всё', VISITOR);
    await waitStored(server, leadNumber, 4);
    expect((await rows(server, leadNumber)).map((m) => [m.text, m.media])).toEqual([
      ['/home/anna/maket.png вот файл', 'photo'],
      ['/ 30 гостей, можно?', null],
      ['/price сколько стоит?', null],
      ['и всё', null],
    ]);
    for (let i = 0; i < 4; i += 1) {
      await settled(server);
      server.clock.advance(1_000);
    }
    await settled(server);
    expect(sandbox.messages(LEADS_CHAT).filter((m) => m.reply_to_message_id === card)).toHaveLength(4);
    expect(botMessagesIn(VISITOR.id).filter((m) => m.text.startsWith('🤖'))).toHaveLength(1);
  });

  it('a service notice in the private chat (a pin, the auto-delete timer) is no message; a location and a sticker are, named in the group', async () => {
    const server = await boot({ polling: true });
    const { leadNumber } = await boundLead(server);
    const chat = { id: VISITOR.id, type: 'private', first_name: VISITOR.first_name };
    const notice = (extra: Record<string, unknown>, id: number) =>
      sandbox.state.pushUpdate({ message: { message_id: 9000 + id, date: 1, chat, from: VISITOR, ...extra } });
    notice({ pinned_message: { message_id: 1, date: 1, chat, text: 'x' } }, 1);
    notice({ message_auto_delete_timer_changed: { message_auto_delete_time: 86400 } }, 2);
    notice({ location: { latitude: 55.75, longitude: 37.62 } }, 3);
    notice({ sticker: { file_id: 'sticker-1', file_unique_id: 's1', width: 512, height: 512, is_animated: false } }, 4);
    sandbox.say(VISITOR.id, 'после', VISITOR);
    // A chat's messages are handled in order: once the text is stored, the ones before it were handled.
    await waitFor(async () => (await rows(server, leadNumber)).some((m) => m.text === 'после'), 10_000, 'the text stored');
    expect((await rows(server, leadNumber)).map((m) => [m.text, m.media])).toEqual([
      [null, 'other'],
      [null, 'sticker'],
      ['после', null],
    ]);
    // The group reads what they were in its own words.
    for (let i = 0; i < 3; i += 1) {
      await settled(server);
      server.clock.advance(1_000);
    }
    const header = `💬 Анна Ким (@anna_k) · заявка #${leadNumber}`;
    expect(
      sandbox
        .messages(LEADS_CHAT)
        .filter((m) => m.text.startsWith('💬'))
        .map((m) => m.text),
    ).toEqual([`${header}\n📎 вложение`, `${header}\n🙂 стикер`, `${header}\nпосле`]);
  });

  it('with LEADS_CARD_PII=0 the group gets only a notice; the text stays in the history', async () => {
    const server = await boot({ polling: true, env: { LEADS_CARD_PII: '0' } });
    const { leadNumber, card } = await boundLead(server);
    sandbox.say(VISITOR.id, 'мой телефон +7 999 000-00-00', VISITOR);
    await waitStored(server, leadNumber, 1);
    await settled(server);
    const relayed = sandbox.messages(LEADS_CHAT).filter((m) => m.reply_to_message_id === card);
    expect(relayed.map((m) => m.text)).toEqual([`💬 Новое сообщение по заявке #${leadNumber}`]);
    expect((await rows(server, leadNumber)).map((m) => [m.text, m.state])).toEqual([['мой телефон +7 999 000-00-00', 'delivered']]);
  });

  it('a person bound to no lead gets a short answer with the landing, at most once a minute; nothing is stored or relayed', async () => {
    const server = await boot({ polling: true, env: { LEADS_LANDING_URL: 'https://stickers.example.com' } });
    const first = sandbox.say(STRANGER.id, 'здравствуйте', STRANGER);
    await waitFor(() => botMessagesIn(STRANGER.id).find((m) => m.reply_to_message_id === first), 5000, 'the answer');
    sandbox.say(STRANGER.id, 'ау', STRANGER);
    // Handled (the bot confirmed the update) before the minute passes.
    await waitFor(() => sandbox.state.updates.length === 0, 5000, 'the update taken');
    server.clock.advance(60_000);
    const third = sandbox.say(STRANGER.id, 'ещё раз', STRANGER);
    await waitFor(() => botMessagesIn(STRANGER.id).find((m) => m.reply_to_message_id === third), 5000, 'the answer a minute later');
    const answers = botMessagesIn(STRANGER.id);
    expect(answers).toHaveLength(2);
    expect(answers[0].text).toContain('https://stickers.example.com');
    expect(await server.db.db.selectFrom('lead_messages').selectAll().execute()).toEqual([]);
    await settled(server);
    expect(sandbox.messages(LEADS_CHAT).filter((m) => m.text.includes('💬'))).toEqual([]);
  });
});

describe('the link', () => {
  it('opened again by the account it bound: the bot confirms the lead again; by another account: refused', async () => {
    const server = await boot({ polling: true });
    const body = lead({ telegram: '@anna_k' });
    const created = await postLead(server, body);
    const leadNumber = created.body.lead_number as number;
    await settled(server);
    const payload = LINK.exec(String(created.body.telegram_link))![1];
    const bound = await memberActions(sandbox).command(VISITOR.id, `/start ${payload}`, VISITOR);
    expect(bound).toContain(`#${leadNumber}`);
    // Telegram sends "/start <payload>" again each time the link is tapped in a chat that is already open: which lead
    // the chat is about, not the first thanks again (the lead may be long closed by then).
    expect(await memberActions(sandbox).command(VISITOR.id, `/start ${payload}`, VISITOR)).toBe(
      `Вы на связи по заявке #${leadNumber}: пишите сюда, менеджер ответит здесь же.`,
    );
    expect(await memberActions(sandbox).command(STRANGER.id, `/start ${payload}`, STRANGER)).toContain('не работает');
    const links = await server.db.db.selectFrom('telegram_links').select(['tg_user_id']).where('lead_id', '=', leadNumber).execute();
    expect(links).toEqual([{ tg_user_id: VISITOR.id }]);
    const events = await server.db.db.selectFrom('lead_events').select('kind').where('lead_id', '=', leadNumber).execute();
    expect(events.filter((e) => e.kind === 'telegram_bound')).toHaveLength(1);
    // Stopped, their own link tapped again binds them again, as /start does; to anyone else it stays used.
    await memberActions(sandbox).command(VISITOR.id, '/stop', VISITOR);
    expect(await memberActions(sandbox).command(STRANGER.id, `/start ${payload}`, STRANGER)).toContain('не работает');
    expect(await memberActions(sandbox).command(VISITOR.id, `/start ${payload}`, VISITOR)).toBe(
      `Снова на связи по заявке #${leadNumber}: пишите сюда, менеджер ответит здесь же.`,
    );
  });
});

describe('/start without a link', () => {
  it("once bound (the bot's Restart button sends it): the lead the chat writes about, not the invitation to bind", async () => {
    const server = await boot({ polling: true });
    expect(await memberActions(sandbox).command(VISITOR.id, '/start', VISITOR)).toMatch(/^Здравствуйте! Чтобы связать этот чат с заявкой/);
    const { leadNumber } = await boundLead(server);
    expect(await memberActions(sandbox).command(VISITOR.id, '/start', VISITOR)).toBe(
      `Вы на связи по заявке #${leadNumber}: пишите сюда, менеджер ответит здесь же.`,
    );
  });
});

describe('several leads, one chat', () => {
  it("a person bound to two leads writes into the latest; another lead's button sends their messages there", async () => {
    const server = await boot({ polling: true });
    const first = await boundLead(server);
    const second = await boundLead(server, { telegram: '@anna_second', phone: '+79990001122' });
    expect(second.leadNumber).not.toBe(first.leadNumber);
    // The answer to the second /start says where the chat writes, with a button per lead.
    const answer = botMessagesIn(VISITOR.id).at(-1)!;
    expect(answer.text).toContain(`по заявке #${second.leadNumber}`);
    const buttons = answer.reply_markup!.inline_keyboard.flat() as { text: string; callback_data: string }[];
    expect(buttons.map((b) => b.callback_data)).toEqual([`talk:${first.leadNumber}`, `talk:${second.leadNumber}`]);

    sandbox.say(VISITOR.id, 'про вторую заявку', VISITOR);
    await waitStored(server, second.leadNumber, 1);
    expect(await memberActions(sandbox).press(VISITOR.id, answer.message_id, `talk:${first.leadNumber}`, VISITOR)).toBe(
      `Теперь сообщения идут по заявке #${first.leadNumber}.`,
    );
    // The message pressed names the lead chosen now, with its buttons, rather than the one before; the answer to /start
    // above it stays.
    const rewritten = sandbox.state.message(VISITOR.id, answer.message_id)!;
    expect(rewritten.text).toBe(
      `Спасибо! Это ваша заявка #${second.leadNumber}. Менеджер получил её и напишет вам сюда, в этот чат.\n\n` +
        `Вы оставили несколько заявок: сообщения из этого чата идут по заявке #${first.leadNumber}. Чтобы писать по другой, нажмите её кнопку.`,
    );
    const kept = rewritten.reply_markup!.inline_keyboard.flat() as { callback_data: string }[];
    expect(kept.map((b) => b.callback_data)).toEqual([`talk:${first.leadNumber}`, `talk:${second.leadNumber}`]);
    // The lead named already, pressed again: the same answer, nothing to rewrite, nothing logged.
    expect(await memberActions(sandbox).press(VISITOR.id, answer.message_id, `talk:${first.leadNumber}`, VISITOR)).toBe(
      `Теперь сообщения идут по заявке #${first.leadNumber}.`,
    );
    expect(server.logger.lines.filter((l) => l.includes('the choice not rewritten'))).toEqual([]);
    sandbox.say(VISITOR.id, 'про первую заявку', VISITOR);
    expect((await waitStored(server, first.leadNumber, 1)).map((m) => m.text)).toEqual(['про первую заявку']);
    expect((await rows(server, second.leadNumber)).map((m) => m.text)).toEqual(['про вторую заявку']);

    // A lead the person is not bound to (or no longer: /stop) cannot be chosen.
    expect(await memberActions(sandbox).press(VISITOR.id, answer.message_id, 'talk:999', VISITOR)).toBe(
      'По этой заявке здесь больше нельзя писать.',
    );
  });

  it("a reply to the team's message of one lead goes to that lead, whichever the chat writes about", async () => {
    const server = await boot({ polling: true });
    const first = await boundLead(server);
    const second = await boundLead(server, { telegram: '@anna_second', phone: '+79990001122' });
    sandbox.say(LEADS_CHAT, 'Какой размер нужен?', DEFAULT_USER, undefined, { reply_to_message_id: first.card });
    await waitStored(server, first.leadNumber, 1);
    server.clock.advance(1_000);
    await settled(server);
    const question = botMessagesIn(VISITOR.id).find((m) => m.text === 'Какой размер нужен?')!;
    sandbox.say(VISITOR.id, '10 см', VISITOR, undefined, { reply_to_message_id: question.message_id });
    sandbox.say(VISITOR.id, 'а по второй заявке всё в силе', VISITOR);
    // A chat's messages are handled in order: once the second is stored, the first was.
    const stored = async () => (await rows(server, second.leadNumber)).some((m) => m.text === 'а по второй заявке всё в силе');
    await waitFor(stored, 10_000, 'the second message stored');
    expect((await rows(server, first.leadNumber)).map((m) => [m.direction, m.text])).toEqual([
      ['out', 'Какой размер нужен?'],
      ['in', '10 см'],
    ]);
    expect((await rows(server, second.leadNumber)).map((m) => m.text)).toEqual(['а по второй заявке всё в силе']);
    server.clock.advance(1_000);
    await settled(server);
    expect(sandbox.messages(LEADS_CHAT).filter((m) => m.reply_to_message_id === first.card && m.text.includes('10 см'))).toHaveLength(1);
  });
});

describe('crash safety', () => {
  it('a message handled twice (its update delivered again after a crash) is stored and relayed once', async () => {
    const server = await boot({ polling: true });
    const { leadNumber, card } = await boundLead(server);
    const messageId = sandbox.say(VISITOR.id, 'один раз', VISITOR);
    await waitStored(server, leadNumber, 1);
    const again = {
      chatId: String(VISITOR.id),
      messageId,
      from: { id: VISITOR.id, username: 'anna_k', first_name: 'Анна', last_name: 'Ким' },
    };
    expect(await server.app.get(MessagesService).fromVisitor({ ...again, text: 'один раз', media: null })).toBeNull();
    await settled(server);
    expect((await rows(server, leadNumber)).map((m) => m.text)).toEqual(['один раз']);
    expect(sandbox.messages(LEADS_CHAT).filter((m) => m.reply_to_message_id === card && m.text.includes('один раз'))).toHaveLength(1);
    const queued = await server.db.db.selectFrom('outbox').select('id').where('kind', '=', 'visitor_message').execute();
    expect(queued).toHaveLength(1);
  });
});

describe('the database fails', () => {
  const locked = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

  it('a message the server cannot store is answered "send it again" (the visitor\'s, a member\'s reply); sent again, it goes through', async () => {
    const server = await boot({ polling: true });
    const { leadNumber, card } = await boundLead(server);
    const messages = server.app.get(LeadMessagesRepository);
    const failed = 'Бот не смог сохранить это сообщение';

    jest.spyOn(messages, 'add').mockRejectedValueOnce(locked());
    const lost = sandbox.say(VISITOR.id, 'первая попытка', VISITOR);
    const answer = await waitFor(() => botMessagesIn(VISITOR.id).find((m) => m.reply_to_message_id === lost), 5000, 'the answer');
    expect(answer.text).toContain(failed);
    sandbox.say(VISITOR.id, 'вторая попытка', VISITOR);
    expect((await waitStored(server, leadNumber, 1)).map((m) => m.text)).toEqual(['вторая попытка']);

    jest.spyOn(messages, 'add').mockRejectedValueOnce(locked());
    const reply = sandbox.say(LEADS_CHAT, 'Здравствуйте!', DEFAULT_USER, undefined, { reply_to_message_id: card });
    const told = await waitFor(() => botMessagesIn(LEADS_CHAT).find((m) => m.reply_to_message_id === reply), 5000, 'the group told');
    expect(told.text).toContain(failed);
    expect((await rows(server, leadNumber)).map((m) => m.text)).toEqual(['вторая попытка']);
  });
});

describe('team → visitor', () => {
  it("a member's reply to the card and to a relayed message reaches the visitor; the group sees 👍", async () => {
    const server = await boot({ polling: true });
    const { leadNumber, card } = await boundLead(server);
    sandbox.say(VISITOR.id, 'Есть вопрос', VISITOR);
    await waitStored(server, leadNumber, 1);
    await settled(server);
    const relayed = sandbox.messages(LEADS_CHAT).find((m) => m.reply_to_message_id === card)!;
    const toCard = sandbox.say(LEADS_CHAT, 'Здравствуйте, Анна!', DEFAULT_USER, undefined, { reply_to_message_id: card });
    await waitStored(server, leadNumber, 2);
    await settled(server);
    const toRelayed = sandbox.say(LEADS_CHAT, 'макет', DEFAULT_USER, undefined, {
      reply_to_message_id: relayed.message_id,
      document: true,
    });
    await waitStored(server, leadNumber, 3);
    server.clock.advance(1_000);
    await settled(server);
    const inPrivate = botMessagesIn(VISITOR.id).filter((m) => !m.reply_to_message_id);
    expect(inPrivate.map((m) => m.text)).toEqual(['Здравствуйте, Анна!', 'макет']);
    expect(inPrivate[1].document).toBeDefined();
    expect(sandbox.state.message(LEADS_CHAT, toCard)?.reactions).toEqual(['👍']);
    expect(sandbox.state.message(LEADS_CHAT, toRelayed)?.reactions).toEqual(['👍']);
    const messages = await rows(server, leadNumber);
    expect(messages.map((m) => [m.direction, m.text, m.media, m.state, m.author_name])).toEqual([
      ['in', 'Есть вопрос', null, 'delivered', 'Анна Ким (@anna_k)'],
      ['out', 'Здравствуйте, Анна!', null, 'delivered', 'Мария Менеджер'],
      ['out', 'макет', 'document', 'delivered', 'Мария Менеджер'],
    ]);
  });

  it.each([
    ['the account with the username the form gave, bound first', '@anna_k', VISITOR.id],
    ['the latest bound when none has that username', '@anna_kim', STRANGER.id],
  ])(
    'two accounts bound to one lead: a reply to a relayed message goes to its author; to the card, %s',
    async (_, telegram, cardReader) => {
      const server = await boot({ polling: true });
      const phone = '+79161234567';
      const { leadNumber, card } = await boundLead(server, { telegram, phone });
      // The form sent again with the same phone (a repeat) answers with a second link to the same lead, and another
      // account opens it: a stranger who knows the phone, or the visitor from another account.
      const again = await postLead(server, lead({ telegram: '@oleg_x', phone }));
      expect(again.body.lead_number).toBe(leadNumber);
      const payload = LINK.exec(String(again.body.telegram_link))![1];
      server.clock.advance(60_000);
      expect(await memberActions(sandbox).command(STRANGER.id, `/start ${payload}`, STRANGER)).toContain(`#${leadNumber}`);
      sandbox.say(VISITOR.id, 'Вопрос от Анны', VISITOR);
      await waitStored(server, leadNumber, 1);
      await settled(server);
      const relayed = sandbox.messages(LEADS_CHAT).find((m) => m.reply_to_message_id === card && m.text.includes('Вопрос от Анны'))!;
      sandbox.say(LEADS_CHAT, 'Анна, ответ вам лично', DEFAULT_USER, undefined, { reply_to_message_id: relayed.message_id });
      await waitStored(server, leadNumber, 2);
      sandbox.say(LEADS_CHAT, 'Ответ по заявке', DEFAULT_USER, undefined, { reply_to_message_id: card });
      await waitStored(server, leadNumber, 3);
      for (let i = 0; i < 2; i += 1) {
        await settled(server);
        server.clock.advance(1_000);
      }
      await settled(server);
      const textsTo = (id: number) =>
        botMessagesIn(id)
          .filter((m) => !m.reply_to_message_id && !m.text.includes(`#${leadNumber}`))
          .map((m) => m.text);
      const other = cardReader === VISITOR.id ? STRANGER.id : VISITOR.id;
      expect(textsTo(cardReader)).toEqual(cardReader === VISITOR.id ? ['Анна, ответ вам лично', 'Ответ по заявке'] : ['Ответ по заявке']);
      expect(textsTo(other)).toEqual(other === VISITOR.id ? ['Анна, ответ вам лично'] : []);
      expect((await rows(server, leadNumber)).map((m) => [m.direction, m.to_tg_id, m.state])).toEqual([
        ['in', null, 'delivered'],
        ['out', VISITOR.id, 'delivered'],
        ['out', null, 'delivered'],
      ]);
      // The card names the same account.
      const shown = sandbox.state.message(LEADS_CHAT, card)!.text;
      expect(shown).toContain(cardReader === VISITOR.id ? 'Telegram подтверждён: @anna_k' : 'Telegram подтверждён: Олег');
    },
  );

  it('two accounts bound to one lead: one that blocked the bot blocks only its own replies', async () => {
    const server = await boot({ polling: true });
    // A username neither account has: the card's account is the latest bound.
    const { leadNumber, card } = await boundLead(server, { telegram: '@anna_kim' });
    const payload = LINK.exec(String((await postLead(server, lead({ telegram: '@anna_kim' }))).body.telegram_link))![1];
    server.clock.advance(1_000);
    await memberActions(sandbox).command(STRANGER.id, `/start ${payload}`, STRANGER);
    sandbox.say(VISITOR.id, 'Вопрос от Анны', VISITOR);
    await waitStored(server, leadNumber, 1);
    await settled(server);
    const relayed = sandbox.messages(LEADS_CHAT).find((m) => m.reply_to_message_id === card && m.text.includes('Вопрос от Анны'))!;
    sandbox.state.blocked.add(VISITOR.id);
    sandbox.say(LEADS_CHAT, 'Анна?', DEFAULT_USER, undefined, { reply_to_message_id: relayed.message_id });
    await waitStored(server, leadNumber, 2);
    await settled(server);
    expect((await rows(server, leadNumber)).map((m) => m.error)).toEqual([null, 'the visitor blocked the bot']);
    // The card speaks of the latest bound account, who still gets the replies to it.
    sandbox.say(LEADS_CHAT, 'Всем по заявке', DEFAULT_USER, undefined, { reply_to_message_id: card });
    await waitStored(server, leadNumber, 3);
    server.clock.advance(1_000);
    await settled(server);
    expect(botMessagesIn(STRANGER.id).map((m) => m.text)).toContain('Всем по заявке');
    expect(sandbox.state.message(LEADS_CHAT, card)?.text).not.toContain('⛔');
  });

  it('a blocked bot: failed, not retried, the card and the group say so', async () => {
    const server = await boot({ polling: true });
    const { leadNumber, card } = await boundLead(server);
    sandbox.state.blocked.add(VISITOR.id);
    const reply = sandbox.say(LEADS_CHAT, 'Добрый день', DEFAULT_USER, undefined, { reply_to_message_id: card });
    await waitStored(server, leadNumber, 1);
    await settled(server);
    expect((await rows(server, leadNumber)).map((m) => [m.state, m.error])).toEqual([['failed', 'the visitor blocked the bot']]);
    const notice = sandbox.messages(LEADS_CHAT).find((m) => m.reply_to_message_id === reply && m.from.is_bot);
    expect(notice?.text).toBe('⚠️ Не доставлено посетителю: он заблокировал бота');
    await settled(server);
    expect(sandbox.state.message(LEADS_CHAT, card)?.text).toContain('⛔ Посетитель заблокировал бота');
    const row = await server.db.db.selectFrom('outbox').selectAll().where('kind', '=', 'team_message').executeTakeFirstOrThrow();
    expect([row.done_at !== null, row.outcome, row.attempts]).toEqual([true, 'failed', 0]);
    expect(sandbox.state.calls.filter((c) => c.method === 'copyMessage' && String(c.params.chat_id) === String(VISITOR.id))).toHaveLength(
      1,
    );
  });

  it('a blocked bot: once the visitor writes again, the mark leaves the card of each of their leads', async () => {
    const server = await boot({ polling: true });
    const first = await boundLead(server);
    const second = await boundLead(server, { telegram: '@anna_second', phone: '+79990001122' });
    sandbox.state.blocked.add(VISITOR.id);
    for (const { leadNumber, card } of [first, second]) {
      sandbox.say(LEADS_CHAT, 'Добрый день', DEFAULT_USER, undefined, { reply_to_message_id: card });
      await waitStored(server, leadNumber, 1);
      await settled(server);
      server.clock.advance(1_000);
      await settled(server);
      expect(sandbox.state.message(LEADS_CHAT, card)?.text).toContain('⛔ Посетитель заблокировал бота');
    }
    sandbox.state.blocked.delete(VISITOR.id);
    sandbox.say(VISITOR.id, 'Простите, я снова здесь', VISITOR);
    await waitStored(server, second.leadNumber, 2);
    for (const { card } of [first, second]) {
      await settled(server);
      expect(sandbox.state.message(LEADS_CHAT, card)?.text).not.toContain('⛔');
    }
    // The team's next reply under the first card reaches the visitor.
    sandbox.say(LEADS_CHAT, 'Отлично!', DEFAULT_USER, undefined, { reply_to_message_id: first.card });
    await waitStored(server, first.leadNumber, 2);
    server.clock.advance(1_000);
    await settled(server);
    expect(botMessagesIn(VISITOR.id).map((m) => m.text)).toContain('Отлично!');

    // Blocked again, then the bot's Restart button (a bare /start) clears it too.
    sandbox.state.blocked.add(VISITOR.id);
    sandbox.say(LEADS_CHAT, 'Вы тут?', DEFAULT_USER, undefined, { reply_to_message_id: first.card });
    await waitStored(server, first.leadNumber, 3);
    server.clock.advance(1_000);
    await settled(server);
    server.clock.advance(1_000);
    await settled(server);
    expect(sandbox.state.message(LEADS_CHAT, first.card)?.text).toContain('⛔');
    sandbox.state.blocked.delete(VISITOR.id);
    await memberActions(sandbox).command(VISITOR.id, '/start', VISITOR);
    await settled(server);
    expect(sandbox.state.message(LEADS_CHAT, first.card)?.text).not.toContain('⛔');
  });

  it('a blocked bot, unblocked without a word: the next reply is delivered and the mark leaves the card', async () => {
    const server = await boot({ polling: true });
    const { leadNumber, card } = await boundLead(server);
    sandbox.state.blocked.add(VISITOR.id);
    sandbox.say(LEADS_CHAT, 'Добрый день', DEFAULT_USER, undefined, { reply_to_message_id: card });
    await waitStored(server, leadNumber, 1);
    await settled(server);
    server.clock.advance(1_000);
    await settled(server);
    expect(sandbox.state.message(LEADS_CHAT, card)?.text).toContain('⛔');
    // Unblocked in Telegram's settings: the bot hears nothing until its next message goes through.
    sandbox.state.blocked.delete(VISITOR.id);
    sandbox.say(LEADS_CHAT, 'Вы тут?', DEFAULT_USER, undefined, { reply_to_message_id: card });
    await waitStored(server, leadNumber, 2);
    server.clock.advance(1_000);
    await settled(server);
    expect((await rows(server, leadNumber)).map((m) => m.state)).toEqual(['failed', 'delivered']);
    await settled(server);
    expect(sandbox.state.message(LEADS_CHAT, card)?.text).not.toContain('⛔');
  });

  it('/stop: the bot answers once, and the team replies then fail with the reason, kept with the lead, not retried', async () => {
    const server = await boot({ polling: true });
    const { leadNumber, card } = await boundLead(server);
    const stop = await memberActions(sandbox).command(VISITOR.id, '/stop', VISITOR);
    expect(stop).toContain(`#${leadNumber}`);
    await settled(server);
    expect(sandbox.state.message(LEADS_CHAT, card)?.text).toContain('🔕 Посетитель отписался');
    const reply = sandbox.say(LEADS_CHAT, 'Вы тут?', DEFAULT_USER, undefined, { reply_to_message_id: card });
    const line = await waitFor(() => sandbox.messages(LEADS_CHAT).find((m) => m.reply_to_message_id === reply && m.from.is_bot));
    expect(line.text).toBe('⚠️ Не доставлено посетителю: он отписался командой /stop');
    // The notice goes out before the outbox records the failure: the pass ends first.
    await settled(server);
    // Kept with the lead, failed with the reason (the inbox shows it); nothing more in the visitor's chat than the
    // answer to /stop, and a message of theirs after it is no message of the lead's.
    const kept = [{ text: 'Вы тут?', state: 'failed', error: 'the visitor stopped the conversation (/stop)' }];
    expect(await rows(server, leadNumber)).toEqual([expect.objectContaining(kept[0])]);
    const before = botMessagesIn(VISITOR.id).length;
    sandbox.say(VISITOR.id, 'передумала', VISITOR);
    await waitFor(() => botMessagesIn(VISITOR.id).length > before, 5000, 'the unbound answer');
    // Not "send a request on the site": the way back is /start.
    expect(botMessagesIn(VISITOR.id).at(-1)!.text).toBe(
      'Вы отписались командой /stop, поэтому сообщение не передано менеджеру. Чтобы снова писать ему здесь, отправьте /start.',
    );
    expect(botMessagesIn(VISITOR.id).map((m) => m.text)).not.toContain('Вы тут?');
    expect(await rows(server, leadNumber)).toEqual([expect.objectContaining(kept[0])]);
  });

  it('/start after /stop: the conversation runs again, its card without the mark, both ways', async () => {
    const server = await boot({ polling: true });
    const { leadNumber, card } = await boundLead(server);
    const { command } = memberActions(sandbox);
    expect(await command(VISITOR.id, '/stop', VISITOR)).toBe(
      `Хорошо, больше не будем писать вам здесь по заявке #${leadNumber}. Передумаете — отправьте /start.`,
    );
    await settled(server);
    expect(sandbox.state.message(LEADS_CHAT, card)?.text).toContain('🔕 Посетитель отписался');
    // A second /stop stops nothing more, and says how to undo the first.
    expect(await command(VISITOR.id, '/stop', VISITOR)).toBe(
      'Вы отписались командой /stop, поэтому сообщение не передано менеджеру. Чтобы снова писать ему здесь, отправьте /start.',
    );
    expect(await command(VISITOR.id, '/start', VISITOR)).toBe(
      `Снова на связи по заявке #${leadNumber}: пишите сюда, менеджер ответит здесь же.`,
    );
    await settled(server);
    expect(sandbox.state.message(LEADS_CHAT, card)?.text).not.toContain('🔕');
    sandbox.say(VISITOR.id, 'я передумала', VISITOR);
    await waitStored(server, leadNumber, 1);
    sandbox.say(LEADS_CHAT, 'Отлично!', DEFAULT_USER, undefined, { reply_to_message_id: card });
    await waitStored(server, leadNumber, 2);
    await settled(server);
    expect(botMessagesIn(VISITOR.id).map((m) => m.text)).toContain('Отлично!');
    // Running again, a second /start only says which lead the chat is about.
    expect(await command(VISITOR.id, '/start', VISITOR)).toBe(
      `Вы на связи по заявке #${leadNumber}: пишите сюда, менеджер ответит здесь же.`,
    );
  });

  it('a reply to the card of a lead no visitor is bound to: kept with the lead, failed with the reason, said in the group', async () => {
    const server = await boot({ polling: true });
    const leadNumber = (await postLead(server, lead())).body.lead_number as number;
    await settled(server);
    const card = sandbox.messages(LEADS_CHAT).find((m) => m.from.is_bot && m.text.includes(`#${leadNumber}`))!.message_id;
    const reply = sandbox.say(LEADS_CHAT, 'Борис, добрый день', DEFAULT_USER, undefined, { reply_to_message_id: card });
    const line = await waitFor(() => sandbox.messages(LEADS_CHAT).find((m) => m.reply_to_message_id === reply && m.from.is_bot));
    expect(line.text).toBe('⚠️ Не доставлено посетителю: он ещё не открыл бота по ссылке «Получить ответ в Telegram»');
    // A reply to that notice is one to the card too, once the pass that sent it has recorded it with the lead.
    await settled(server);
    const again = sandbox.say(LEADS_CHAT, 'Борис?', DEFAULT_USER, undefined, { reply_to_message_id: line.message_id });
    await waitFor(() => sandbox.messages(LEADS_CHAT).find((m) => m.reply_to_message_id === again && m.from.is_bot));
    await settled(server);
    expect(await rows(server, leadNumber)).toEqual([
      expect.objectContaining({ text: 'Борис, добрый день', direction: 'out', state: 'failed', error: 'no visitor is bound to the lead' }),
      expect.objectContaining({ text: 'Борис?', direction: 'out', state: 'failed', error: 'no visitor is bound to the lead' }),
    ]);
  });

  it('a burst of replies to one visitor goes out one a second', async () => {
    const server = await boot({ polling: true });
    const { leadNumber, card } = await boundLead(server);
    for (const text of ['раз', 'два', 'три']) sandbox.say(LEADS_CHAT, text, DEFAULT_USER, undefined, { reply_to_message_id: card });
    await waitStored(server, leadNumber, 3);
    const sent = () =>
      botMessagesIn(VISITOR.id)
        .filter((m) => !m.reply_to_message_id)
        .map((m) => m.text);
    await settled(server);
    expect(sent()).toEqual(['раз']);
    server.clock.advance(999);
    await settled(server);
    expect(sent()).toEqual(['раз']);
    server.clock.advance(1);
    await settled(server);
    expect(sent()).toEqual(['раз', 'два']);
    server.clock.advance(1_000);
    await settled(server);
    expect(sent()).toEqual(['раз', 'два', 'три']);
  });

  it('replies that come in one batch are handled one after another, in the order written', async () => {
    const server = await boot({ polling: true });
    const { leadNumber, card } = await boundLead(server);
    const service = server.app.get(MessagesService);
    const fromTeam = service.fromTeam.bind(service);
    const steps: string[] = [];
    jest.spyOn(service, 'fromTeam').mockImplementation(async (m) => {
      steps.push(`start ${m.text}`);
      try {
        return await fromTeam(m);
      } finally {
        steps.push(`end ${m.text}`);
      }
    });
    const chat = { id: LEADS_CHAT, type: 'supergroup', title: 'Leads' };
    const date = Math.floor(Date.now() / 1000);
    const reply = (n: number, text: string) => ({
      update_id: 900_000 + n,
      message: { message_id: 900_000 + n, date, chat, from: DEFAULT_USER, text, reply_to_message: { message_id: card, date, chat } },
    });
    // As telegraf's polling handles a getUpdates batch: every update at once.
    const gateway = server.app.get(TelegramGateway);
    await Promise.all(['раз', 'два', 'три'].map((text, n) => gateway.handleUpdate(reply(n, text))));
    expect(steps).toEqual(['start раз', 'end раз', 'start два', 'end два', 'start три', 'end три']);
    expect((await rows(server, leadNumber)).map((r) => r.text)).toEqual(['раз', 'два', 'три']);
  });
});

describe('erasure', () => {
  it('/stickers_forget by contact removes the messages and the binding; a later message is not relayed', async () => {
    const server = await boot({ polling: true });
    const { leadNumber, card } = await boundLead(server);
    sandbox.say(VISITOR.id, 'первое', VISITOR);
    await waitStored(server, leadNumber, 1);
    await settled(server);
    expect(await memberActions(sandbox).command(LEADS_CHAT, '/stickers_forget @anna_k')).toContain(`#${leadNumber}`);
    expect(await server.db.db.selectFrom('telegram_links').select('tg_user_id').where('lead_id', '=', leadNumber).execute()).toEqual([
      { tg_user_id: null },
    ]);
    expect(await rows(server, leadNumber)).toEqual([]);
    const after = sandbox.say(VISITOR.id, 'второе', VISITOR);
    await waitFor(() => botMessagesIn(VISITOR.id).find((m) => m.reply_to_message_id === after), 5000, 'the unbound answer');
    await settled(server);
    expect(await rows(server, leadNumber)).toEqual([]);
    expect(sandbox.messages(LEADS_CHAT).filter((m) => m.reply_to_message_id === card && m.text.includes('второе'))).toEqual([]);
  });
});

describe('erasure meets a message', () => {
  it('a lead erased while a message to it is on its way: nothing is stored on the erased lead', async () => {
    const server = await boot({ polling: true });
    const { leadNumber, card } = await boundLead(server);
    const repository = server.app.get(LeadMessagesRepository);
    const latestLeadOf = repository.latestLeadOf.bind(repository);
    // The erasure (a manager in the inbox) commits right after the message found its lead.
    jest.spyOn(repository, 'latestLeadOf').mockImplementationOnce(async (userId) => {
      const found = await latestLeadOf(userId);
      expect(await server.app.get(AnonymisationService).forget(leadNumber)).toBe('done');
      return found;
    });
    const sent = sandbox.say(VISITOR.id, 'мой адрес: ул. Ленина, 1', VISITOR);
    // The visitor is told the chat is bound to no lead, as for any message after an erasure.
    await waitFor(() => botMessagesIn(VISITOR.id).find((m) => m.reply_to_message_id === sent), 5000, 'the unbound answer');
    await settled(server);
    expect(await rows(server, leadNumber)).toEqual([]);
    expect(sandbox.messages(LEADS_CHAT).filter((m) => m.reply_to_message_id === card && m.text.includes('Ленина'))).toEqual([]);
  });
});

describe('the story of the lead', () => {
  const receiver = new WebhookReceiver();
  beforeAll(() => receiver.start());
  afterAll(() => receiver.stop());

  it('integrators get lead.message (no text); the trace shows one line per message (no text)', async () => {
    const server = await boot({
      polling: true,
      env: { LEADS_WEBHOOK_URL: receiver.url, LEADS_WEBHOOK_SECRET: 'whsec_test_0123456789abcdef' },
    });
    const { leadNumber, card, requestId } = await boundLead(server);
    sandbox.say(VISITOR.id, 'секретный текст', VISITOR, undefined, { photo: true });
    await waitStored(server, leadNumber, 1);
    sandbox.say(LEADS_CHAT, 'ответ', DEFAULT_USER, undefined, { reply_to_message_id: card });
    await waitStored(server, leadNumber, 2);
    await settled(server);
    const events = receiver.received.map((r) => r.body).filter((b) => b.type === 'lead.message');
    expect(events.map((e) => e.data.message)).toEqual([
      { id: expect.any(Number), direction: 'in', media: 'photo' },
      { id: expect.any(Number), direction: 'out', media: null },
    ]);
    expect(events[0].data.lead.lead_number).toBe(leadNumber);
    expect(JSON.stringify(events)).not.toContain('секретный текст');

    const traced = await fetch(`${server.url}/leads/${requestId}/trace`, { headers: { [SECRET_HEADER]: SECRET } });
    const trace = (await traced.json()) as { messages: unknown[] };
    expect(trace.messages).toEqual([
      { at: expect.any(Number), direction: 'in', media: 'photo', state: 'delivered', error: null },
      { at: expect.any(Number), direction: 'out', media: null, state: 'delivered', error: null },
    ]);
    expect(JSON.stringify(trace)).not.toContain('секретный текст');
  });
});
