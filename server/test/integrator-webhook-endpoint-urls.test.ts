/**
 * Signed deliveries to integrators: an endpoint URL's credentials, path and query never reach a log line, the
 * lead's trace, the outbox row's `last_error` or the admin alert — only its scheme, host and port do — whatever the
 * HTTP client puts into its error. (The start refuses a URL with a user name or password: config.test.ts. Here the
 * app is given one anyway, as an older start took it, to show what its failures write.) Time is the FakeClock's.
 */
import { createServer, type Server } from 'node:http';
import { OutboxService } from '../src/outbox/outbox.service';
import { networkErrorText, postWebhook, withoutUrls } from '../src/webhooks/webhook.sender';
import { ADMIN_CHAT, FakeClock, NO_RATE_LIMITS, sandboxSuite, submitLead, type TestServer, watchAlerts } from './harness';
import { sqlRows } from './support/test-database';

const SECOND = 1000;
const MIN = 60 * SECOND;
const HOOK_SECRET = 'whsec_test_0123456789abcdef';
const SECRET_PARTS = ['pa55word', 'TOPSECRET1', '/hook', 'user:', 'user%3A'];

const { tmp, sandbox, start } = sandboxSuite();
let receiver: Server;
let port = 0;
let received = 0;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    received += 1;
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as { port: number }).port;
});
afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});

function expectNoSecret(what: string, texts: string[]): void {
  const all = texts.join('\n');
  for (const part of SECRET_PARTS) expect([what, part, all.includes(part)]).toEqual([what, part, false]);
}

describe('the sender never quotes the URL in its error', () => {
  it('a URL with credentials: fetch refuses it quoting the whole URL; the error keeps none of it', async () => {
    const url = `http://user:pa55word@127.0.0.1:${port}/hook?token=TOPSECRET1`;
    const answer = await postWebhook(url, '{}', {}, 2000);
    expect(answer.ok).toBe(false);
    if (answer.ok) return;
    expect(answer.answered).toBe(false);
    expect(answer.error).toMatch(/^network error: /);
    expectNoSecret('sender error', [answer.error]);
    expect(received).toBe(0);
  });

  it('keeps a code as it is, and cuts every URL and every piece of the endpoint out of a message', () => {
    const url = 'https://user:pa55word@crm.example.com:8443/hook/in?token=TOPSECRET1';
    expect(networkErrorText(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }), url)).toBe('ECONNREFUSED');
    const quoted = networkErrorText(new TypeError(`Failed to parse URL from ${url}`), url);
    expect(quoted).toBe('Failed to parse URL from <url>');
    const pieces = networkErrorText(new Error('bad request line: POST /hook/in?token=TOPSECRET1 (pa55word)'), url);
    expectNoSecret('pieces', [pieces]);
    expect(withoutUrls('at file:///srv/app.js:1:2 and http://a.example/x?y=1', undefined)).toBe('at <url> and <url>');
  });
});

describe('an endpoint with credentials through the real app', () => {
  it('no log line, trace row, last_error or alert names more than its origin', async () => {
    const clock = new FakeClock();
    const server: TestServer = await start({
      dbPath: `${tmp.dir}/hooks-${Date.now()}.sqlite`,
      clock,
      env: { ...NO_RATE_LIMITS, LEADS_WEBHOOK_URL: `http://127.0.0.1:${port}/hook?token=TOPSECRET1`, LEADS_WEBHOOK_SECRET: HOOK_SECRET },
    });
    // What an older start accepted: credentials in the URL (the configuration object is the app's own).
    server.config.webhooks[0] = { url: `http://user:pa55word@127.0.0.1:${port}/hook?token=TOPSECRET1`, secret: HOOK_SECRET };
    const webhooks = server.app.get(OutboxService);
    const alerts = watchAlerts(server);
    const id = await submitLead(server);
    await webhooks.whenIdle();
    await webhooks.tick();
    // The retry schedule to past 30 minutes of failures: 5 s, 15 s, 1 min, 5 min, 15 min, 15 min.
    for (const delay of [5 * SECOND, 15 * SECOND, MIN, 5 * MIN, 15 * MIN, 15 * MIN]) {
      clock.advance(delay);
      await webhooks.whenIdle();
      await webhooks.tick();
    }
    expect((await alerts()).filter((a) => a.key === 'webhook_failing')).toEqual([{ key: 'webhook_failing', result: 'sent' }]);

    const origin = `http://127.0.0.1:${port}`;
    const trace = (
      await sqlRows<{ detail: string }>(server.db, "select detail from lead_events where lead_id = ? and kind like 'webhook%'", id)
    ).map((r) => r.detail);
    expect(trace).toHaveLength(7);
    for (const detail of trace) expect(detail).toContain(`to ${origin}: network error: `);
    expectNoSecret('trace', trace);
    const lastErrors = (await sqlRows<{ last_error: string }>(server.db, "select last_error from outbox where kind = 'webhook'")).map(
      (r) => r.last_error,
    );
    expect(lastErrors).toHaveLength(1);
    expect(lastErrors[0]).toMatch(/^network error: /);
    expectNoSecret('last_error', lastErrors);
    const failures = server.logger.lines.filter((l) => l.includes('webhook attempt failed'));
    expect(failures).toHaveLength(7);
    expectNoSecret('log', server.logger.lines);
    const alert = sandbox.messages(ADMIN_CHAT).filter((m) => m.text.startsWith('🚨 Вебхук не доставляется'));
    expect(alert).toHaveLength(1);
    expect(alert[0].text).toContain(`${origin}, событие lead.created заявки #${id}`);
    expectNoSecret('alert', [alert[0].text]);
    expect(received).toBe(0);
  });
});
