/** Fuzzing the landing action: arbitrary form data never throws, never sends an invalid request, names real fields. */
import fc from 'fast-check';
import { LEAD_FIELDS } from '@stickers/shared';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { getEnv, resetEnv } from '~/env.server';
import { signStartedAt } from '~/leads/started-at.server';
import { action } from '~/routes/_index';
import { LeadsStandIn } from './support';

const received: any[] = [];
const leads = new LeadsStandIn(({ body }) => {
  received.push(body);
  return { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
});

beforeAll(async () => {
  await leads.start();
  for (const k of ['TELEGRAM_BOT_TOKEN', 'LEADS_CHAT_ID']) delete process.env[k];
  process.env.LEADS_ENDPOINT = `${leads.url}/leads`;
  process.env.LEADS_SECRET = 'fuzz-secret-0123456789';
  process.env.MIN_FILL_MS = '0';
  // Each case comes from another visitor through one proxy that appends its address to X-Forwarded-For.
  process.env.TRUST_PROXY = '1';
  resetEnv();
});
afterAll(() => leads.stop());

const text = fc.oneof(
  fc.string({ maxLength: 100 }),
  fc.string({ unit: 'binary', maxLength: 100 }),
  fc.constantFrom('', ' ', '@anna_k', '+79991234567', 'Анна'),
);

describe('fuzz the landing action', () => {
  it('any form: a known state, errors only for real fields, nothing invalid delivered', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    let ip = 0;
    const states = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            name: fc.oneof({ arbitrary: fc.constant('Анна Ким'), weight: 3 }, text),
            telegram: fc.oneof({ arbitrary: fc.constantFrom('@anna_k', 't.me/Anna_K', 'https://t.me/anna_k'), weight: 3 }, text),
            phone: fc.oneof({ arbitrary: fc.constantFrom('+79991234567', '+7 (999) 123-45-67'), weight: 3 }, text),
            date: text,
            guests: text,
            comment: text,
            requestId: fc.oneof(fc.uuid({ version: 4 }), text),
            junk: text,
          },
          { requiredKeys: [] },
        ),
        fc.boolean(),
        async (fields, honest) => {
          const form = new URLSearchParams();
          for (const [k, v] of Object.entries(fields)) form.set(k, v);
          form.set('company', honest ? '' : 'x');
          form.set('startedAt', signStartedAt(Date.now() - 10, (fields.requestId ?? '').trim().toLowerCase(), getEnv().signingKey));
          const before = received.length;
          const request = new Request('http://landing.test/?index', {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': `198.18.${(++ip >> 8) & 255}.${ip & 255}` },
            body: form,
          });
          const result = ((await action({ request, context: {}, params: {} })) as { data: any }).data;
          states.add(result.state);
          expect(['sent', 'throttled', 'error', 'invalid']).toContain(result.state);
          expect(result.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
          for (const field of Object.keys(result.errors ?? {})) expect(LEAD_FIELDS).toContain(field);
          if (result.state === 'invalid' || !honest) expect(received.length).toBe(before);
          for (const sent of received.slice(before)) expect(sent.telegram).toMatch(/^@[A-Za-z][A-Za-z0-9_]{4,31}$/);
        },
      ),
      { numRuns: 600 },
    );
    expect(states.has('invalid')).toBe(true);
    expect(states.has('sent')).toBe(true);
    // About one form in fourteen is valid and honest: 600 runs deliver about 44, so more than 10 is far from chance.
    expect(received.length).toBeGreaterThan(10);
  });
});
