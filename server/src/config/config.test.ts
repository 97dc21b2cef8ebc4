import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadServerConfig } from './config';

const base = { LEADS_SECRET: 'a-long-enough-secret', LEADS_IP_SALT: 'salt' };

function problems(env: Record<string, string>): string[] {
  try {
    loadServerConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('server configuration (requirements §10.1)', () => {
  it('has the documented defaults', () => {
    const c = loadServerConfig(base);
    expect(c).toMatchObject({
      port: 3000,
      databasePath: './data/leads.sqlite',
      leads: { enabled: true, ipLimit: 5, ipWindowSec: 600, hourlyLimit: 60, cardPii: true },
      publishIntervalSec: 2,
      telegram: { token: null, apiRoot: 'https://api.telegram.org', leadsChatId: null, adminChatId: null, managerIds: null },
      timezone: 'Europe/Moscow',
    });
  });

  it("the inbox: its address, the launch data's age and the member cache, with defaults and one line per bad value", () => {
    expect(loadServerConfig(base).inbox).toEqual({ url: null, maxAgeSec: 3600, memberCacheSec: 60 });
    const set = loadServerConfig({
      ...base,
      LEADS_INBOX_URL: 'https://leads.example.com/inbox',
      LEADS_INBOX_MAX_AGE_S: '600',
      LEADS_INBOX_MEMBER_CACHE_S: '0',
    });
    expect(set.inbox).toEqual({ url: 'https://leads.example.com/inbox', maxAgeSec: 600, memberCacheSec: 0 });
    expect(loadServerConfig({ ...base, LEADS_INBOX_URL: 'http://127.0.0.1:3000/inbox' }).inbox.url).toBe('http://127.0.0.1:3000/inbox');
    expect(
      problems({
        ...base,
        LEADS_INBOX_URL: 'http://leads.example.com/inbox',
        LEADS_INBOX_MAX_AGE_S: '0',
        LEADS_INBOX_MEMBER_CACHE_S: 'soon',
      }),
    ).toEqual([
      'LEADS_INBOX_URL must be the inbox\'s public https address like https://leads.example.com/inbox (http only on localhost) (got "http://leads.example.com/inbox")',
      'LEADS_INBOX_MAX_AGE_S must be a whole number from 1 to 604800 (got "0")',
      'LEADS_INBOX_MEMBER_CACHE_S must be a whole number from 0 to 86400 (got "soon")',
    ]);
  });

  it('LEADS_ENABLED=0 or an empty LEADS_SECRET switches the module off (and then needs no salt)', () => {
    expect(loadServerConfig({ ...base, LEADS_ENABLED: '0' }).leads.enabled).toBe(false);
    expect(loadServerConfig({ LEADS_SECRET: '' }).leads.enabled).toBe(false);
  });

  it('LEADS_LOCALE: ru unless told, en when told; any other value is one line', () => {
    expect(loadServerConfig(base).locale).toBe('ru');
    expect(loadServerConfig({ ...base, LEADS_LOCALE: 'en' }).locale).toBe('en');
    expect(problems({ ...base, LEADS_LOCALE: 'EN' })).toEqual(['LEADS_LOCALE must be one of ru, en (got "EN")']);
  });

  it('lists one line per problem', () => {
    expect(
      problems({
        LEADS_SECRET: 'a-long-enough-secret',
        LEADS_IP_LIMIT: 'five',
        LEADS_HOURLY_LIMIT: '0',
        LEADS_CARD_PII: 'maybe',
        TELEGRAM_API_ROOT: 'ftp://x',
        LEADS_MANAGER_IDS: '1, two',
        LEADS_TIMEZONE: 'Mars/Base',
        LEADS_CHAT_ID: 'group',
        PORT: '70000',
      }),
    ).toEqual([
      'LEADS_IP_SALT must be set when the leads module is enabled (LEADS_SECRET set, LEADS_ENABLED unset; set LEADS_ENABLED=0 to switch POST /leads off)',
      'TELEGRAM_API_ROOT must be an http(s) URL (got "ftp://x")',
      'LEADS_MANAGER_IDS must be a comma-separated list of Telegram user ids (got "1, two")',
      'LEADS_TIMEZONE must be an IANA time zone like Europe/Moscow (got "Mars/Base")',
      'LEADS_HOURLY_LIMIT must be a whole number, at least 1 (got "0")',
      'PORT must be a whole number from 0 to 65535 (got "70000")',
      'LEADS_IP_LIMIT must be a whole number, at least 1 (got "five")',
      'LEADS_CARD_PII must be 1 or 0 (got "maybe")',
      'LEADS_CHAT_ID must be a numeric chat id like -1001234567890 (got "group")',
    ]);
  });

  it('rejects a short secret and a malformed token', () => {
    expect(problems({ LEADS_SECRET: 'short', LEADS_IP_SALT: 's' })).toEqual(['LEADS_SECRET must be at least 16 characters long']);
    expect(problems({ ...base, TELEGRAM_BOT_TOKEN: 'nope', LEADS_CHAT_ID: '-1001' })).toEqual([
      'TELEGRAM_BOT_TOKEN must look like 123456:ABC-DEF… (as BotFather gives it)',
    ]);
  });

  it('refuses a bot token without LEADS_CHAT_ID (it would never publish); no token at all still starts', () => {
    expect(problems({ ...base, TELEGRAM_BOT_TOKEN: '123:abc' })).toEqual([
      'LEADS_CHAT_ID must be set when TELEGRAM_BOT_TOKEN is set (cards would never be published)',
    ]);
    expect(problems({ ...base, TELEGRAM_BOT_TOKEN: '123:abc', LEADS_CHAT_ID: '  ' })).toHaveLength(1);
    const both = loadServerConfig({ ...base, TELEGRAM_BOT_TOKEN: '123:abc', LEADS_CHAT_ID: '-1001' });
    expect(both.telegram).toMatchObject({ token: '123:abc', leadsChatId: '-1001' });
    expect(loadServerConfig({ ...base, LEADS_CHAT_ID: '' }).telegram).toMatchObject({ token: null, leadsChatId: null });
  });

  it('refuses LEADS_ENABLED=1 with an empty or blank secret; unset or 0 with no secret is the 404 mode', () => {
    const refusal = 'LEADS_SECRET must be set when LEADS_ENABLED=1 (or set LEADS_ENABLED=0 to switch POST /leads off)';
    for (const on of ['1', 'true', ' yes ', 'ON']) {
      expect(problems({ LEADS_ENABLED: on, LEADS_IP_SALT: 'salt' })).toEqual([refusal]);
      expect(problems({ LEADS_ENABLED: on, LEADS_SECRET: '   ', LEADS_IP_SALT: 'salt' })).toEqual([refusal]);
    }
    for (const env of [{}, { LEADS_ENABLED: '' }, { LEADS_ENABLED: '0' }, { LEADS_ENABLED: '0', LEADS_SECRET: ' ' }]) {
      expect(loadServerConfig(env).leads.enabled).toBe(false);
    }
    expect(loadServerConfig({ ...base, LEADS_ENABLED: '1' }).leads.enabled).toBe(true);
  });

  it('HOST: unset listens on every interface; an address or host name is kept; anything else is refused', () => {
    expect(loadServerConfig(base).host).toBeNull();
    expect(loadServerConfig({ ...base, HOST: '127.0.0.1' }).host).toBe('127.0.0.1');
    expect(loadServerConfig({ ...base, HOST: '::1' }).host).toBe('::1');
    expect(loadServerConfig({ ...base, HOST: 'localhost' }).host).toBe('localhost');
    expect(problems({ ...base, HOST: 'http://127.0.0.1' })).toEqual([
      'HOST must be an IP address like 127.0.0.1 or a host name (got "http://127.0.0.1")',
    ]);
  });

  it('DATABASE_BUSY_TIMEOUT_MS: 3 s by default, 0 to 600000', () => {
    expect(loadServerConfig(base).databaseBusyTimeoutMs).toBe(3000);
    expect(loadServerConfig({ ...base, DATABASE_BUSY_TIMEOUT_MS: '250' }).databaseBusyTimeoutMs).toBe(250);
    expect(problems({ ...base, DATABASE_BUSY_TIMEOUT_MS: '-1' })).toEqual([
      'DATABASE_BUSY_TIMEOUT_MS must be a whole number from 0 to 600000 (got "-1")',
    ]);
  });

  it('reads manager ids and chat ids', () => {
    const c = loadServerConfig({ ...base, LEADS_MANAGER_IDS: '11, 22', LEADS_CHAT_ID: '-1001', ADMIN_CHAT_ID: '-1002' });
    expect(c.telegram).toMatchObject({ managerIds: [11, 22], leadsChatId: '-1001', adminChatId: '-1002' });
  });

  // Telegram sends presses and commands with the chat's numeric id: with a @name the cards went out, and every press on
  // them was refused as coming from a foreign chat.
  it('refuses a chat given by its @name, saying where its numeric id is found', () => {
    const atName = (v: string) =>
      `must be the chat's numeric id like -1001234567890, not its @name: presses and commands come with the id (/stickers_chatid in the chat, or npm run leads -- setup, tells it) (got "${v}")`;
    expect(problems({ ...base, TELEGRAM_BOT_TOKEN: '123:abc', LEADS_CHAT_ID: '@studio_leads', ADMIN_CHAT_ID: '@ops_chat' })).toEqual([
      `LEADS_CHAT_ID ${atName('@studio_leads')}`,
      `ADMIN_CHAT_ID ${atName('@ops_chat')}`,
    ]);
    expect(problems({ ...base, LEADS_CHAT_ID: '-1001', LEADS_ROUTES: 'wedding=@team_chat' })).toEqual([
      'LEADS_ROUTES entry 1 ("wedding=@team_chat") must name a numeric chat id like -1001234567890 after the "="',
    ]);
  });

  it('LEADS_IP_SALT: the line says what switched the module on, LEADS_ENABLED=1 or a secret with LEADS_ENABLED unset', () => {
    expect(problems({ LEADS_ENABLED: '1', LEADS_SECRET: 'a-long-enough-secret' })).toEqual([
      'LEADS_IP_SALT must be set when the leads module is enabled (LEADS_ENABLED=1 and LEADS_SECRET set)',
    ]);
    const unset: Record<string, string>[] = [
      { LEADS_SECRET: 'a-long-enough-secret' },
      { LEADS_SECRET: 'a-long-enough-secret', LEADS_ENABLED: ' ' },
    ];
    for (const env of unset) {
      expect(problems(env)).toEqual([
        'LEADS_IP_SALT must be set when the leads module is enabled (LEADS_SECRET set, LEADS_ENABLED unset; set LEADS_ENABLED=0 to switch POST /leads off)',
      ]);
    }
  });

  describe('LEADS_WEBHOOK_URL with a user name or password', () => {
    const hooks = (urls: string) => ({
      ...base,
      LEADS_WEBHOOK_URL: urls,
      LEADS_WEBHOOK_SECRET: urls
        .split(',')
        .map((_, i) => `whsec_0123456789abcdef_${i}`)
        .join(','),
    });

    it('is refused at start with one line naming the entry, never the URL', () => {
      const secretUrl = 'http://user:pa55word@127.0.0.1:43120/hook?token=TOPSECRET1';
      const lines = problems(hooks(`https://crm.example.com/in,${secretUrl},https://only-user@crm.example.com/x`));
      expect(lines).toEqual([
        'LEADS_WEBHOOK_URL entry 2 must not hold a user name or password (user:password@); the signature authenticates, a token may go in the path or query',
        'LEADS_WEBHOOK_URL entry 3 must not hold a user name or password (user:password@); the signature authenticates, a token may go in the path or query',
      ]);
      for (const part of ['pa55word', 'TOPSECRET1', 'only-user', '43120', '/hook']) expect(lines.join('\n')).not.toContain(part);
    });

    it('a token in the query is still taken', () => {
      expect(loadServerConfig(hooks('http://127.0.0.1:43120/hook?token=TOPSECRET1')).webhooks).toEqual([
        { url: 'http://127.0.0.1:43120/hook?token=TOPSECRET1', secret: 'whsec_0123456789abcdef_0' },
      ]);
    });
  });

  describe('TELEGRAM_WEBHOOK_URL on a path the server serves itself', () => {
    const bot = { ...base, TELEGRAM_BOT_TOKEN: '123:abc', LEADS_CHAT_ID: '-1001', TELEGRAM_WEBHOOK_SECRET: 'webhook-secret-0123456789' };
    const own =
      'TELEGRAM_WEBHOOK_URL must have a path of its own, like /telegram/webhook: /leads (and every path under it), /health, /ready, ' +
      "/metrics and /openapi.json are the server's own routes, and Telegram's updates would never reach the bot";

    it('refuses /leads and every path under it, and the observability routes, in any case and with a trailing slash', () => {
      for (const path of [
        '/leads',
        '/leads/',
        '/LEADS',
        '/Leads/export.csv',
        '/leads/42/trace',
        '/leads/anything/below',
        '/%6Ceads',
        '/health',
        '/ready/',
        '/Metrics',
        '/openapi.json',
      ]) {
        expect([path, problems({ ...bot, TELEGRAM_WEBHOOK_URL: `https://leads.example.com${path}` })]).toEqual([path, [own]]);
      }
    });

    it('refuses a path with characters the router would read as a pattern', () => {
      for (const path of ['/tg/:token', '/tg/*', '/tg(x)', '/tg!']) {
        expect(problems({ ...bot, TELEGRAM_WEBHOOK_URL: `https://leads.example.com${path}` })).toEqual([
          'TELEGRAM_WEBHOOK_URL must have a path of letters, digits and / - _ . ~ only, like /telegram/webhook (the router reads other characters as patterns)',
        ]);
      }
    });

    it('takes a path of its own, also one that only starts like a route', () => {
      for (const path of ['/telegram/webhook', '/leadsbot', '/tg/leads', '/', '/healthz', '/tg%20hook']) {
        const c = loadServerConfig({ ...bot, TELEGRAM_WEBHOOK_URL: `https://leads.example.com${path}` });
        expect(c.telegram.webhook?.path).toBe(path);
      }
    });
  });

  it('LEADS_TELEGRAM_LINK_DAYS: 7 by default, 0 turns the link off, anything else but 0–365 is one line at start', () => {
    expect(loadServerConfig(base).leads.telegramLinkDays).toBe(7);
    expect(loadServerConfig({ ...base, LEADS_TELEGRAM_LINK_DAYS: '0' }).leads.telegramLinkDays).toBe(0);
    expect(loadServerConfig({ ...base, LEADS_TELEGRAM_LINK_DAYS: '30' }).leads.telegramLinkDays).toBe(30);
    for (const bad of ['-1', '366', 'week', '1.5']) {
      expect(problems({ ...base, LEADS_TELEGRAM_LINK_DAYS: bad })).toEqual([
        `LEADS_TELEGRAM_LINK_DAYS must be a whole number from 0 to 365 (got "${bad}")`,
      ]);
    }
  });

  it('LEADS_TELEGRAM_LINK_ROOT: https://t.me by default, any http(s) URL without its trailing slash, anything else one line at start', () => {
    expect(loadServerConfig(base).leads.telegramLinkRoot).toBe('https://t.me');
    expect(loadServerConfig({ ...base, LEADS_TELEGRAM_LINK_ROOT: 'http://localhost:3002/sandbox/t.me/' }).leads.telegramLinkRoot).toBe(
      'http://localhost:3002/sandbox/t.me',
    );
    for (const bad of ['t.me', 'ftp://t.me', 'https://']) {
      expect(problems({ ...base, LEADS_TELEGRAM_LINK_ROOT: bad })).toEqual([
        `LEADS_TELEGRAM_LINK_ROOT must be an http(s) URL like https://t.me (got "${bad}")`,
      ]);
    }
  });
});

// requirements §10: `.env.example` lists every variable; `cp .env.example .env` is where an operator starts.
describe('.env.example', () => {
  it("lists every variable of the server's table in docs/configuration.md", () => {
    const root = join(__dirname, '..', '..', '..');
    const docs = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');
    const server = docs.slice(docs.indexOf('## Server'), docs.indexOf('## Landing'));
    const documented = [...server.matchAll(/^\| `([A-Z][A-Z0-9_]+)`/gm)].map((m) => m[1]);
    expect(documented.length).toBeGreaterThan(40);
    const example = new Set([...readFileSync(join(root, '.env.example'), 'utf8').matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]));
    expect(documented.filter((name) => !example.has(name))).toEqual([]);
  });
});
