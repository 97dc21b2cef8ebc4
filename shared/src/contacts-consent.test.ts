import { describe, expect, it } from 'vitest';
import { checkConsent, checkPolicyUrl, CONSENT_FUTURE_SKEW_MS } from './consent.js';
import { isContactRequired, parseRequiredContacts, validateLeadFields, validateSubmission } from './fields.js';
import { FIELD_MESSAGES, fieldErrorText } from './messages.js';

const NAME = { name: 'Анна' };
const ID = { request_id: '0b6f4a52-3f1e-4c55-9a55-6c1f4b8f1a20' };

describe('LEADS_REQUIRED_CONTACTS', () => {
  it('parses the four modes (the pair in either order, any case); empty is the default; anything else is an error line', () => {
    expect(parseRequiredContacts(undefined)).toEqual({ ok: true, value: 'telegram,phone' });
    expect(parseRequiredContacts(' ')).toEqual({ ok: true, value: 'telegram,phone' });
    expect(parseRequiredContacts('Phone , Telegram')).toEqual({ ok: true, value: 'telegram,phone' });
    for (const v of ['telegram', 'phone', 'any'] as const)
      expect(parseRequiredContacts(` ${v.toUpperCase()} `)).toEqual({ ok: true, value: v });
    for (const bad of ['email', 'telegram,telegram', 'any,phone', 'telegram;phone']) {
      const r = parseRequiredContacts(bad);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toContain(`(got "${bad}")`);
    }
  });

  it('which contact is required on its own in each mode', () => {
    expect([isContactRequired('telegram'), isContactRequired('phone')]).toEqual([true, true]);
    expect([isContactRequired('telegram', 'telegram'), isContactRequired('phone', 'telegram')]).toEqual([true, false]);
    expect([isContactRequired('telegram', 'phone'), isContactRequired('phone', 'phone')]).toEqual([false, true]);
    expect([isContactRequired('telegram', 'any'), isContactRequired('phone', 'any')]).toEqual([false, false]);
  });

  it('a one-contact mode: the other may be missing (null); when given it is still checked', () => {
    expect(validateLeadFields({ ...NAME, telegram: '@anna_k' }, { requiredContacts: 'telegram' })).toMatchObject({
      ok: true,
      value: { telegram: '@anna_k', phone: null },
    });
    expect(validateLeadFields({ ...NAME, telegram: '@anna_k', phone: '12' }, { requiredContacts: 'telegram' })).toMatchObject({
      ok: false,
      errors: { phone: 'invalid' },
    });
    expect(validateLeadFields({ ...NAME, telegram: '@anna_k' }, { requiredContacts: 'phone' })).toMatchObject({
      ok: false,
      errors: { phone: 'required' },
    });
  });

  it('any: one contact is enough; neither is `required` on both; a malformed one is `invalid` alone', () => {
    expect(validateLeadFields({ ...NAME, phone: '8 916 555-12-34' }, { requiredContacts: 'any' })).toMatchObject({
      ok: true,
      value: { telegram: null, phone: '+79165551234' },
    });
    expect(validateSubmission({ ...NAME, ...ID, telegram: 't.me/anna_k' }, { requiredContacts: 'any' })).toMatchObject({
      ok: true,
      value: { telegram: '@anna_k', phone: null },
    });
    expect(validateLeadFields({ ...NAME, telegram: ' ', phone: '' }, { requiredContacts: 'any' })).toEqual({
      ok: false,
      errors: { telegram: 'required', phone: 'required' },
    });
    expect(validateSubmission({ name: 'A', ...ID }, { requiredContacts: 'any' })).toEqual({
      ok: false,
      errors: { name: 'too_short', telegram: 'required', phone: 'required' },
    });
    expect(validateLeadFields({ ...NAME, telegram: '@ab' }, { requiredContacts: 'any' })).toEqual({
      ok: false,
      errors: { telegram: 'invalid' },
    });
    expect(fieldErrorText('phone', 'required', { requiredContacts: 'any' })).toBe(FIELD_MESSAGES.ru.anyContactRequired);
    expect(fieldErrorText('phone', 'required')).toBe('Укажите телефон');
  });
});

describe('consent', () => {
  const now = Date.UTC(2026, 11, 2, 10, 0, 0);
  const url = 'https://stickers.example/privacy';
  const at = (ms: number) => new Date(now + ms).toISOString();

  it('absent: none, or `required` when consent is required', () => {
    expect(checkConsent(undefined, now, { required: false })).toEqual({ ok: true, value: null });
    expect(checkConsent(null, now, { required: true })).toEqual({ ok: false, code: 'required' });
  });

  it('the exact shape with a real, recent time and an http(s) URL; a time a little ahead is taken as now', () => {
    expect(checkConsent({ accepted_at: at(-5000), policy_url: url }, now, { required: true })).toEqual({
      ok: true,
      value: { accepted_at: now - 5000, policy_url: url },
    });
    expect(checkConsent({ accepted_at: at(60_000), policy_url: url }, now, { required: false })).toEqual({
      ok: true,
      value: { accepted_at: now, policy_url: url },
    });
    // A replay (late) may be as far ahead as its late.submitted_at.
    expect(
      checkConsent({ accepted_at: at(CONSENT_FUTURE_SKEW_MS + 60_000), policy_url: url }, now, { required: false, late: true }).ok,
    ).toBe(true);
  });

  it('anything else is invalid', () => {
    for (const raw of [
      'yes',
      1,
      [],
      {},
      { accepted_at: at(0) },
      { accepted_at: at(0), policy_url: url, ip: '1.2.3.4' },
      { accepted_at: 'yesterday', policy_url: url },
      { accepted_at: at(CONSENT_FUTURE_SKEW_MS + 60_000), policy_url: url },
      { accepted_at: at(-31 * 86_400_000), policy_url: url },
      { accepted_at: at(0), policy_url: 'mailto:a@b.c' },
      { accepted_at: at(0), policy_url: 42 },
    ]) {
      expect(checkConsent(raw, now, { required: false })).toEqual({ ok: false, code: 'invalid' });
    }
  });

  it('a policy URL: absolute http(s) with a host, bounded, no spaces', () => {
    expect(checkPolicyUrl('http://localhost:3001/privacy')).toBe('http://localhost:3001/privacy');
    const hostless = ['https:/a.example/privacy', 'https:///a.example/privacy', 'https:a.example/privacy', 'https:\\\\a.example/privacy'];
    for (const bad of [
      '/privacy',
      'https://',
      'javascript:alert(1)',
      'https://a.example/ b',
      `https://a.example/${'x'.repeat(500)}`,
      ...hostless,
    ]) {
      expect(checkPolicyUrl(bad)).toBeNull();
    }
    expect(fieldErrorText('consent', 'required')).toBe(FIELD_MESSAGES.ru.consent.required);
  });
});
