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

  it('LEADS_ENABLED=0 or an empty LEADS_SECRET switches the module off (and then needs no salt)', () => {
    expect(loadServerConfig({ ...base, LEADS_ENABLED: '0' }).leads.enabled).toBe(false);
    expect(loadServerConfig({ LEADS_SECRET: '' }).leads.enabled).toBe(false);
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
      'LEADS_IP_SALT must be set when the leads module is enabled (LEADS_ENABLED=1 and LEADS_SECRET set)',
      'TELEGRAM_API_ROOT must be an http(s) URL (got "ftp://x")',
      'LEADS_MANAGER_IDS must be a comma-separated list of Telegram user ids (got "1, two")',
      'LEADS_TIMEZONE must be an IANA time zone like Europe/Moscow (got "Mars/Base")',
      'PORT must be a whole number from 0 to 65535 (got "70000")',
      'LEADS_IP_LIMIT must be a whole number from 1 to 9007199254740991 (got "five")',
      'LEADS_HOURLY_LIMIT must be a whole number from 1 to 9007199254740991 (got "0")',
      'LEADS_CARD_PII must be 1 or 0 (got "maybe")',
      'LEADS_CHAT_ID must be a numeric chat id like -1001234567890 or @channelname (got "group")',
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
    const c = loadServerConfig({ ...base, LEADS_MANAGER_IDS: '11, 22', LEADS_CHAT_ID: '-1001', ADMIN_CHAT_ID: '@ops_chat' });
    expect(c.telegram).toMatchObject({ managerIds: [11, 22], leadsChatId: '-1001', adminChatId: '@ops_chat' });
  });
});
