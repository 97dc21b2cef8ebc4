/**
 * `npm run leads -- setup` (docs/requirements.md §16.1) against the sandbox, over HTTP: the operator's actions are
 * updates the test causes in the sandbox (the bot added to a group, a message in a topic, the press of the test card);
 * setup waits for them, prints the lines of .env, checks the bot's rights, and leaves the updates confirmed.
 */
import { PassThrough } from 'node:stream';
import { BOT_USER, DEFAULT_USER, startSandbox, type TelegramSandbox } from '@stickers/telegram-sandbox';
import type { CliIo } from '../src/cli/cli-io';
import { runCli } from '../src/cli/program';
import { refusingOps } from './support/cli-ops';
import { callBotApi, waitFor } from './harness';

let sandbox: TelegramSandbox;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.stop());
afterEach(() => sandbox.state.reset());

const OPS = refusingOps('not a setup command');

/**
 * Runs setup in this process with the sandbox's token: its lines, a wait for a line, and its exit code. Without a
 * terminal (no `stdin`) and without --chat or --from in `args`, it runs as the sandbox's default user (--from).
 */
function setup(args: string[], env: Record<string, string> = {}, stdin?: CliIo['stdin']) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    env: { TELEGRAM_BOT_TOKEN: sandbox.token, TELEGRAM_API_ROOT: sandbox.url, ...env },
    ...(stdin ? { stdin } : {}),
  };
  const named = stdin || args.includes('--chat') || args.includes('--from') || args.includes('--bare');
  const given = args.filter((a) => a !== '--bare');
  const done = runCli(['setup', '--timeout', '20', ...(named ? [] : ['--from', String(DEFAULT_USER.id)]), ...given], io, OPS);
  return {
    out,
    err,
    done,
    line: (re: RegExp) => waitFor(() => out.find((l) => re.test(l)), 10_000, `the line ${re}`),
  };
}

/** The test card setup sent to a chat, once it is there. */
function testCard(chatId: number) {
  return waitFor(() => sandbox.messages(chatId).find((m) => m.text.startsWith('🧪 Проверочная карточка')), 10_000, 'the test card');
}

/** A forum with the bot in it (`role`): topic 10 for the leads, topic 20 for the admins. */
function forum(title: string, role: 'member' | 'administrator') {
  const chat = sandbox.addChat({
    title,
    type: 'supergroup',
    is_forum: true,
    topics: [
      { id: 10, name: 'Заявки' },
      { id: 20, name: 'Админы' },
    ],
  });
  sandbox.addBot(chat.id, role);
  return chat;
}

/** Setup handed polling back: nothing it read waits again, and no poll of its own is still open. */
function handedBack(): void {
  expect(sandbox.state.updates).toEqual([]);
  expect(sandbox.polls.filter((p) => p.status === 0)).toEqual([]);
  expect(sandbox.polls.at(-1)).toMatchObject({ timeout: 0, status: 200 });
  expect(sandbox.state.webhook).toBeNull();
}

describe('setup finds the chat from what the operator does', () => {
  it('the bot added to a group while setup waits: LEADS_CHAT_ID, the rights, a test card whose press comes back', async () => {
    const chat = sandbox.addChat({ title: 'Заявки с сайта', type: 'supergroup' });
    const run = setup(['--no-admin']);
    await run.line(/^ {3}Waiting up to 20 s/);
    sandbox.addBot(chat.id, 'administrator');
    const card = await testCard(chat.id);
    expect(card.reply_markup?.inline_keyboard[0][0].text).toBe('✅ Проверить кнопку');
    sandbox.press(chat.id, card.message_id, card.reply_markup!.inline_keyboard[0][0].callback_data!);
    expect(await run.done).toBe(0);

    expect(run.out).toContain(`LEADS_CHAT_ID=${chat.id}`);
    expect(run.out.filter((l) => /_ID=/.test(l))).toEqual([`LEADS_CHAT_ID=${chat.id}`]);
    expect(run.out).toContain(`ok    TELEGRAM_BOT_TOKEN: the bot @${BOT_USER.username} (id ${BOT_USER.id})`);
    expect(run.out).toContain(`ok    «Заявки с сайта» (${chat.id}): 2 members; the bot was added to it by Мария Менеджер (user id 501)`);
    expect(run.out).toContain(
      `ok    leads chat «Заявки с сайта» (${chat.id}): the bot is an administrator, may send and edit its messages`,
    );
    expect(run.out).toContain('ok    buttons: the press of Мария Менеджер reached the bot');
    expect(run.out.filter((l) => l.startsWith('FAIL'))).toEqual([]);
    expect(run.err).toEqual([]);
    // The card says the check passed and has no button left; the press was answered.
    expect(sandbox.messages(chat.id).find((m) => m.message_id === card.message_id)).toMatchObject({
      text: expect.stringMatching(/^✅ Проверочная карточка/),
      reply_markup: { inline_keyboard: [] },
    });
    expect(sandbox.state.callbackAnswers.map((a) => a.text)).toEqual(['✅ Кнопка работает: нажатие дошло до бота']);
    handedBack();
  });

  it('a forum: the bot added before setup starts, the topic from a message in it, the admin chat another topic', async () => {
    const chat = forum('Студия', 'member');
    const run = setup([]);
    await run.line(/has topics: send \/stickers_chatid in the topic/);
    sandbox.say(chat.id, '/stickers_chatid', DEFAULT_USER, 10);
    await run.line(/^2\. The admin chat/);
    // The leads topic itself is not the admin chat: setup says so and waits on.
    sandbox.say(chat.id, '/stickers_chatid', DEFAULT_USER, 10);
    await run.line(/that is the leads topic/);
    sandbox.say(chat.id, '/stickers_chatid', DEFAULT_USER, 20);
    const card = await testCard(chat.id);
    expect(card.message_thread_id).toBe(10);
    sandbox.press(chat.id, card.message_id, card.reply_markup!.inline_keyboard[0][0].callback_data!);
    expect(await run.done).toBe(0);

    expect(run.out.filter((l) => /^[A-Z_]+_ID=/.test(l))).toEqual([
      `LEADS_CHAT_ID=${chat.id}`,
      'LEADS_THREAD_ID=10',
      `ADMIN_CHAT_ID=${chat.id}`,
      'ADMIN_THREAD_ID=20',
    ]);
    expect(run.out).toContain('ok    topic 10 of «Студия»');
    expect(run.out).toContain(`ok    leads chat «Студия» (${chat.id}), topic 10: the bot is a member, may send and edit its messages`);
    expect(run.out).toContain('note  leads chat: the bot may not manage topics (not needed to post in an open topic)');
    expect(sandbox.topicMessages(chat.id, 20).map((m) => m.text)).toEqual([
      '/stickers_chatid',
      '🧪 Stickers Leads: проверка чата админов. Сюда придут оповещения и ежедневная сводка.',
    ]);
    handedBack();
  });
});

/** A stranger who adds the bot to a group of their own while setup waits. */
const STRANGER = { id: 666, is_bot: false, first_name: 'Незнакомец' };

/** A pretend terminal: what setup reads as the operator's answers, one line each. */
function terminal() {
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  return { stdin, answer: (text: string) => stdin.write(`${text}\n`) };
}

/** Presses the test card's button once it is there. */
async function pressTestCard(chatId: number) {
  const card = await testCard(chatId);
  sandbox.press(chatId, card.message_id, card.reply_markup!.inline_keyboard[0][0].callback_data!);
}

describe('setup speaks the language of LEADS_LOCALE in the chats', () => {
  it('LEADS_LOCALE=en: the admin chat message, the test card, its button, the answer to the press and the card after it', async () => {
    const chat = forum('Studio', 'administrator');
    const run = setup([], { LEADS_LOCALE: 'en' });
    await run.line(/has topics: send \/stickers_chatid in the topic/);
    sandbox.say(chat.id, '/stickers_chatid', DEFAULT_USER, 10);
    await run.line(/^2\. The admin chat/);
    sandbox.say(chat.id, '/stickers_chatid', DEFAULT_USER, 20);
    const card = await waitFor(
      () => sandbox.messages(chat.id).find((m) => m.text.startsWith('🧪 Stickers Leads test card')),
      10_000,
      'the card',
    );
    expect(card.text).toBe('🧪 Stickers Leads test card\nPress the button: this is how setup checks that presses reach the bot.');
    expect(card.reply_markup?.inline_keyboard[0][0].text).toBe('✅ Check the button');
    await run.line(/^ {3}Press «✅ Check the button» under it\. Waiting up to 20 s/);
    expect(sandbox.topicMessages(chat.id, 20).map((m) => m.text)).toEqual([
      '/stickers_chatid',
      '🧪 Stickers Leads: checking the admin chat. Alerts and the daily digest will come here.',
    ]);
    sandbox.press(chat.id, card.message_id, card.reply_markup!.inline_keyboard[0][0].callback_data!);
    expect(await run.done).toBe(0);
    expect(sandbox.state.callbackAnswers.map((a) => a.text)).toEqual(['✅ The button works: the press reached the bot']);
    expect(sandbox.messages(chat.id).find((m) => m.message_id === card.message_id)?.text).toBe(
      '✅ Stickers Leads test card: the press (Мария Менеджер) reached the bot. You can delete it.',
    );
    handedBack();
  });
});

describe("setup takes only the operator's group, never the first one that shows up", () => {
  it('without a terminal and without --chat or --from: refused in one line after the token, before reading any update', async () => {
    const run = setup(['--bare']);
    expect(await run.done).toBe(1);
    expect(run.out.filter((l) => l.startsWith('FAIL'))).toEqual([
      "FAIL  without a terminal setup takes only the group you name: run it with --chat <the group's chat id> or --from <your Telegram user id> (then the group you add the bot to is taken, and nobody else's)",
    ]);
    expect(sandbox.state.calls.map((c) => c.method)).toEqual(['getMe']);
    expect(sandbox.polls).toEqual([]);
    // A wrong token is what it says then, not the missing --chat.
    const wrong = setup(['--bare'], { TELEGRAM_BOT_TOKEN: '123:not-the-token' });
    expect([await wrong.done, wrong.out]).toEqual([
      1,
      [
        'FAIL  TELEGRAM_BOT_TOKEN: Telegram does not know this token (401: Unauthorized): copy it again from @BotFather (/mybots → the bot → API Token)',
      ],
    ]);
  });

  it("--chat: a stranger's group that shows up first is ignored, the named one is taken", async () => {
    const theirs = sandbox.addChat({ title: 'Чужая группа', type: 'supergroup' });
    const ours = sandbox.addChat({ title: 'Наша группа', type: 'supergroup' });
    const run = setup(['--no-admin', '--chat', String(ours.id)]);
    await run.line(/^ {3}Waiting up to 20 s/);
    sandbox.addBot(theirs.id, 'administrator', undefined, STRANGER);
    await run.line(/not the chat of --chat/);
    sandbox.addBot(ours.id, 'administrator');
    await pressTestCard(ours.id);
    expect(await run.done).toBe(0);
    expect(run.out).toContain(
      `note  «Чужая группа» (${theirs.id}): the bot was added to it by Незнакомец (user id 666); not the chat of --chat ${ours.id}: ignored`,
    );
    expect(run.out.filter((l) => /_ID=/.test(l))).toEqual([`LEADS_CHAT_ID=${ours.id}`]);
    expect(sandbox.messages(theirs.id)).toEqual([]);
  });

  it("--from: the group that user adds the bot to is taken; a stranger's, added first, is not", async () => {
    const theirs = sandbox.addChat({ title: 'Чужая группа', type: 'supergroup' });
    const ours = sandbox.addChat({ title: 'Наша группа', type: 'supergroup', member_count: 12 });
    const run = setup(['--no-admin', '--from', String(DEFAULT_USER.id)]);
    await run.line(/^ {3}Waiting up to 20 s/);
    sandbox.addBot(theirs.id, 'administrator', undefined, STRANGER);
    sandbox.say(theirs.id, '/stickers_chatid', STRANGER);
    sandbox.addBot(ours.id, 'administrator', undefined, DEFAULT_USER);
    await pressTestCard(ours.id);
    expect(await run.done).toBe(0);
    expect(run.out).toContain(
      `note  «Чужая группа» (${theirs.id}): the bot was added to it by Незнакомец (user id 666); not by --from 501: ignored`,
    );
    expect(run.out).toContain(`note  «Чужая группа» (${theirs.id}): Незнакомец (user id 666) wrote in it; not by --from 501: ignored`);
    expect(run.out).toContain(`ok    «Наша группа» (${ours.id}): 12 members; the bot was added to it by Мария Менеджер (user id 501)`);
    expect(run.out.filter((l) => /_ID=/.test(l))).toEqual([`LEADS_CHAT_ID=${ours.id}`]);
    expect(sandbox.messages(theirs.id).map((m) => m.text)).toEqual(['/stickers_chatid']);
  });

  it('at a terminal: the group, its member count and who added the bot are shown; "n" waits for another, "y" takes it', async () => {
    const theirs = sandbox.addChat({ title: 'Заявки Stickers', type: 'supergroup', member_count: 3400 });
    const ours = sandbox.addChat({ title: 'Наша группа', type: 'supergroup' });
    const tty = terminal();
    const run = setup(['--no-admin'], {}, tty.stdin);
    await run.line(/^ {3}Waiting up to 20 s/);
    sandbox.addBot(theirs.id, 'administrator', undefined, STRANGER);
    await run.line(/^Take it as the leads group\? \[y\/N\] $/);
    expect(run.out.at(-2)).toBe(`   «Заявки Stickers» (${theirs.id}): 3400 members; the bot was added to it by Незнакомец (user id 666)`);
    tty.answer('n');
    await run.line(/not taken: waiting for another group/);
    sandbox.addBot(ours.id, 'administrator');
    await waitFor(() => run.out.filter((l) => l.startsWith('Take it as')).length === 2 || undefined, 10_000, 'the second question');
    expect(run.out.at(-2)).toBe(`   «Наша группа» (${ours.id}): 2 members; the bot was added to it by Мария Менеджер (user id 501)`);
    tty.answer('y');
    await pressTestCard(ours.id);
    expect(await run.done).toBe(0);
    expect(run.out.filter((l) => /_ID=/.test(l))).toEqual([`LEADS_CHAT_ID=${ours.id}`]);
    expect(sandbox.messages(theirs.id)).toEqual([]);
  });

  it('a chat title that drives the terminal is shown escaped, on its one line', async () => {
    const title = '\u001b]0;pwned\u0007\u001b[2J\u001b[H\rok    «Заявки Stickers» (-100)\u202E\u2066\u200F';
    const chat = sandbox.addChat({ title, type: 'supergroup' });
    const run = setup(['--no-admin', '--timeout', '1']);
    await run.line(/^ {3}Waiting up to 1 s/);
    sandbox.addBot(chat.id, 'administrator');
    expect(await run.done).toBe(1);
    expect(run.out).toContain(
      `ok    «\\x1B]0;pwned\\x07\\x1B[2J\\x1B[H\\x0Dok    «Заявки Stickers» (-100)\\u202E\\u2066\\u200F» (${chat.id}): ` +
        '2 members; the bot was added to it by Мария Менеджер (user id 501)',
    );
    for (const line of run.out) expect(line).not.toMatch(/[\p{Cc}\p{Cf}]/u);
  });
});

describe('setup says what is wrong in one line and exits 1', () => {
  it('a wrong token', async () => {
    const run = setup([], { TELEGRAM_BOT_TOKEN: '123:not-the-token' });
    expect(await run.done).toBe(1);
    expect(run.out).toEqual([
      'FAIL  TELEGRAM_BOT_TOKEN: Telegram does not know this token (401: Unauthorized): copy it again from @BotFather (/mybots → the bot → API Token)',
    ]);
    expect(sandbox.polls).toEqual([]);
  });

  it('a token of the wrong form: refused before any call to Telegram, the token never printed', async () => {
    // Nothing listens on port 9: a request would fail there and its error would name its URL, the token in it.
    const run = setup([], { TELEGRAM_BOT_TOKEN: 'AA123', TELEGRAM_API_ROOT: 'http://127.0.0.1:9' });
    expect(await run.done).toBe(1);
    expect(run.err).toEqual([
      'TELEGRAM_BOT_TOKEN must look like 123456:ABC-DEF… (as BotFather gives it): copy it again from @BotFather (/mybots → the bot → API Token)',
    ]);
    expect(run.out).toEqual([]);
  });

  it("TELEGRAM_API_ROOT's password is never printed", async () => {
    const root = new URL(sandbox.url);
    root.username = 'apiuser';
    root.password = 'APIPASSWORD';
    // Nothing listens on port 9: the failed request names its URL.
    root.port = '9';
    const run = setup([], { TELEGRAM_API_ROOT: root.toString() });
    expect(await run.done).toBe(1);
    expect(run.out).toEqual([
      expect.stringMatching(/^FAIL {2}TELEGRAM_BOT_TOKEN: the token could not be checked: Telegram did not answer \(.*apiuser@/),
    ]);
    expect([...run.out, ...run.err].join('\n')).not.toContain('APIPASSWORD');
  });

  it('LEADS_LOCALE and TELEGRAM_TIMEOUT_MS it cannot read: a line each, nothing asked of Telegram', async () => {
    const run = setup([], { LEADS_LOCALE: 'english', TELEGRAM_TIMEOUT_MS: 'soon' });
    expect(await run.done).toBe(1);
    expect(run.err).toEqual([
      'TELEGRAM_TIMEOUT_MS must be a whole number from 100 to 120000 (got "soon")',
      'LEADS_LOCALE must be one of ru, en (got "english")',
    ]);
    expect(run.out).toEqual([]);
    expect(sandbox.polls).toEqual([]);
  });

  it('no token at all', async () => {
    const run = setup([], { TELEGRAM_BOT_TOKEN: '' });
    expect(await run.done).toBe(1);
    expect(run.err).toEqual([expect.stringMatching(/^TELEGRAM_BOT_TOKEN is not set: create a bot with @BotFather/)]);
  });

  it('a group where the bot may not write: the line says what to change, no test card', async () => {
    const chat = sandbox.addChat({ title: 'Только админы', type: 'supergroup', permissions: { can_send_messages: false } });
    sandbox.addBot(chat.id, 'member');
    const run = setup(['--no-admin']);
    expect(await run.done).toBe(1);
    expect(run.out).toContain(`LEADS_CHAT_ID=${chat.id}`);
    expect(run.out).toContain(
      `FAIL  leads chat «Только админы» (${chat.id}): members may not send messages in this group and the bot is a plain member: make it an administrator, or let members send messages (group settings → Permissions)`,
    );
    expect(sandbox.messages(chat.id)).toEqual([]);
    handedBack();
  });

  it('no group within the bound: a line, and nothing left open', async () => {
    const run = setup(['--timeout', '1']);
    expect(await run.done).toBe(1);
    expect(run.out.at(-1)).toBe(
      'FAIL  no group showed up within 1 s: add the bot to the group (or send /stickers_chatid there) and run setup again',
    );
    expect(sandbox.polls.filter((p) => p.status === 0)).toEqual([]);
  });

  it('a webhook is set: refused with a line, the webhook kept; --delete-webhook deletes it', async () => {
    await callBotApi(sandbox, 'setWebhook', { url: 'https://leads.example.com/telegram', secret_token: 'a-secret-of-16-chars' });
    const refused = setup([]);
    expect(await refused.done).toBe(1);
    expect(refused.out.at(-1)).toMatch(/^FAIL {2}a webhook is set: run setup with --delete-webhook/);
    expect(sandbox.state.webhook?.url).toBe('https://leads.example.com/telegram');

    const chat = sandbox.addChat({ title: 'Группа', type: 'supergroup', bot: { status: 'administrator' } });
    sandbox.say(chat.id, 'привет');
    const deleting = setup(['--delete-webhook', '--no-admin']);
    const card = await testCard(chat.id);
    sandbox.press(chat.id, card.message_id, card.reply_markup!.inline_keyboard[0][0].callback_data!);
    expect(await deleting.done).toBe(0);
    expect(deleting.out).toContain('ok    webhook deleted: the server sets it again when it starts in webhook mode');
    expect(deleting.out).toContain(`LEADS_CHAT_ID=${chat.id}`);
    handedBack();
  });

  it('presses that wait for the server are not taken from it', async () => {
    const chatId = -1001000000001;
    const card = await callBotApi<{ message_id: number }>(sandbox, 'sendMessage', {
      chat_id: chatId,
      text: 'карточка',
      reply_markup: { inline_keyboard: [[{ text: 'В работу', callback_data: 'lead:1:new:in_progress' }]] },
    });
    sandbox.press(chatId, card.message_id, 'lead:1:new:in_progress');
    const run = setup([]);
    expect(await run.done).toBe(1);
    expect(run.out.at(-1)).toBe(
      'FAIL  updates wait for the server: start it once so that it takes them, then run setup again (or pass --drop-pending)',
    );
    expect(sandbox.state.updates.map((u) => Object.keys(u))).toEqual([['update_id', 'callback_query']]);
  });
});
