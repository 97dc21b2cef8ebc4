/**
 * A lead's repeats on the inbox's lead page (`GET /inbox/api/leads/:number`): each with the fields that differ from
 * the lead and their values, as the card's repeat block shows them; hidden where LEADS_CARD_PII=0 hides them on the
 * card, and gone with the lead's erasure. Against the real app, its database and the Telegram sandbox.
 */
import { join } from 'node:path';
import { DEFAULT_USER, signInitData } from '@stickers/telegram-sandbox';
import request from 'supertest';
import { NO_RATE_LIMITS, sandboxSuite, submitLead, type TestServer } from './harness';

const { tmp, sandbox, start } = sandboxSuite();
let n = 0;
const startInbox = (env: Record<string, string> = {}) =>
  start({ dbPath: join(tmp.dir, `repeats-${(n += 1)}.sqlite`), env: { ...NO_RATE_LIMITS, ...env } });

async function api(server: TestServer, path: string, body?: unknown): Promise<any> {
  const initData = signInitData({ botToken: sandbox.token, user: DEFAULT_USER, authDate: Math.floor(server.clock.now() / 1000) });
  const http = request(server.app.getHttpServer());
  const test = body === undefined ? http.get(`/inbox/api/${path}`) : http.post(`/inbox/api/${path}`);
  test.set('Authorization', `tma ${initData}`);
  if (body !== undefined) test.set('Content-Type', 'application/json').send(JSON.stringify(body));
  const res = await test;
  expect(res.status).toBe(200);
  return JSON.parse(res.text);
}

const CONTACT = { telegram: '@repeat_page', phone: '+79165551234', name: 'Анна', comment: 'Свадьба' };

describe("a lead's repeats in the inbox", () => {
  it('gives each repeat, oldest first, with the fields that differ and their values', async () => {
    const server = await startInbox();
    const number = await submitLead(server, CONTACT);
    // The same person again: a new comment; then the username alone matched (another phone).
    await submitLead(server, { ...CONTACT, comment: 'Ещё раз, на 40 гостей' });
    server.clock.advance(60_000);
    await submitLead(server, { ...CONTACT, phone: '+79035550000' });
    const page = await api(server, `leads/${number}`);
    expect(page.repeats).toEqual([
      { at: expect.any(String), changes: { comment: 'Ещё раз, на 40 гостей' } },
      { at: expect.any(String), changes: { phone: '+79035550000' } },
    ]);
    expect(Date.parse(page.repeats[0].at)).toBeLessThan(Date.parse(page.repeats[1].at));
  });

  it('hides the values where LEADS_CARD_PII=0 hides them, keeping which fields differ', async () => {
    const server = await startInbox({ LEADS_CARD_PII: '0' });
    const number = await submitLead(server, CONTACT);
    await submitLead(server, { ...CONTACT, phone: '+79035550000', name: 'Анна Петрова' });
    const page = await api(server, `leads/${number}`);
    expect(page.repeats).toEqual([{ at: expect.any(String), changes: { name: null, phone: null } }]);
  });

  it('keeps no value once the lead is erased', async () => {
    const server = await startInbox();
    const number = await submitLead(server, CONTACT);
    await submitLead(server, { ...CONTACT, comment: 'Другой комментарий' });
    await api(server, `leads/${number}/erase`, { confirm: true });
    const page = await api(server, `leads/${number}`);
    expect(page.repeats).toEqual([{ at: expect.any(String), changes: { comment: null } }]);
  });
});
