import { describe, expect, it } from 'vitest';
import { validateSubmission } from './fields.js';
import { checkSource, cleanSource, refererHost, SOURCE_VALUE_MAX, sourceOfPage, sourceSummary } from './source.js';

const valid = {
  request_id: '2f1c6a3e-8b7d-4c2a-9e1f-0a1b2c3d4e5f',
  name: 'Анна',
  telegram: '@anna_k',
  phone: '+79161234567',
};

describe('checkSource', () => {
  it('no source: absent, null, or every value empty', () => {
    expect(checkSource(undefined)).toEqual({ ok: true, value: undefined });
    expect(checkSource(null)).toEqual({ ok: true, value: undefined });
    expect(checkSource({})).toEqual({ ok: true, value: undefined });
    expect(checkSource({ utm_source: '  ', landing: null })).toEqual({ ok: true, value: undefined });
  });
  it('normalises the values and drops the empty ones', () => {
    expect(
      checkSource({
        landing: ' wedding ',
        utm_source: 'yandex',
        utm_medium: '',
        utm_campaign: 'summer\u200B  sale',
        referrer: 'Yandex.RU',
      }),
    ).toEqual({ ok: true, value: { landing: 'wedding', utm_source: 'yandex', utm_campaign: 'summer sale', referrer: 'yandex.ru' } });
  });
  it('refuses unknown keys, non-text values, markup, long values and a referrer that is not a host', () => {
    for (const raw of [
      'yandex',
      ['yandex'],
      42,
      { utm_source: 'yandex', gclid: 'x' },
      { utm_source: 5 },
      { utm_campaign: { a: 1 } },
      { utm_source: '<b>x</b>' },
      { landing: 'a>b' },
      { utm_term: 'x'.repeat(SOURCE_VALUE_MAX + 1) },
      { referrer: 'https://yandex.ru/search' },
      { referrer: 'a'.repeat(254) },
    ]) {
      expect(checkSource(raw)).toEqual({ ok: false, code: 'invalid' });
    }
    expect(checkSource({ utm_term: 'я'.repeat(SOURCE_VALUE_MAX) })).toMatchObject({ ok: true });
    expect(checkSource({ referrer: `${'a'.repeat(60)}.${'b'.repeat(60)}.ru` })).toMatchObject({ ok: true });
  });
  it('does not read inherited keys', () => {
    expect(checkSource(Object.create({ utm_source: 'yandex' }))).toEqual({ ok: true, value: undefined });
  });
});

describe('validateSubmission with a source', () => {
  it('keeps the checked source', () => {
    const result = validateSubmission({ ...valid, source: { landing: 'wedding', utm_source: 'yandex' } });
    expect(result).toMatchObject({ ok: true, value: { source: { landing: 'wedding', utm_source: 'yandex' } } });
  });
  it('a lead without one has none', () => {
    const result = validateSubmission(valid);
    expect(result.ok && result.value.source).toBeUndefined();
  });
  it('names an invalid source as "source": "invalid"', () => {
    expect(validateSubmission({ ...valid, source: { utm_source: '<script>' } })).toEqual({ ok: false, errors: { source: 'invalid' } });
  });
});

describe('the landing side', () => {
  it('drops each value the server would refuse, alone', () => {
    expect(cleanSource({ landing: 'wedding', utm_source: '<x>', utm_campaign: 'y'.repeat(200), utm_medium: 'cpc' })).toEqual({
      landing: 'wedding',
      utm_medium: 'cpc',
    });
    expect(cleanSource({ utm_source: '' })).toBeUndefined();
  });
  it('reads the page URL, the referrer host and the landing name', () => {
    const params = new URLSearchParams(
      'utm_source=yandex&utm_medium=cpc&utm_campaign=summer&utm_content=banner&utm_term=%D1%81%D0%B2%D0%B0%D0%B4%D1%8C%D0%B1%D0%B0&x=1',
    );
    expect(sourceOfPage(params, { landing: 'wedding', referer: 'https://yandex.ru/search/?text=x', ownHost: 'stickers.example' })).toEqual({
      landing: 'wedding',
      utm_source: 'yandex',
      utm_medium: 'cpc',
      utm_campaign: 'summer',
      utm_content: 'banner',
      utm_term: 'свадьба',
      referrer: 'yandex.ru',
    });
    expect(sourceOfPage(new URLSearchParams(''), { referer: 'https://stickers.example/', ownHost: 'stickers.example' })).toBeUndefined();
    expect(sourceOfPage(new URLSearchParams(''), {})).toBeUndefined();
  });
  it('takes only the host of an http(s) referrer', () => {
    expect(refererHost('https://www.google.com/url?q=1')).toBe('www.google.com');
    expect(refererHost('android-app://org.telegram.messenger/')).toBeNull();
    expect(refererHost('not a url')).toBeNull();
    expect(refererHost(undefined)).toBeNull();
  });
});

describe('sourceSummary', () => {
  it('the landing name, then source / medium / campaign, missing parts left out', () => {
    expect(sourceSummary({ landing: 'wedding', utm_source: 'yandex', utm_medium: 'cpc', utm_campaign: 'summer' })).toBe(
      'wedding · yandex / cpc / summer',
    );
    expect(sourceSummary({ utm_source: 'yandex', utm_campaign: 'summer', utm_term: 'x' })).toBe('yandex / summer');
    expect(sourceSummary({ landing: 'wedding', referrer: 'yandex.ru' })).toBe('wedding');
    expect(sourceSummary({ referrer: 'yandex.ru' })).toBeNull();
    expect(sourceSummary(undefined)).toBeNull();
  });
});
