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

describe('server configuration (CONTRACT section 2)', () => {
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
    expect(problems({ ...base, TELEGRAM_BOT_TOKEN: 'nope' })).toEqual(['TELEGRAM_BOT_TOKEN must look like 123456:ABC-DEF… (as BotFather gives it)']);
  });

  it('reads manager ids and chat ids', () => {
    const c = loadServerConfig({ ...base, LEADS_MANAGER_IDS: '11, 22', LEADS_CHAT_ID: '-1001', ADMIN_CHAT_ID: '@ops_chat' });
    expect(c.telegram).toMatchObject({ managerIds: [11, 22], leadsChatId: '-1001', adminChatId: '@ops_chat' });
  });
});
