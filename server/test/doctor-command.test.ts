/**
 * `npm run leads -- doctor` (docs/requirements.md §16.3) against the sandbox and a real database, over HTTP: one line
 * per check, a problem names the variable to fix, exit 1 on any problem.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOT_USER, DEFAULT_USER, startSandbox, type TelegramSandbox } from '@stickers/telegram-sandbox';
import BetterSqlite3 from 'better-sqlite3';
import type { CliIo } from '../src/cli/cli-io';
import { runCli } from '../src/cli/program';
import { refusingOps } from './support/cli-ops';
import { ADMIN_CHAT, LEADS_CHAT, callBotApi, freePort, startServer, tempDir, testEnv, waitFor, type TestServer } from './harness';
import { itSqliteOnly, onPostgres, postgresDatabaseFor } from './support/test-database';

const itPostgresOnly: jest.It = onPostgres ? it : it.skip;

let sandbox: TelegramSandbox;
let server: TestServer;
const tmp = tempDir();
const dbPath = join(tmp.dir, 'leads.sqlite');

beforeAll(async () => {
  sandbox = await startSandbox();
  // A deployment that ran once: its database exists and is migrated; POST /leads answers.
  server = await startServer({ dbPath, sandbox });
});
afterAll(async () => {
  await server.close();
  await sandbox.stop();
  tmp.remove();
});
afterEach(() => sandbox.state.reset());

const OPS = refusingOps('not the doctor');

/** The environment the server runs with here, changed by `env` (an empty value unsets a variable). */
async function deployment(env: Record<string, string> = {}): Promise<Record<string, string | undefined>> {
  const base: Record<string, string | undefined> = { ...testEnv({ dbPath, sandbox }), LEADS_ENDPOINT: `${server.url}/leads` };
  if (onPostgres) base.DATABASE_URL = await postgresDatabaseFor(dbPath);
  for (const [k, v] of Object.entries(env)) base[k] = v === '' ? undefined : v;
  return base;
}

async function doctor(env: Record<string, string> = {}) {
  const out: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => out.push(`stderr: ${l}`), env: await deployment(env) };
  const code = await runCli(['doctor'], io, OPS);
  return { code, out, problems: out.filter((l) => l.startsWith('FAIL')) };
}

describe('doctor on a configured deployment', () => {
  it('every check ok: exit 0, one line per check', async () => {
    const { code, out } = await doctor();
    const database = onPostgres
      ? /^ok {4}database: PostgreSQL postgres:\/\/.* reachable, migrated, takes writes$/
      : `ok    database: SQLite ${dbPath} reachable, migrated, takes writes`;
    expect(out).toEqual([
      'ok    config: every variable reads as the server reads it (' +
        (onPostgres ? 'PostgreSQL' : 'SQLite') +
        ', bot by polling, POST /leads on)',
      `ok    TELEGRAM_BOT_TOKEN: the bot @${BOT_USER.username} (id ${BOT_USER.id})`,
      `ok    LEADS_CHAT_ID=${LEADS_CHAT} «Заявки Stickers»: the bot is an administrator, may send and edit its messages`,
      `ok    ADMIN_CHAT_ID=${ADMIN_CHAT} «Stickers — админы»: the bot is an administrator, may send and edit its messages`,
      typeof database === 'string' ? database : expect.stringMatching(database),
      `ok    LEADS_ENDPOINT=${server.url}/leads: the server takes the landing's requests (an empty one answered 422, nothing stored)`,
      'doctor: no problem found',
    ]);
    expect(code).toBe(0);
    // Nothing was posted to any chat: the doctor only looks.
    expect(sandbox.messages(LEADS_CHAT)).toEqual([]);
  });

  it('a wrong token: its line, exit 1', async () => {
    const { code, problems } = await doctor({ TELEGRAM_BOT_TOKEN: '123:wrong-token' });
    expect(problems).toEqual([
      'FAIL  TELEGRAM_BOT_TOKEN: Telegram does not know this token (401: Unauthorized): copy it again from @BotFather',
    ]);
    expect(code).toBe(1);
  });

  it('an API root that is no Bot API (404): the line names TELEGRAM_API_ROOT beside the token, exit 1', async () => {
    const { code, problems } = await doctor({ TELEGRAM_API_ROOT: `${sandbox.url}/not-the-api` });
    expect(problems).toEqual([
      'FAIL  TELEGRAM_BOT_TOKEN: Telegram does not know this token, or TELEGRAM_API_ROOT is no Bot API (404: Not Found): ' +
        'copy the token again from @BotFather, or check TELEGRAM_API_ROOT',
    ]);
    expect(code).toBe(1);
  });

  it('a chat the bot is not in: LEADS_CHAT_ID named, exit 1', async () => {
    const chat = sandbox.addChat({ title: 'Чужая группа', type: 'supergroup' });
    const { code, problems } = await doctor({ LEADS_CHAT_ID: String(chat.id) });
    expect(problems).toEqual([
      `FAIL  LEADS_CHAT_ID=${chat.id}: chat not found: @${BOT_USER.username} is not in that chat; add it, or fix LEADS_CHAT_ID (/stickers_chatid in the chat tells its id)`,
    ]);
    expect(code).toBe(1);
  });

  it('a chat where the bot may not write, and one it was removed from: a line each, exit 1', async () => {
    const muted = sandbox.addChat({ title: 'Без права писать', type: 'supergroup', bot: { status: 'restricted', rights: {} } });
    const gone = sandbox.addChat({ title: 'Бывшая', type: 'supergroup', bot: { status: 'kicked' } });
    const { code, problems } = await doctor({ LEADS_CHAT_ID: String(muted.id), ADMIN_CHAT_ID: String(gone.id) });
    expect(problems).toEqual([
      `FAIL  LEADS_CHAT_ID=${muted.id} «Без права писать»: the bot is restricted there and may not send messages: lift the restriction (group settings → Members → the bot) or make it an administrator`,
      `FAIL  ADMIN_CHAT_ID=${gone.id}: @${BOT_USER.username} is not in that chat any more (403: Forbidden: bot was kicked from the supergroup chat): add it again`,
    ]);
    expect(code).toBe(1);
  });

  it('topics: an unknown one, a closed one and a chat without topics each name their variable', async () => {
    const forum = sandbox.addChat({
      title: 'Форум',
      type: 'supergroup',
      bot: { status: 'administrator' },
      topics: [{ id: 4, name: 'Заявки' }],
    });
    expect((await doctor({ LEADS_CHAT_ID: String(forum.id), LEADS_THREAD_ID: '4' })).out).toContain(
      'ok    LEADS_THREAD_ID=4: the topic takes messages',
    );
    sandbox.closeTopic(forum.id, 4);
    const closed = await doctor({ LEADS_CHAT_ID: String(forum.id), LEADS_THREAD_ID: '4', ADMIN_THREAD_ID: '2' });
    expect(closed.problems).toEqual([
      'FAIL  LEADS_THREAD_ID=4: no open topic 4 in «Форум» (Bad Request: TOPIC_CLOSED): reopen it, or fix LEADS_THREAD_ID (/stickers_chatid in the topic tells it)',
      'FAIL  ADMIN_THREAD_ID=2: «Stickers — админы» has no topics: unset the topic, or turn topics on in the group',
    ]);
    expect(closed.code).toBe(1);
  });

  it('webhook mode: no webhook yet, then one Telegram cannot deliver to, then one that works', async () => {
    const hook = { TELEGRAM_WEBHOOK_URL: 'http://127.0.0.1:1/telegram/webhook', TELEGRAM_WEBHOOK_SECRET: 'webhook-secret-0123456789' };
    expect((await doctor(hook)).problems).toEqual([
      `FAIL  TELEGRAM_WEBHOOK_URL=${hook.TELEGRAM_WEBHOOK_URL}: Telegram has no webhook for this bot: the server sets it when it starts (is it running?)`,
    ]);
    await callBotApi(sandbox, 'setWebhook', { url: hook.TELEGRAM_WEBHOOK_URL, secret_token: hook.TELEGRAM_WEBHOOK_SECRET });
    sandbox.say(LEADS_CHAT, '/stickers_new', DEFAULT_USER);
    await waitFor(() => sandbox.state.webhook?.last_error_message, 10_000, 'a failed delivery');
    const failing = await doctor(hook);
    expect(failing.problems).toEqual([
      expect.stringMatching(
        /^FAIL {2}TELEGRAM_WEBHOOK_URL=http:\/\/127\.0\.0\.1:1\/telegram\/webhook: Telegram cannot deliver \(Connection refused, \d+ s ago; 1 update\(s\) waiting\): the URL must reach the server from the internet$/,
      ),
    ]);
    expect(failing.code).toBe(1);
    await callBotApi(sandbox, 'setWebhook', {
      url: hook.TELEGRAM_WEBHOOK_URL,
      secret_token: hook.TELEGRAM_WEBHOOK_SECRET,
      drop_pending_updates: true,
    });
    const fine = await doctor(hook);
    expect(fine.out).toContain(`ok    webhook: Telegram posts to ${hook.TELEGRAM_WEBHOOK_URL} (0 update(s) waiting)`);
    expect(fine.code).toBe(0);
  });

  it('LEADS_ENDPOINT: a secret the server refuses, and no server there', async () => {
    const refused = await doctor({ LEADS_SECRET: 'another-secret-0123456789' });
    expect(refused.problems).toEqual([
      `FAIL  LEADS_ENDPOINT=${server.url}/leads: the server refused LEADS_SECRET (401): the landing and the server need the same LEADS_SECRET (each refused try counts toward locking this address out, the landing too if it is here: 5 in 10 minutes)`,
    ]);
    const closed = `http://127.0.0.1:${await freePort()}/leads`;
    const nobody = await doctor({ LEADS_ENDPOINT: closed });
    expect(nobody.problems).toEqual([
      `FAIL  LEADS_ENDPOINT=${closed}: no answer (ECONNREFUSED): the landing could not reach the server either`,
    ]);
    expect(nobody.code).toBe(1);
  });

  it("a configuration the server would refuse: the server's own lines, exit 1", async () => {
    const { code, out } = await doctor({ LEADS_SECRET: 'short', LEADS_CHAT_ID: '' });
    expect(out).toEqual([
      'FAIL  config: LEADS_SECRET must be at least 16 characters long',
      'FAIL  config: LEADS_CHAT_ID must be set when TELEGRAM_BOT_TOKEN is set (cards would never be published)',
      'doctor: 2 problems',
    ]);
    expect(code).toBe(1);
  });
});

describe('doctor prints nothing it should not', () => {
  it('an empty configuration (.env not loaded): said plainly, exit 1', async () => {
    const out: string[] = [];
    const code = await runCli(['doctor'], { out: (l) => out.push(l), err: (l) => out.push(`stderr: ${l}`), env: {} }, OPS);
    expect(out).toEqual([
      'FAIL  config: nothing is configured: no TELEGRAM_BOT_TOKEN, and POST /leads is off (LEADS_SECRET empty or LEADS_ENABLED=0); ' +
        'the CLI reads only its environment: load .env first (set -a; . ./.env; set +a)',
      'doctor: 1 problem',
    ]);
    expect(code).toBe(1);
  });

  it('a chat title full of terminal sequences and bidi controls: shown escaped, on its own line', async () => {
    const title = '\u001b]0;pwned\u0007\u001b[2J\u001b[H\rok    «Заявки Stickers»\u202E\u2066\u200F\u009B31m';
    const chat = sandbox.addChat({ title, type: 'supergroup', bot: { status: 'administrator' } });
    const { out } = await doctor({ LEADS_CHAT_ID: String(chat.id) });
    expect(out).toContain(
      `ok    LEADS_CHAT_ID=${chat.id} «\\x1B]0;pwned\\x07\\x1B[2J\\x1B[H\\x0Dok    «Заявки Stickers»\\u202E\\u2066\\u200F\\x9B31m»: ` +
        'the bot is an administrator, may send and edit its messages',
    );
    for (const line of out) expect(line).not.toMatch(/[\p{Cc}\p{Cf}]/u);
  });

  it('the passwords of TELEGRAM_API_ROOT and LEADS_ENDPOINT are never printed', async () => {
    const closed = `http://endpointuser:ENDPOINTPASSWORD@127.0.0.1:${await freePort()}/leads`;
    const { code, out } = await doctor({ TELEGRAM_API_ROOT: 'http://apiuser:APIPASSWORD@127.0.0.1:9', LEADS_ENDPOINT: closed });
    expect(out).toContainEqual(
      expect.stringMatching(
        /^FAIL {2}TELEGRAM_API_ROOT=http:\/\/apiuser@127\.0\.0\.1:9: Telegram did not answer \(request to http:\/\/apiuser@127/,
      ),
    );
    expect(out).toContainEqual(
      expect.stringMatching(/^FAIL {2}LEADS_ENDPOINT=http:\/\/endpointuser@127\.0\.0\.1:\d+\/leads: no answer \(/),
    );
    expect(out.join('\n')).not.toMatch(/APIPASSWORD|ENDPOINTPASSWORD/);
    expect(code).toBe(1);
  });
});

describe('doctor and PostgreSQL', () => {
  it('DATABASE_URL that does not answer: its line, without the password', async () => {
    const url = `postgres://leads:hunter2-password@127.0.0.1:${await freePort()}/leads`;
    const { code, problems } = await doctor({ DATABASE_URL: url, LEADS_ENDPOINT: '' });
    expect(problems).toEqual([
      expect.stringMatching(/^FAIL {2}DATABASE_URL=postgres:\/\/leads@127\.0\.0\.1:\d+\/leads: cannot connect: .*ECONNREFUSED/),
    ]);
    expect(problems.join('\n')).not.toContain('hunter2');
    expect(code).toBe(1);
  });

  itPostgresOnly('an empty database: not migrated', async () => {
    const empty = await postgresDatabaseFor(join(tmp.dir, 'never-started'));
    const { problems } = await doctor({ DATABASE_URL: empty, LEADS_ENDPOINT: '' });
    expect(problems).toEqual([
      expect.stringMatching(/^FAIL {2}database: PostgreSQL .* is not migrated to this version: start this version of the server once/),
    ]);
  });
});

describe('doctor and the SQLite file', () => {
  itSqliteOnly('not there yet: a warning (the server creates it), not a problem', async () => {
    const { code, out } = await doctor({ DATABASE_PATH: join(tmp.dir, 'fresh', 'leads.sqlite'), LEADS_ENDPOINT: '' });
    expect(out).toContain(
      `warn  database: SQLite ${join(tmp.dir, 'fresh', 'leads.sqlite')} does not exist yet: the server creates and migrates it at its first start`,
    );
    expect(code).toBe(0);
  });

  itSqliteOnly('not migrated, and not a database at all: a line each naming DATABASE_PATH', async () => {
    const empty = join(tmp.dir, 'empty.sqlite');
    new BetterSqlite3(empty).close();
    const stale = await doctor({ DATABASE_PATH: empty, LEADS_ENDPOINT: '' });
    expect(stale.problems).toEqual([
      `FAIL  database: SQLite ${empty} is not migrated to this version: start this version of the server once (it migrates at start), or check DATABASE_PATH`,
    ]);
    const junk = join(tmp.dir, 'junk.sqlite');
    writeFileSync(junk, 'this is not a database, just some text long enough to be read as a header page');
    const broken = await doctor({ DATABASE_PATH: junk, LEADS_ENDPOINT: '' });
    expect(broken.problems).toEqual([`FAIL  DATABASE_PATH=${junk}: cannot open: file is not a database (SQLITE_NOTADB)`]);
    expect(broken.code).toBe(1);
  });
});
