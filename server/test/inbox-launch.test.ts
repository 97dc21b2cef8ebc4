/**
 * The inbox's launch data at its edges (docs/inbox.md, "Launch data"): dated ahead of the server's clock, and sent by
 * a Telegram client older than the `signature` field. Signed with the sandbox's token, checked by the real app.
 */
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { DEFAULT_USER, signInitData } from '@stickers/telegram-sandbox';
import { LAUNCH_FUTURE_SKEW_MS } from '../src/access/inbox-access.service';
import { NO_RATE_LIMITS, sandboxSuite, type TestServer } from './harness';

const { tmp, sandbox, start } = sandboxSuite();
let n = 0;
const startInbox = () => start({ dbPath: join(tmp.dir, `launch-${(n += 1)}.sqlite`), env: NO_RATE_LIMITS });

async function me(server: TestServer, initData: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/inbox/api/me`, { headers: { Authorization: `tma ${initData}` } });
  return { status: res.status, body: await res.json() };
}

/** Launch data signed `offsetSec` from the server's clock (ahead when positive). */
const signedAt = (server: TestServer, offsetSec: number) =>
  signInitData({ botToken: sandbox.token, user: DEFAULT_USER, authDate: Math.floor(server.clock.now() / 1000) + offsetSec });

/**
 * Launch data as clients before Bot API 8.0 send it: the fields and the bot token's HMAC over them, no `signature`.
 * Signed here by the steps of Telegram's documentation, since both the sandbox and the library add the field.
 */
function signedWithoutSignature(token: string, authDate: number): string {
  const fields: Record<string, string> = {
    auth_date: String(authDate),
    query_id: 'AAHolderClient',
    user: JSON.stringify({ id: DEFAULT_USER.id, first_name: DEFAULT_USER.first_name, username: DEFAULT_USER.username }),
  };
  const checkString = Object.keys(fields)
    .sort()
    .map((key) => `${key}=${fields[key]}`)
    .join('\n');
  const secret = createHmac('sha256', 'WebAppData').update(token).digest();
  const hash = createHmac('sha256', secret).update(checkString).digest('hex');
  return new URLSearchParams({ ...fields, hash }).toString();
}

describe('launch data dated ahead of the server clock', () => {
  it('is let in within the skew and refused as invalid beyond it, so it cannot stay fresh for ever', async () => {
    const server = await startInbox();
    const skewSec = LAUNCH_FUTURE_SKEW_MS / 1000;
    expect((await me(server, signedAt(server, skewSec - 1))).status).toBe(200);
    const ahead = await me(server, signedAt(server, skewSec + 60));
    expect([ahead.status, ahead.body]).toEqual([401, { error: 'unauthorized', why: 'invalid' }]);
    const farAhead = await me(server, signedAt(server, 365 * 24 * 3600));
    expect([farAhead.status, farAhead.body]).toEqual([401, { error: 'unauthorized', why: 'invalid' }]);
  });
});

describe('launch data without the `signature` field (clients before Bot API 8.0)', () => {
  it('is let in when the bot token HMAC is right, names its user, and still expires', async () => {
    const server = await startInbox();
    const now = Math.floor(server.clock.now() / 1000);
    const older = await me(server, signedWithoutSignature(sandbox.token, now));
    expect(older.status).toBe(200);
    expect(older.body.user).toMatchObject({ id: DEFAULT_USER.id, username: DEFAULT_USER.username });
    const stale = await me(server, signedWithoutSignature(sandbox.token, now - 3601));
    expect([stale.status, stale.body]).toEqual([401, { error: 'unauthorized', why: 'expired' }]);
  });

  it('is refused as invalid under another token or with a field changed', async () => {
    const server = await startInbox();
    const now = Math.floor(server.clock.now() / 1000);
    const otherBot = await me(server, signedWithoutSignature('123456789:another-bot', now));
    expect([otherBot.status, otherBot.body]).toEqual([401, { error: 'unauthorized', why: 'invalid' }]);
    const forged = new URLSearchParams(signedWithoutSignature(sandbox.token, now));
    forged.set('user', JSON.stringify({ id: 777, first_name: 'Mallory' }));
    expect((await me(server, forged.toString())).body).toEqual({ error: 'unauthorized', why: 'invalid' });
    // Adding a `signature` afterwards is a changed field like any other: the HMAC covers it.
    const added = new URLSearchParams(signedWithoutSignature(sandbox.token, now));
    added.set('signature', 'AAAA');
    expect((await me(server, added.toString())).body).toEqual({ error: 'unauthorized', why: 'invalid' });
  });
});
