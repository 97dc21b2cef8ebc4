/**
 * The form's errors as the visitor edits (app/leads/field-errors.ts): what goes while a field is typed in, and what the
 * shared rules answer when it is left; the contact pair of `any` and the consent box.
 */
import { describe, expect, it } from 'vitest';
import { errorsAfterEditing, errorsWhileEditing, formErrors, formFieldOf } from '~/leads/field-errors';
import type { FormValues } from '~/leads/form-fields';

const values = (over: Partial<FormValues>): FormValues => ({
  name: 'Ирина',
  telegram: '@irina_k',
  phone: '+7 916 555-12-34',
  date: '',
  guests: '',
  comment: '',
  consent: '',
  ...over,
});

describe('the errors while the visitor edits', () => {
  it("typing takes the field's error away whatever the value so far, and never adds one", () => {
    const shown = { name: 'required' as const, phone: 'invalid' as const };
    expect(errorsWhileEditing(shown, 'name', values({ name: 'И', phone: '12' }), {})).toEqual({ phone: 'invalid' });
    expect(errorsWhileEditing({}, 'name', values({ name: 'И', phone: '12' }), {})).toEqual({});
  });

  it("leaving the field: the rules' answer for its value now; the other marks stay while still found", () => {
    const shown = { name: 'required' as const, phone: 'invalid' as const };
    expect(errorsAfterEditing(shown, 'name', values({ name: 'И', phone: '12' }), {})).toEqual({ name: 'too_short', phone: 'invalid' });
    expect(errorsAfterEditing(shown, 'name', values({ name: 'Ирина', phone: '12' }), {})).toEqual({ phone: 'invalid' });
  });

  it('with `any`, one contact typed answers the pair: the other contact\'s "required" goes too', () => {
    const rules = { requiredContacts: 'any' as const };
    const shown = formErrors(values({ telegram: '', phone: '' }), rules);
    expect(shown).toEqual({ telegram: 'required', phone: 'required' });
    expect(errorsWhileEditing(shown, 'telegram', values({ telegram: '@irina_k', phone: '' }), rules)).toEqual({});
  });

  it('the consent box with a privacy URL: ticked, its error goes; unticked again, it comes back', () => {
    const rules = { privacyUrl: 'https://stickers.example/privacy' };
    expect(formErrors(values({}), rules)).toEqual({ consent: 'required' });
    expect(errorsAfterEditing({ consent: 'required' }, 'consent', values({ consent: 'on' }), rules)).toEqual({});
    expect(errorsAfterEditing({}, 'consent', values({ consent: '' }), rules)).toEqual({ consent: 'required' });
    expect(formErrors(values({}), {})).toEqual({});
  });

  it("only the visitor's fields and the box are checked: not the hidden inputs, the honeypot or the captcha", () => {
    expect(formFieldOf({ name: 'phone' } as unknown as EventTarget)).toBe('phone');
    expect(formFieldOf({ name: 'consent' } as unknown as EventTarget)).toBe('consent');
    for (const name of ['requestId', 'startedAt', 'company', 'cf-turnstile-response', undefined])
      expect(formFieldOf({ name } as unknown as EventTarget)).toBeNull();
  });
});
