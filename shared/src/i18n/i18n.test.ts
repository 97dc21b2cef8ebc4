import { describe, expect, it } from 'vitest';
import { FIELD_ERROR_CODES } from '../codes.js';
import { LEAD_FIELDS } from '../fields.js';
import { fieldErrorText, phoneFormats } from '../messages.js';
import { en } from './en.js';
import { FIELD_MESSAGES, LOCALES, parseLocale } from './index.js';
import { ru } from './ru.js';

const CYRILLIC = /[\u0400-\u04FF]/;

/** Every text of a catalogue, its functions called with sample values, by path. */
function texts(value: unknown, path = ''): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (typeof value === 'function') return [[path, String((value as (...a: unknown[]) => unknown)('49'))]];
  return Object.entries(value as object).flatMap(([k, v]) => texts(v, `${path}.${k}`));
}

describe('field catalogues', () => {
  it('ru and en have the same texts', () => {
    expect(texts(en).map(([p]) => p)).toEqual(texts(ru).map(([p]) => p));
  });

  it('en has no Cyrillic, and every field error of every code has an English text', () => {
    expect(texts(en).filter(([, t]) => CYRILLIC.test(t))).toEqual([]);
    for (const field of LEAD_FIELDS) {
      for (const code of FIELD_ERROR_CODES) {
        for (const region of ['RU', 'DE'] as const) {
          expect(fieldErrorText(field, code, { locale: 'en', phoneRegion: region })).not.toMatch(CYRILLIC);
        }
      }
    }
  });

  it('picks the locale: ru by default, en when told', () => {
    expect(fieldErrorText('name', 'required')).toBe('Укажите имя');
    expect(fieldErrorText('name', 'required', { locale: 'en' })).toBe('Enter your name');
    expect(fieldErrorText('phone', 'invalid', { locale: 'en', phoneRegion: 'DE' })).toBe('Phone as +49 and the number, or a local number');
    // In English the hint asks for the country code whatever the region, and the error agrees with it.
    expect(phoneFormats('RU', 'en')).toBe("+7 916 555-12-34, 8 916 555-12-34, or another country's code and number (+1 415 555 2671)");
    expect(Object.keys(FIELD_MESSAGES)).toEqual([...LOCALES]);
  });

  it('reads a locale setting: empty is ru, anything but ru or en is refused with one line', () => {
    expect(parseLocale('LEADS_LOCALE', undefined)).toEqual({ ok: true, value: 'ru' });
    expect(parseLocale('LEADS_LOCALE', ' en ')).toEqual({ ok: true, value: 'en' });
    expect(parseLocale('LANDING_LOCALE', 'de')).toEqual({ ok: false, error: 'LANDING_LOCALE must be one of ru, en (got "de")' });
  });
});
