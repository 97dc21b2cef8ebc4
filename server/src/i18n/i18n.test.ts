// The catalogues (docs/requirements.md, "Languages"): en has every text ru has and no Cyrillic; ru writes times as it
// always did.
import { LEAD_STATUSES } from '../domain/lead-status';
import { statusButtons } from '../cards/lead-statuses';
import { en } from './en';
import { CATALOGUES, formatTime } from './index';
import { ru } from './ru';

const CYRILLIC = /[\u0400-\u04FF]/;

/** Every text of a catalogue by path; a function is called with sample values of the types it takes. */
function texts(value: unknown, path = ''): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (typeof value === 'function') {
    const fn = value as (...args: unknown[]) => unknown;
    return [[path, String(fn(...Array.from({ length: fn.length }, (_, i) => (i % 2 === 0 ? 7 : 'x'))))]];
  }
  return Object.entries(value as object).flatMap(([k, v]) => texts(v, `${path}.${k}`));
}

describe('server catalogues', () => {
  it('ru and en have the same texts, with the same parameters', () => {
    expect(texts(en).map(([p]) => p)).toEqual(texts(ru).map(([p]) => p));
    const at = (m: object, path: string): unknown =>
      path
        .split('.')
        .slice(1)
        .reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], m);
    const arity = (m: object) =>
      texts(m).map(([p]) => {
        const v = at(m, p);
        return typeof v === 'function' ? v.length : 'text';
      });
    expect(arity(en)).toEqual(arity(ru));
  });

  it('en has no Cyrillic anywhere', () => {
    expect(texts(en).filter(([, t]) => CYRILLIC.test(t))).toEqual([]);
  });

  it('one and several: a day, a repeat, a request (en), заявке and заявкам (ru)', () => {
    expect(en.card.moreRepeats(1)).toBe('…and 1 more repeat');
    expect(en.card.moreRepeats(2)).toBe('…and 2 more repeats');
    expect(en.commands.exportCaption(1, 3)).toBe('Leads for 1 day: 3');
    expect(en.commands.exported(1, 1)).toBe('📎 Export for 1 day: 1 lead (file above).');
    expect(en.commands.exported(30, 2)).toBe('📎 Export for 30 days: 2 leads (file above).');
    expect(en.commands.forgetContact('1 (#2)')).toBe('🗑 Anonymised (personal data erased, cards updated): 1 (#2).');
    expect(en.conversation.stopped('#33')).toContain('about request #33 again');
    expect(en.conversation.stopped('#33, #34')).toContain('about requests #33, #34 again');
    expect(ru.conversation.stopped('#33')).toContain('по заявке #33.');
    expect(ru.conversation.stopped('#33, #34')).toContain('по заявкам #33, #34.');
  });

  it('every status and every button of every status has a word in each locale', () => {
    for (const t of Object.values(CATALOGUES)) {
      for (const s of LEAD_STATUSES) {
        expect(t.statuses[s]).toBeTruthy();
        for (const b of statusButtons(t, s)) expect(b.text).toBeTruthy();
      }
    }
  });

  it('times: ru as always (dd.mm.yyyy HH:MM), en in its own format, both in the time zone', () => {
    const at = Date.UTC(2026, 10, 29, 21, 5);
    expect(formatTime(at, 'Europe/Moscow', ru.intl)).toBe('30.11.2026 00:05');
    expect(formatTime(at, 'Europe/Moscow', ru.intl)).toBe(
      new Intl.DateTimeFormat('ru-RU', {
        timeZone: 'Europe/Moscow',
        day: '2-digit',
        month: '2-digit',
        year: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
      })
        .format(at)
        .replace(',', ''),
    );
    expect(formatTime(at, 'Europe/Moscow', en.intl)).toBe('11/30/2026 12:05 AM');
    expect(formatTime(at, 'UTC', en.intl)).toBe('11/29/2026 09:05 PM');
  });
  it("counts leads in the form each language gives the number: ru's one, few and many, en's one and other", () => {
    const ruCounts = [1, 2, 5, 11, 21, 22, 25, 111].map((n) => ru.commands.exported(7, n).replace(/^.*: | \(.*$/g, ''));
    expect(ruCounts).toEqual(['1 заявка', '2 заявки', '5 заявок', '11 заявок', '21 заявка', '22 заявки', '25 заявок', '111 заявок']);
    expect([0, 1, 2].map((n) => en.commands.exported(7, n))).toEqual([
      '📎 Export for 7 days: 0 leads (file above).',
      '📎 Export for 7 days: 1 lead (file above).',
      '📎 Export for 7 days: 2 leads (file above).',
    ]);
    expect([0, 1, 2].map((n) => en.reports.digestTitle(n))).toEqual([
      '🗓 Daily digest: 0 leads',
      '🗓 Daily digest: 1 lead',
      '🗓 Daily digest: 2 leads',
    ]);
  });
});
