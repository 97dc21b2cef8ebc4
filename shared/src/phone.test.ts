import { describe, expect, it } from 'vitest';
import { checkPhone, validateLeadFields, validateSubmission } from './fields.js';
import { fieldErrorText, phoneHint } from './messages.js';
import { formatPhone, normalisePhone, parsePhoneRegion, PHONE_TEXT_MAX } from './phone.js';

const lead = { name: 'Анна', telegram: '@anna_k' };

describe('phone numbers as typed (default region RU)', () => {
  it.each([
    '8 916 555-12-34',
    '89165551234',
    '8 (916) 555 12 34',
    '9165551234',
    '+7 916 555-12-34',
    '0079165551234',
    '8.916.555.12.34',
    '+7 (916) 555-12-34',
    '  8-916-555-12-34  ',
    '8 916\u00a0555 12 34',
  ])('%j is +79165551234', (typed) => {
    expect(checkPhone(typed)).toEqual({ ok: true, value: '+79165551234' });
    expect(checkPhone(typed, 'RU')).toEqual({ ok: true, value: '+79165551234' });
  });

  it.each([
    ['+7 916 555\u201112\u201134', 'non-breaking hyphens (U+2011)'],
    ['8 916 555\u201312\u201334', 'en dashes (U+2013)'],
    ['8\u2010916\u2010555\u201012\u201034', 'hyphens (U+2010)'],
    ['8 916 555\u201212\u201234', 'figure dashes (U+2012)'],
    ['8 916 555\u201412\u201434', 'em dashes (U+2014)'],
    ['8 916 555\u221212\u221234', 'minus signs (U+2212)'],
    ['+7\u00a0916\u00a0555\u00a012\u00a034', 'no-break spaces (U+00A0)'],
    ['+7\u202f916\u202f555\u202f12\u202f34', 'narrow no-break spaces (U+202F)'],
    ['+7\u2009916\u2009555\u200912\u200934', 'thin spaces (U+2009)'],
    ['\uff0b\uff17 \uff19\uff11\uff16 \uff15\uff15\uff15\uff0d\uff11\uff12\uff0d\uff13\uff14', 'full-width plus, digits and hyphen'],
    ['\uff18\uff08\uff19\uff11\uff16\uff09\uff15\uff15\uff15\uff11\uff12\uff13\uff14', 'full-width digits and brackets'],
  ])('%j, with %s, is +79165551234 like the ASCII spelling it looks like', (typed) => {
    expect(checkPhone(typed)).toEqual({ ok: true, value: '+79165551234' });
  });

  it('a look-alike is read as its ASCII character only: letters and a plus inside stay refused', () => {
    expect(checkPhone('\uff0b7 916 555\u201312\u201334 доб. 5')).toEqual({ ok: false, code: 'invalid' });
    expect(checkPhone('7\uff0b9165551234')).toEqual({ ok: false, code: 'invalid' });
    expect(checkPhone('\u2212\u2212')).toEqual({ ok: false, code: 'invalid' });
  });

  it('a number of another country with + or 00 is kept in its own country', () => {
    expect(checkPhone('+49 30 12345678')).toEqual({ ok: true, value: '+493012345678' });
    expect(checkPhone('0049 30 12345678')).toEqual({ ok: true, value: '+493012345678' });
    expect(checkPhone('+7 701 123 45 67')).toEqual({ ok: true, value: '+77011234567' });
  });

  it.each([
    ['+7 123', 'too short'],
    ['8 000 000-00-00', 'possible length, but no Russian number starts so'],
    ['+7 916 555-12-345', 'too long'],
    ['8 916 555-12-34-5', 'too long'],
    ['8916555123456789', 'too long'],
    ['916 555', 'too short'],
    ['+8 916 555-12-34', 'no such country code'],
    ['00', 'nothing after the prefix'],
    ['+', 'nothing after the plus'],
    ['+7 916 555-12-34 доб. 5', 'an extension would be dropped'],
    ['8 916 CALL-ME', 'letters'],
    ['7+9165551234', 'a plus inside'],
    ['030 12345678', 'a German national number is not Russian'],
  ])('%j is refused (%s)', (typed) => {
    expect(checkPhone(typed)).toEqual({ ok: false, code: 'invalid' });
  });

  it('a text longer than any typed number is refused before it is parsed', () => {
    expect(normalisePhone(`+7 916 555-12-34${' '.repeat(PHONE_TEXT_MAX)}`)).toBeNull();
    expect(checkPhone('8'.repeat(10_000))).toEqual({ ok: false, code: 'invalid' });
  });

  it('E.164 is accepted again unchanged in any region', () => {
    for (const region of ['RU', 'DE', 'US', 'KZ'] as const) {
      expect(checkPhone('+79165551234', region)).toEqual({ ok: true, value: '+79165551234' });
    }
  });
});

describe('another default region (LEADS_PHONE_REGION=DE)', () => {
  it('reads German national numbers; a Russian national spelling is read as German there', () => {
    expect(checkPhone('030 12345678', 'DE')).toEqual({ ok: true, value: '+493012345678' });
    expect(checkPhone('0171 1234567', 'DE')).toEqual({ ok: true, value: '+491711234567' });
    expect(checkPhone('+7 916 555-12-34', 'DE')).toEqual({ ok: true, value: '+79165551234' });
    // 89… is Munich's area code without its trunk 0: the region decides whose number this is.
    expect(checkPhone('8 916 555-12-34', 'DE')).toEqual({ ok: true, value: '+4989165551234' });
  });

  it('the checks take the region as an option; without it, RU', () => {
    expect(validateLeadFields({ ...lead, phone: '030 12345678' }, { phoneRegion: 'DE' })).toMatchObject({
      ok: true,
      value: { phone: '+493012345678' },
    });
    expect(validateLeadFields({ ...lead, phone: '030 12345678' })).toMatchObject({ ok: false, errors: { phone: 'invalid' } });
    const body = { ...lead, request_id: '0f8fad5b-d9cb-469f-a165-70867728950e', phone: '0171 1234567' };
    expect(validateSubmission(body, { phoneRegion: 'DE' })).toMatchObject({ ok: true, value: { phone: '+491711234567' } });
    expect(validateSubmission({ ...body, phone: '8 (916) 555 12 34' })).toMatchObject({ ok: true, value: { phone: '+79165551234' } });
  });
});

describe('LEADS_PHONE_REGION', () => {
  it('defaults to RU, takes any case, refuses a code libphonenumber does not know with one line', () => {
    expect(parsePhoneRegion(undefined)).toEqual({ ok: true, value: 'RU' });
    expect(parsePhoneRegion('  ')).toEqual({ ok: true, value: 'RU' });
    expect(parsePhoneRegion('de')).toEqual({ ok: true, value: 'DE' });
    expect(parsePhoneRegion(' KZ ')).toEqual({ ok: true, value: 'KZ' });
    for (const bad of ['XX', 'RUS', 'Russia', '7', 'R']) {
      expect(parsePhoneRegion(bad)).toEqual({
        ok: false,
        error: `LEADS_PHONE_REGION must be a two-letter country code (ISO 3166) libphonenumber knows, like RU or DE (got "${bad}")`,
      });
    }
  });
});

describe('the form text', () => {
  it('shows how to write a number in the region', () => {
    expect(fieldErrorText('phone', 'invalid')).toBe('Телефон в формате +7 916 555-12-34 или 8 916 555-12-34');
    expect(fieldErrorText('phone', 'invalid', { phoneRegion: 'RU' })).toBe('Телефон в формате +7 916 555-12-34 или 8 916 555-12-34');
    expect(fieldErrorText('phone', 'invalid', { phoneRegion: 'DE' })).toBe('Телефон в формате +49 и номер или местный номер');
    expect(fieldErrorText('phone', 'required', { phoneRegion: 'DE' })).toBe('Укажите телефон');
    expect(phoneHint('DE')).toBe('Например: +49 …');
  });

  it("the hint reads as an example, not as the studio's number; in English it asks for the country code", () => {
    expect(phoneHint()).toBe('Например: +7 916 555-12-34');
    expect(phoneHint('RU', 'ru')).toBe('Например: +7 916 555-12-34');
    // The hint's example is the error's own.
    expect(fieldErrorText('phone', 'invalid')).toContain('+7 916 555-12-34');
    // A US number typed without +1 is read as a Russian one (10 digits, RU): the English hint asks for the code.
    expect(phoneHint('RU', 'en')).toBe('With the country code, e.g. +1 415 555 2671');
    expect(phoneHint('DE', 'en')).toBe('With the country code, e.g. +1 415 555 2671');
    expect(checkPhone('+1 415 555 2671')).toEqual({ ok: true, value: '+14155552671' });
  });
});

describe('formatPhone', () => {
  it("writes a stored number in its numbering plan's groups, and leaves what it cannot read as it is", () => {
    expect(formatPhone('+79165551234')).toBe('+7 916 555 12 34');
    expect(formatPhone('+4915112345678')).toBe('+49 1511 2345678');
    expect(formatPhone(normalisePhone('8 (916) 555-12-34')!)).toBe('+7 916 555 12 34');
    expect(formatPhone('not a phone')).toBe('not a phone');
  });
});
