import { retryAfterSeconds } from '../http/api-error';
import { changedFields, checkSubmission, type SubmissionRules } from './lead-submission';

const NOW = Date.UTC(2026, 11, 5, 12, 0);
const RULES: SubmissionRules = { phoneRegion: 'RU', requiredContacts: 'telegram,phone', requireConsent: false };
/** The 422's text a body would get, or 'passed'. */
function answer(body: Record<string, unknown>, rules: Partial<SubmissionRules> = {}): string {
  const checked = checkSubmission(body, { ...RULES, ...rules }, NOW);
  return checked.ok ? 'passed' : `422 ${JSON.stringify({ error: 'invalid', errors: checked.errors })}`;
}

describe("checkSubmission: POST /leads's body by shared's rules", () => {
  it('names every refused field with its code in the order shared names them, late and consent last', () => {
    const body = { name: 'A', telegram: '@ab', phone: '12', late: { route: 'nowhere' }, consent: 'yes', extra: 1 };
    expect(answer(body)).toBe(
      '422 {"error":"invalid","errors":{"name":"too_short","telegram":"invalid","phone":"invalid","request_id":"required","late":"invalid","consent":"invalid"}}',
    );
    expect(answer({ name: 'Анна', telegram: '@anna_k', phone: '+79991234567' }, { requireConsent: true })).toBe(
      '422 {"error":"invalid","errors":{"request_id":"required","consent":"required"}}',
    );
  });

  it('with any one contact, names a missing pair after source and before late, as shared does', () => {
    const body = { name: 'Анна', request_id: 'nope', source: 7, late: 'soon' };
    expect(answer(body, { requiredContacts: 'any' })).toBe(
      '422 {"error":"invalid","errors":{"request_id":"invalid","source":"invalid","telegram":"required","phone":"required","late":"invalid"}}',
    );
  });

  it('lets a good body through, keys no rule names too', () => {
    const body = { request_id: crypto.randomUUID(), name: 'Анна', telegram: '@anna_k', phone: '+79991234567', extra: 'kept' };
    expect(answer(body)).toBe('passed');
  });
});

describe('changedFields (requirements §1.4: a repeat keeps the fields that differ)', () => {
  const stored = { name: 'Анна', telegram: '@Anna_K', phone: '+79991234567', date: null, guests: '30', comment: 'свадьба' };
  it('keeps only differing, non-empty fields', () => {
    expect(
      changedFields(stored, {
        name: 'Анна',
        telegram: '@anna_k',
        phone: '+79990000000',
        date: '1 марта',
        guests: null,
        comment: 'свадьба',
      }),
    ).toEqual({ phone: '+79990000000', date: '1 марта' });
  });
  it('is empty for the same request again', () => {
    expect(changedFields(stored, { ...stored })).toEqual({});
  });
});

describe('retryAfterSeconds', () => {
  it('rounds up to whole seconds, at least 1', () => {
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(0)).toBe(1);
    expect(retryAfterSeconds(1000)).toBe(1);
    expect(retryAfterSeconds(1001)).toBe(2);
  });
});
