/**
 * The form's parts (lead-form.tsx's `LeadForm` puts them together): a field with its label, hint, count and error, the
 * consent box, the error state's contact, and the sent screen's Telegram link.
 */
import {
  CONSENT_FIELD,
  FIELD_MESSAGES,
  fieldErrorText,
  normaliseMultiline,
  visibleLength,
  type LeadField,
  type Locale,
  type PhoneRegion,
  type RequiredContacts,
} from '@stickers/shared';
import { useState } from 'react';

/** A bounded field's count shows within this many characters of its bound (the comment: from 1000 of 1200). */
const COUNT_SHOWN_WITHIN = 200;

/** One field: its label (`*` when required), the input or textarea, its hint, its count near a bound, its error. */
export function Field(props: {
  name: LeadField;
  label: string;
  type?: string;
  required?: boolean;
  hint?: string;
  autoComplete?: string;
  verbatim?: boolean;
  multiline?: boolean;
  /** The field's bound (the comment's 1200): a quiet count shows once the text comes near it. */
  max?: number;
  error?: string;
  defaultValue?: string;
  phoneRegion?: PhoneRegion;
  requiredContacts?: RequiredContacts;
  locale: Locale;
}) {
  const {
    name,
    label,
    type,
    required,
    hint,
    autoComplete,
    verbatim,
    multiline,
    max,
    error,
    defaultValue,
    phoneRegion,
    requiredContacts,
    locale,
  } = props;
  // Counted as the rules count it: after normalisation, a character as a person sees it.
  const count = (text: string) => visibleLength(normaliseMultiline(text));
  const [length, setLength] = useState(() => (max ? count(defaultValue ?? '') : 0));
  const counted = max !== undefined && length >= max - COUNT_SHOWN_WITHIN;
  const errorId = `${name}-error`;
  const hintId = `${name}-hint`;
  const countId = `${name}-count`;
  const describedBy = [hint ? hintId : null, counted ? countId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined;
  const common = {
    id: name,
    name,
    required,
    'aria-invalid': !!error,
    'aria-describedby': describedBy,
    defaultValue: defaultValue ?? '',
    autoComplete,
    ...(verbatim ? { autoCapitalize: 'none', autoCorrect: 'off', spellCheck: false } : {}),
  };
  return (
    <div className={`field${error ? ' has-error' : ''}`}>
      <label htmlFor={name}>
        {label}
        {required ? <span aria-hidden="true"> *</span> : null}
      </label>
      {multiline ? (
        <textarea rows={4} {...common} onInput={max ? (event) => setLength(count(event.currentTarget.value)) : undefined} />
      ) : (
        <input type={type ?? 'text'} {...common} />
      )}
      {hint ? (
        <span className="hint" id={hintId}>
          {hint}
        </span>
      ) : null}
      {counted ? (
        // Not a live region: read with the field, never at each key.
        <span className={`hint count${length > max ? ' over' : ''}`} id={countId}>
          {length} / {max}
        </span>
      ) : null}
      {error ? (
        <span className="error" id={errorId} data-error-for={name}>
          {fieldErrorText(name, error as never, { phoneRegion, requiredContacts, locale })}
        </span>
      ) : null}
    </div>
  );
}

/**
 * The consent box (with LANDING_PRIVACY_URL): a real required checkbox with its label and the policy's link (in a new
 * tab, so the typed form stays), its error next to it. `checked`: the visitor's tick, kept when the form comes back.
 */
export function ConsentBox({
  privacyUrl,
  error,
  checked,
  locale,
}: {
  privacyUrl: string;
  error?: string;
  checked: boolean;
  locale: Locale;
}) {
  const errorId = `${CONSENT_FIELD}-error`;
  const text = FIELD_MESSAGES[locale].consent;
  return (
    <div className={`field consent${error ? ' has-error' : ''}`}>
      <label htmlFor={CONSENT_FIELD}>
        <input
          type="checkbox"
          id={CONSENT_FIELD}
          name={CONSENT_FIELD}
          required
          defaultChecked={checked}
          aria-invalid={!!error}
          aria-describedby={error ? errorId : undefined}
        />
        <span>
          {text.before}
          <a href={privacyUrl} target="_blank" rel="noopener">
            {text.link}
          </a>
          <span aria-hidden="true"> *</span>
        </span>
      </label>
      {error ? (
        <span className="error" id={errorId} data-error-for={CONSENT_FIELD}>
          {fieldErrorText(CONSENT_FIELD, error as never, { locale })}
        </span>
      ) : null}
    </div>
  );
}

/**
 * The sent screen's "Continue in Telegram": a plain link (it works without JavaScript too) that opens the business's
 * bot, which then knows the visitor's lead.
 */
export function TelegramLink({ href, label }: { href: string; label: string }) {
  return (
    <p className="telegram-link">
      <a href={href} rel="noopener noreferrer" target="_blank">
        {label}
      </a>
    </p>
  );
}

/** The error state's other way (LANDING_TELEGRAM_CONTACT): the studio's Telegram, in a new tab so the typed form stays. */
export function TeamContact({ username, before }: { username: string; before: string }) {
  return (
    <>
      {' '}
      {before}
      <a href={`https://t.me/${username.slice(1)}`} target="_blank" rel="noopener noreferrer">
        {username}
      </a>
    </>
  );
}
