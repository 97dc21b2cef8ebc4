/**
 * The sandbox's Mini App launch data: signed as Telegram signs it, checked here by @telegram-apps/init-data-node (the
 * library the server validates with), so the sandbox's signing and the server's check are two implementations.
 */
import { parse, validate } from '@telegram-apps/init-data-node';
import { DEFAULT_TOKEN, DEFAULT_USER, launchUrl, signInitData, TelegramSandbox } from '@stickers/telegram-sandbox';

describe('signInitData', () => {
  it('signs launch data that the library accepts under the same token, with the user and the auth date', () => {
    const authDate = Date.UTC(2026, 10, 29, 9, 0, 0) / 1000;
    const initData = signInitData({ botToken: DEFAULT_TOKEN, user: DEFAULT_USER, authDate, queryId: 'AAHtest' });
    expect(() => validate(initData, DEFAULT_TOKEN, { expiresIn: 0 })).not.toThrow();
    const data = parse(initData);
    expect(data.user).toMatchObject({ id: DEFAULT_USER.id, first_name: DEFAULT_USER.first_name, username: DEFAULT_USER.username });
    expect(data.auth_date.getTime()).toBe(authDate * 1000);
    expect(data.query_id).toBe('AAHtest');
  });

  it('is refused under another token and when a field is changed', () => {
    const initData = signInitData({ botToken: DEFAULT_TOKEN, user: DEFAULT_USER });
    expect(() => validate(initData, '123456789:another-token', { expiresIn: 0 })).toThrow();
    const forged = new URLSearchParams(initData);
    forged.set('user', JSON.stringify({ id: 1, first_name: 'Mallory' }));
    expect(() => validate(forged, DEFAULT_TOKEN, { expiresIn: 0 })).toThrow();
  });

  it('builds the launch address a Mini App gets: the launch data in the fragment, URL-encoded', () => {
    const initData = signInitData({ botToken: DEFAULT_TOKEN, user: DEFAULT_USER });
    const url = new URL(launchUrl('http://127.0.0.1:3000/inbox', initData));
    expect(url.pathname).toBe('/inbox');
    const fragment = new URLSearchParams(url.hash.slice(1));
    expect(fragment.get('tgWebAppData')).toBe(initData);
    expect(fragment.get('tgWebAppVersion')).toBe('8.0');
    expect(JSON.parse(fragment.get('tgWebAppThemeParams')!)).toHaveProperty('bg_color');
  });
});

describe('the sandbox page\'s "open the inbox as <user>"', () => {
  const sandbox = new TelegramSandbox({ inboxUrl: 'http://127.0.0.1:3000/inbox' });
  beforeAll(() => sandbox.start());
  afterAll(() => sandbox.stop());

  it('links the inbox for the users it knows, each launch signed by the sandbox token when clicked', async () => {
    const page = await (await fetch(`${sandbox.url}/`)).text();
    expect(page).toContain('const INBOX = true');
    const res = await fetch(`${sandbox.url}/sandbox/api/inbox?user_id=${DEFAULT_USER.id}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('http://127.0.0.1:3000/inbox');
    const initData = new URLSearchParams(location.hash.slice(1)).get('tgWebAppData')!;
    expect(() => validate(initData, sandbox.token)).not.toThrow();
    expect(parse(initData).user?.id).toBe(DEFAULT_USER.id);
    expect((await fetch(`${sandbox.url}/sandbox/api/inbox?user_id=424242`, { redirect: 'manual' })).status).toBe(404);
  });

  it('has no inbox links when it does not know the inbox', async () => {
    const bare = await new TelegramSandbox().start();
    try {
      expect(await (await fetch(`${bare.url}/`)).text()).toContain('const INBOX = false');
      expect((await fetch(`${bare.url}/sandbox/api/inbox?user_id=${DEFAULT_USER.id}`, { redirect: 'manual' })).status).toBe(404);
    } finally {
      await bare.stop();
    }
  });
});
