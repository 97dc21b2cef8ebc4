import { retryAfterSeconds } from '../http/api-error';
import { changedFields } from './submit-decision';

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
