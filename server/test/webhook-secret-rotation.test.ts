/**
 * Rotating a webhook secret (LEADS_WEBHOOK_SECRET_PREVIOUS): during the overlap each delivery's Stickers-Signature
 * carries a `v1=` for the new secret and one for the old, so a receiver verifying with either accepts it. Signatures
 * are checked with the verification snippet of docs/api.md, read from the document and run as it stands.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInThisContext } from 'node:vm';
import { ConfigError, loadServerConfig } from '../src/config/config';
import { FakeClock, SECRET, sandboxSuite, submitLead, type TestServer } from './harness';
import { WebhookReceiver } from './support/webhook-receiver';

type Verify = (rawBody: string | Buffer, header: string | undefined, secret: string, now?: number) => boolean;

/** The verification snippet of docs/api.md, exactly as an integrator would copy it. */
function docsSnippet(): Verify {
  const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'api.md'), 'utf8');
  const code = [...doc.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).find((c) => c.includes('function verifyStickersSignature'));
  if (!code) throw new Error('docs/api.md has no verifyStickersSignature snippet');
  return (runInThisContext(`(function (require) {\n${code}\nreturn verifyStickersSignature;\n})`) as (r: NodeRequire) => Verify)(require);
}
const verify = docsSnippet();

const OLD_SECRET = 'whsec_old_0123456789abcdef';
const NEW_SECRET = 'whsec_new_fedcba9876543210';
const suite = sandboxSuite();
let server: TestServer;
let clock: FakeClock;
let receiver: WebhookReceiver;

/** Boots with `env` beside the receiver's URL, stores `count` leads and runs the webhook passes that deliver them. */
async function deliveries(env: Record<string, string>, count = 2) {
  server = await suite.boot({ clock, env: { LEADS_WEBHOOK_URL: receiver.url, ...env } });
  for (let i = 0; i < count; i += 1) {
    await submitLead(server);
    await server.outbox.whenIdle();
    await server.outbox.tick();
  }
  expect(receiver.received.map((r) => r.answered)).toEqual(Array(count).fill(200));
  return receiver.received;
}

beforeEach(async () => {
  clock = new FakeClock();
  receiver = new WebhookReceiver();
  await receiver.start();
});
afterEach(async () => {
  await receiver.stop();
});

describe('webhook secret rotation', () => {
  it('during the overlap a receiver holding only the old secret and one holding only the new one accept the same deliveries', async () => {
    const received = await deliveries({ LEADS_WEBHOOK_SECRET: NEW_SECRET, LEADS_WEBHOOK_SECRET_PREVIOUS: OLD_SECRET });
    for (const r of received) {
      const header = r.headers['stickers-signature'] as string;
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
      expect([r.body.id, verify(r.raw, header, OLD_SECRET, clock.now())]).toEqual([r.body.id, true]);
      expect([r.body.id, verify(r.raw, header, NEW_SECRET, clock.now())]).toEqual([r.body.id, true]);
      expect(verify(r.raw, header, 'whsec_someone_else_0123456', clock.now())).toBe(false);
    }
  });

  it('once the previous secret is removed, only the new one verifies', async () => {
    const received = await deliveries({ LEADS_WEBHOOK_SECRET: NEW_SECRET }, 1);
    const header = received[0].headers['stickers-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verify(received[0].raw, header, NEW_SECRET, clock.now())).toBe(true);
    expect(verify(received[0].raw, header, OLD_SECRET, clock.now())).toBe(false);
  });
});

describe('LEADS_WEBHOOK_SECRET_PREVIOUS', () => {
  const base = {
    LEADS_SECRET: SECRET,
    LEADS_IP_SALT: 'salt',
    LEADS_WEBHOOK_URL: 'https://a.example/x,https://b.example/y',
    LEADS_WEBHOOK_SECRET: `${NEW_SECRET},${NEW_SECRET}2`,
  };
  const problems = (env: Record<string, string>): string[] => {
    try {
      loadServerConfig({ ...base, ...env });
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };

  it('takes one entry per URL in the same order, empty for a URL not being rotated', () => {
    expect(loadServerConfig({ ...base, LEADS_WEBHOOK_SECRET_PREVIOUS: `,${OLD_SECRET}` }).webhooks).toEqual([
      { url: 'https://a.example/x', secret: NEW_SECRET },
      { url: 'https://b.example/y', secret: `${NEW_SECRET}2`, previousSecret: OLD_SECRET },
    ]);
  });

  it('refuses another count of entries and a short secret, naming the position', () => {
    expect(problems({ LEADS_WEBHOOK_SECRET_PREVIOUS: OLD_SECRET })).toEqual([
      'LEADS_WEBHOOK_SECRET_PREVIOUS must list one entry per URL of LEADS_WEBHOOK_URL, in the same order, empty for a URL not being rotated (got 1 entries for 2 URLs)',
    ]);
    expect(problems({ LEADS_WEBHOOK_SECRET_PREVIOUS: `${OLD_SECRET},short` })).toEqual([
      'LEADS_WEBHOOK_SECRET_PREVIOUS entry 2 must be empty or 16–256 characters without spaces or commas',
    ]);
  });
});
