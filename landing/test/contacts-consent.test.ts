/**
 * Which contacts the form requires (LEADS_REQUIRED_CONTACTS) and the consent box (LANDING_PRIVACY_URL), through the
 * route's action against a real HTTP stand-in for POST /leads and the Telegram sandbox: what the visitor sees, what
 * the body carries, and the fallback message with one contact.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadLandingEnv, LandingConfigError } from '~/env.server';
import { loader } from '~/routes/_index';
import { postForm } from './post-form';
import { captureConsole, configuredEnv, ENV_KEYS, LEADS_CHAT, setEnv, standIns, type StandInAnswer, type StandInRequest } from './support';

let answer: StandInAnswer = { status: 201, body: { lead_number: 7, duplicate: false, repeat: false } };
const received: StandInRequest[] = [];
let ipCounter = 0;
const { sandbox, leads } = standIns((request) => {
  received.push(request);
  return answer;
});
const KEYS = [...ENV_KEYS, 'LEADS_REQUIRED_CONTACTS', 'LANDING_PRIVACY_URL'];
const POLICY = 'https://stickers.example/privacy';
const submit = (values: Record<string, string>) => postForm({ values, forwardedFor: `198.51.100.${++ipCounter}` });
const pageData = () => (loader({ request: new Request('http://landing.test/'), context: {}, params: {} }) as any).data;

function use(over: Record<string, string | undefined>) {
  setEnv(configuredEnv(leads.url, sandbox, { TRUST_PROXY: '1', ...over }), KEYS);
}

beforeEach(() => {
  answer = { status: 201, body: { lead_number: 7, duplicate: false, repeat: false } };
  use({});
  captureConsole('log');
  received.length = 0;
});
afterEach(() => {
  vi.restoreAllMocks();
  setEnv({}, ['LEADS_REQUIRED_CONTACTS', 'LANDING_PRIVACY_URL']);
});

describe('LEADS_REQUIRED_CONTACTS on the landing', () => {
  it('the loader hands the mode and the privacy URL to the browser', () => {
    expect(pageData()).toMatchObject({ requiredContacts: 'telegram,phone', privacyUrl: null });
    use({ LEADS_REQUIRED_CONTACTS: 'any', LANDING_PRIVACY_URL: POLICY });
    expect(pageData()).toMatchObject({ requiredContacts: 'any', privacyUrl: POLICY });
  });

  it('any: a phone-only lead is sent without `telegram`; neither contact is a field error on both, values kept', async () => {
    use({ LEADS_REQUIRED_CONTACTS: 'any' });
    const { result } = await submit({ name: 'Анна Ким', phone: '8 916 555-12-34' });
    expect(result.state).toBe('sent');
    expect(received[0].body).toMatchObject({ name: 'Анна Ким', phone: '+79165551234' });
    expect(received[0].body).not.toHaveProperty('telegram');
    const none = await submit({ name: 'Анна Ким', telegram: '', phone: ' ', comment: 'ждём' });
    expect(none.result).toMatchObject({ state: 'invalid', errors: { telegram: 'required', phone: 'required' } });
    expect(none.result.values).toMatchObject({ name: 'Анна Ким', comment: 'ждём' });
    expect(received).toHaveLength(1);
  });

  it('the default still requires both', async () => {
    const { result } = await submit({ name: 'Анна Ким', telegram: '@anna_k' });
    expect(result).toMatchObject({ state: 'invalid', errors: { phone: 'required' } });
  });

  it('the fallback message of a telegram-only lead has no phone line; its username is still a link', async () => {
    use({ LEADS_REQUIRED_CONTACTS: 'telegram' });
    answer = { status: 503 };
    const { requestId, result } = await submit({ name: 'Анна Ким', telegram: '@anna_only' });
    expect(result.state).toBe('sent');
    const message = sandbox.messages(LEADS_CHAT).find((m) => m.text.includes(requestId))!;
    expect(message.text).toContain('Telegram: @anna_only');
    expect(message.text).not.toContain('Телефон');
    expect(message.entities).toEqual([expect.objectContaining({ type: 'text_link', url: 'https://t.me/anna_only' })]);
  });

  it('a bad value stops the start with one line', () => {
    expect(() => loadLandingEnv({ LEADS_REQUIRED_CONTACTS: 'email' })).toThrow(LandingConfigError);
    expect(() => loadLandingEnv({ LEADS_REQUIRED_CONTACTS: 'email' })).toThrow(/LEADS_REQUIRED_CONTACTS must be telegram,phone/);
    expect(() => loadLandingEnv({ LANDING_PRIVACY_URL: '/privacy' })).toThrow(/LANDING_PRIVACY_URL must be the full http\(s\) URL/);
  });
});

describe('consent', () => {
  it('without LANDING_PRIVACY_URL there is no box and no `consent` in the body', async () => {
    await submit({ name: 'Анна Ким', telegram: '@anna_k', phone: '+79991234567', consent: 'on' });
    expect(received[0].body).not.toHaveProperty('consent');
  });

  it('with it, an unticked box is the field error `consent`, the values kept and nothing sent', async () => {
    use({ LANDING_PRIVACY_URL: POLICY });
    const { result } = await submit({ name: 'Анна Ким', telegram: '@anna_k', phone: '+79991234567', comment: 'свадьба' });
    expect(result).toMatchObject({ state: 'invalid', errors: { consent: 'required' } });
    expect(result.values).toMatchObject({ name: 'Анна Ким', telegram: '@anna_k', phone: '+79991234567', comment: 'свадьба', consent: '' });
    expect(received).toHaveLength(0);
    // With another field error the box's error is there too, and a ticked box comes back ticked.
    const both = await submit({ name: 'А', telegram: '@anna_k', phone: '+79991234567', consent: 'on' });
    expect(both.result).toMatchObject({ state: 'invalid', errors: { name: 'too_short' }, values: { consent: 'on' } });
    expect(both.result.errors).not.toHaveProperty('consent');
  });

  it("a ticked box sends `consent` with the action's time and the policy URL, and the fallback message notes it", async () => {
    use({ LANDING_PRIVACY_URL: POLICY });
    const { before, result } = await submit({ name: 'Анна Ким', telegram: '@anna_k', phone: '+79991234567', consent: 'on' });
    expect(result.state).toBe('sent');
    const consent = received[0].body.consent;
    expect(consent.policy_url).toBe(POLICY);
    expect(Date.parse(consent.accepted_at)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(consent.accepted_at)).toBeLessThanOrEqual(Date.now());
    answer = { status: 503 };
    const fallback = await submit({ name: 'Анна Ким', telegram: '@anna_k', phone: '+79991234567', consent: 'on' });
    const message = sandbox.messages(LEADS_CHAT).find((m) => m.text.includes(fallback.requestId))!;
    expect(message.text).toContain(`☑️ Согласие на обработку данных: ${received[1].body.consent.accepted_at}`);
  });
});
