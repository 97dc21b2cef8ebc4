import { describe, expect, it } from 'vitest';
import {
  checkClientIp,
  checkComment,
  checkDate,
  checkGuests,
  checkName,
  checkPhone,
  checkRequestId,
  checkTelegram,
  validateLeadFields,
  validateSubmission,
} from './fields.js';

const valid = {
  request_id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  name: 'Анна',
  telegram: '@anna_k',
  phone: '+79991234567',
};

describe('name', () => {
  it('is required, trimmed, 2–80 characters', () => {
    expect(checkName(undefined)).toEqual({ ok: false, code: 'required' });
    expect(checkName('   ')).toEqual({ ok: false, code: 'required' });
    expect(checkName('А')).toEqual({ ok: false, code: 'too_short' });
    expect(checkName('  Ан  ')).toEqual({ ok: true, value: 'Ан' });
    expect(checkName('а'.repeat(80))).toEqual({ ok: true, value: 'а'.repeat(80) });
    expect(checkName('а'.repeat(81))).toEqual({ ok: false, code: 'too_long' });
  });
  it('collapses inner whitespace and drops invisible characters', () => {
    expect(checkName('Анна \n\t Ким\u200B')).toEqual({ ok: true, value: 'Анна Ким' });
  });
  it('counts an emoji as one character', () => {
    expect(checkName('👍🏽')).toEqual({ ok: false, code: 'too_short' });
    expect(checkName('👍🏽'.repeat(80))).toEqual({ ok: true, value: '👍🏽'.repeat(80) });
    expect(checkName('👍🏽'.repeat(81))).toEqual({ ok: false, code: 'too_long' });
    // A ZWJ family is one character but eight code units: forty of them reach the code unit bound first.
    expect(checkName('👨‍👩‍👧'.repeat(40))).toEqual({ ok: true, value: '👨‍👩‍👧'.repeat(40) });
  });
  it('rejects a wrong JSON type as invalid', () => {
    for (const v of [42, true, ['Анна'], { a: 1 }]) expect(checkName(v)).toEqual({ ok: false, code: 'invalid' });
  });
});

describe('telegram', () => {
  it.each([
    ['@anna_k', '@anna_k'],
    ['anna_k', '@anna_k'],
    ['t.me/anna_k', '@anna_k'],
    ['https://t.me/anna_k', '@anna_k'],
    ['http://t.me/Anna_K/', '@Anna_K'],
    ['  @abcde  ', '@abcde'],
    ['@' + 'a'.repeat(32), '@' + 'a'.repeat(32)],
  ])('accepts %s as %s', (input, stored) => {
    expect(checkTelegram(input)).toEqual({ ok: true, value: stored });
  });
  it.each(['@abcd', '@1abcde', '@_abcde', '@' + 'a'.repeat(33), '@anna-k', 'https://example.com/anna_k', '@@anna_k', 'анна_к'])(
    'rejects %s',
    (input) => {
      expect(checkTelegram(input)).toEqual({ ok: false, code: 'invalid' });
    },
  );
  it('is required', () => {
    expect(checkTelegram('')).toEqual({ ok: false, code: 'required' });
    expect(checkTelegram(null)).toEqual({ ok: false, code: 'required' });
  });
});

describe('phone', () => {
  it('drops spaces, dashes and brackets', () => {
    expect(checkPhone('+7 (999) 123-45-67')).toEqual({ ok: true, value: '+79991234567' });
  });
  it('is a valid number, stored as E.164 (+ and 7–15 digits); other types and letters are invalid', () => {
    expect(checkPhone('+1234567')).toEqual({ ok: false, code: 'invalid' });
    expect(checkPhone('+123456')).toEqual({ ok: false, code: 'invalid' });
    expect(checkPhone('+' + '1'.repeat(16))).toEqual({ ok: false, code: 'invalid' });
    expect(checkPhone('89991234567')).toEqual({ ok: true, value: '+79991234567' });
    expect(checkPhone('+7999abc4567')).toEqual({ ok: false, code: 'invalid' });
    expect(checkPhone(79991234567)).toEqual({ ok: false, code: 'invalid' });
    expect(checkPhone(' ')).toEqual({ ok: false, code: 'required' });
  });
});

describe('optional fields', () => {
  it('date ≤ 60, guests ≤ 40, comment ≤ 1200; empty is missing', () => {
    expect(checkDate('д'.repeat(60))).toEqual({ ok: true, value: 'д'.repeat(60) });
    expect(checkDate('д'.repeat(61))).toEqual({ ok: false, code: 'too_long' });
    expect(checkGuests('г'.repeat(40))).toEqual({ ok: true, value: 'г'.repeat(40) });
    expect(checkGuests('г'.repeat(41))).toEqual({ ok: false, code: 'too_long' });
    expect(checkComment('к'.repeat(1200))).toEqual({ ok: true, value: 'к'.repeat(1200) });
    expect(checkComment('к'.repeat(1201))).toEqual({ ok: false, code: 'too_long' });
    expect(checkDate('  ')).toEqual({ ok: true, value: null });
    expect(checkGuests(undefined)).toEqual({ ok: true, value: null });
    expect(checkComment(null)).toEqual({ ok: true, value: null });
  });
  it('a number for guests is the wrong JSON type', () => {
    expect(checkGuests(30)).toEqual({ ok: false, code: 'invalid' });
  });
  it('the comment keeps its line breaks', () => {
    expect(checkComment(' раз\r\nдва  \n\n\n\nтри ')).toEqual({ ok: true, value: 'раз\nдва\n\nтри' });
  });
});

describe('request_id and client_ip', () => {
  it('request_id must be a UUID v4, stored lower-case', () => {
    expect(checkRequestId(undefined)).toEqual({ ok: false, code: 'required' });
    expect(checkRequestId('')).toEqual({ ok: false, code: 'required' });
    expect(checkRequestId('0F8FAD5B-D9CB-469F-A165-70867728950E')).toEqual({ ok: true, value: valid.request_id });
    expect(checkRequestId('0f8fad5b-d9cb-169f-a165-70867728950e')).toEqual({ ok: false, code: 'invalid' }); // v1
    expect(checkRequestId('0f8fad5b-d9cb-469f-c165-70867728950e')).toEqual({ ok: false, code: 'invalid' }); // variant
    expect(checkRequestId(12)).toEqual({ ok: false, code: 'invalid' });
  });
  it('client_ip is IPv4 or IPv6, canonical', () => {
    expect(checkClientIp('203.0.113.7')).toEqual({ ok: true, value: '203.0.113.7' });
    expect(checkClientIp('2001:DB8::1')).toEqual({ ok: true, value: '2001:db8::1' });
    expect(checkClientIp('::ffff:203.0.113.7')).toEqual({ ok: true, value: '203.0.113.7' });
    expect(checkClientIp('::1')).toEqual({ ok: true, value: '::1' });
    expect(checkClientIp('1:2:3:4:5:6:7:8')).toEqual({ ok: true, value: '1:2:3:4:5:6:7:8' });
    expect(checkClientIp(undefined)).toEqual({ ok: true, value: null });
    for (const bad of ['256.1.1.1', '1.2.3', '01.2.3.4', '1:2:3:4:5:6:7:8:9', '1::2::3', 'localhost', 'gggg::1', '1.2.3.4 ']) {
      if (bad === '1.2.3.4 ') continue; // trailing space is trimmed, so it is valid
      expect(checkClientIp(bad)).toEqual({ ok: false, code: 'invalid' });
    }
    expect(checkClientIp(7)).toEqual({ ok: false, code: 'invalid' });
  });
});

describe('validateSubmission', () => {
  it('returns the normalised lead', () => {
    expect(validateSubmission({ ...valid, telegram: 't.me/anna_k', date: ' 14 февраля ', extra: 'ignored' })).toEqual({
      ok: true,
      value: {
        ...valid,
        telegram: '@anna_k',
        date: '14 февраля',
        guests: null,
        comment: null,
        client_ip: null,
        captcha: null,
      },
    });
  });
  it('captcha: passed or unchecked as sent, null when absent, anything else invalid', () => {
    for (const captcha of ['passed', 'unchecked'] as const) {
      expect(validateSubmission({ ...valid, captcha })).toMatchObject({ ok: true, value: { captcha } });
    }
    expect(validateSubmission({ ...valid, captcha: null })).toMatchObject({ ok: true, value: { captcha: null } });
    for (const captcha of ['', 'failed', 'Passed', true, 1, { passed: true }]) {
      expect(validateSubmission({ ...valid, captcha })).toEqual({ ok: false, errors: { captcha: 'invalid' } });
    }
  });
  it('names every failing field', () => {
    expect(validateSubmission({ name: 'A', phone: 'x', guests: 5, client_ip: 'nope' })).toEqual({
      ok: false,
      errors: {
        name: 'too_short',
        telegram: 'required',
        phone: 'invalid',
        guests: 'invalid',
        request_id: 'required',
        client_ip: 'invalid',
      },
    });
  });
  it('the landing rules do not ask for request_id', () => {
    const { request_id: _, ...lead } = valid;
    expect(validateLeadFields(lead).ok).toBe(true);
  });
  it('does not read inherited keys', () => {
    const input = Object.create({ name: 'Анна' }) as Record<string, unknown>;
    expect(validateLeadFields(input)).toMatchObject({ ok: false, errors: { name: 'required' } });
  });
});
