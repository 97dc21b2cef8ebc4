import { Form, Link, useNavigation } from '@remix-run/react';
import {
  CONSENT_FIELD,
  CONSENT_TEXT,
  CONTACT_OPTIONAL_HINT,
  fieldErrorText,
  isContactRequired,
  phoneHint,
  validateLeadFields,
  type ConsentField,
  type FieldErrors,
  type LeadField,
  type PhoneRegion,
  type RequiredContacts,
} from '@stickers/shared';
import { useEffect, useRef, useState } from 'react';
import { CaptchaWidget } from '../captcha/captcha-widget';
import type { PageCaptcha } from '../captcha/providers';
import { reachGoalOnce, type AnalyticsConfig } from './analytics';
import { HONEYPOT_FIELD, readValues } from './form-fields';
import type { ActionResult } from './lead-form.server';
import { forgetRequestSent, markRequestSent, requestSentRecently } from './request-sent';

interface Props {
  requestId: string;
  startedAt: string;
  /** LEADS_PHONE_REGION, from the loader: the browser reads a phone as the action will (RU when absent). */
  phoneRegion?: PhoneRegion;
  /** LEADS_REQUIRED_CONTACTS, from the loader: which contacts are required (both when absent). */
  requiredContacts?: RequiredContacts;
  /** LANDING_PRIVACY_URL, from the loader: with it the form has a required consent box linking to the policy. */
  privacyUrl?: string | null;
  /** The server saw the "sent" cookie. */
  sentBefore: boolean;
  /** The page's UTM values and referrer host, carried to the action in hidden inputs. */
  source?: Partial<Record<string, string>>;
  result: ActionResult | undefined;
  /** The configured analytics counter and goal; null: none. */
  analytics?: AnalyticsConfig | null;
  /** The captcha's widget (CAPTCHA_PROVIDER and its site key); null: no captcha. */
  captcha?: PageCaptcha | null;
}

const FIELDS: { name: LeadField; label: string; type?: string; required?: boolean; hint?: string; autoComplete?: string }[] = [
  { name: 'name', label: 'Имя', required: true, autoComplete: 'name' },
  // The contacts' `required` follows LEADS_REQUIRED_CONTACTS: set in LeadForm.
  { name: 'telegram', label: 'Ник в Telegram', required: true, hint: '@name или ссылка t.me/name', autoComplete: 'off' },
  // The phone's hint depends on the region: set in LeadForm.
  { name: 'phone', label: 'Телефон', type: 'tel', required: true, autoComplete: 'tel' },
  { name: 'date', label: 'Дата события', hint: 'необязательно' },
  { name: 'guests', label: 'Сколько гостей или героев', hint: 'необязательно' },
];

const STATE_TEXT = {
  throttled: 'Слишком много заявок подряд. Попробуйте через несколько минут — всё введённое сохранено.',
  error: 'Не получилось отправить заявку. Попробуйте ещё раз — всё введённое сохранено. Или напишите нам в Telegram.',
  invalid: 'Проверьте поля, отмеченные ниже.',
  expired: 'Форма долго была открыта — проверьте данные и нажмите «Отправить заявку» ещё раз.',
  captcha: 'Пройдите проверку ещё раз — всё введённое сохранено.',
} as const;

/** The browser's localStorage, or null where reading it throws (blocked storage). */
function localStorageOrNull(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

/** A contact's hint in the mode: `необязательно` added when it may be left out (`any`, or only the other required). */
function contactHint(field: 'telegram' | 'phone', hint: string | undefined, mode: RequiredContacts): string | undefined {
  if (isContactRequired(field, mode)) return hint;
  if (mode === 'any') return `${hint} · ${field === 'telegram' ? 'или телефон' : 'или ник в Telegram'}`;
  return `${hint} · ${CONTACT_OPTIONAL_HINT}`;
}

export function LeadForm({
  requestId,
  startedAt,
  phoneRegion,
  requiredContacts = 'telegram,phone',
  privacyUrl = null,
  sentBefore,
  source,
  result,
  analytics = null,
  captcha = null,
}: Props) {
  const navigation = useNavigation();
  const submitting = navigation.state === 'submitting';
  const [clientErrors, setClientErrors] = useState<FieldErrors<LeadField | ConsentField> | null>(null);
  const [sentInBrowser, setSentInBrowser] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);

  useEffect(() => {
    if (result?.state === 'sent') markRequestSent(window.localStorage);
  }, [result]);
  useEffect(() => {
    // Only the action's answer for a delivered request carries `goal`; a reload or a later visit shows the sent
    // screen from the sent memory, without it. Once per request id, even when the same request is answered again.
    if (result?.state === 'sent' && result.goal && analytics) {
      reachGoalOnce(analytics, result.requestId, window as unknown as Record<string, unknown>, localStorageOrNull());
    }
  }, [result, analytics]);
  useEffect(() => {
    setSentInBrowser(requestSentRecently(window.localStorage));
  }, []);

  const sent = result ? result.state === 'sent' : sentBefore || sentInBrowser;
  if (sent) {
    return (
      <div className="result" role="status" data-state="sent">
        <p className="done">{result?.leadNumber ? `Заявка №${result.leadNumber} отправлена!` : 'Заявка отправлена!'}</p>
        <p>Мы напишем вам в Telegram в течение рабочего дня.</p>
        <p>
          <Link to="/?again" reloadDocument onClick={() => forgetRequestSent(window.localStorage)}>
            Отправить ещё одну заявку
          </Link>
        </p>
      </div>
    );
  }

  const errors = clientErrors ?? result?.errors ?? {};
  const values = result?.values;
  const state = clientErrors && Object.keys(clientErrors).length > 0 ? 'invalid' : result?.state;
  // A retry keeps the request id and its token (the page's own token is for the page's fresh request id); after
  // `expired` the token is a fresh one the action signed for that same request id.
  const id = result?.requestId ?? requestId;
  const token = result?.startedAt ?? startedAt;
  const sourceInputs = Object.entries(result?.source ?? source ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string');

  const message =
    state && state !== 'sent' ? (
      <div id="form-result" className={`result ${state}`} role="alert" data-state={state}>
        {STATE_TEXT[state]}
      </div>
    ) : null;

  return (
    <Form
      method="post"
      ref={formRef}
      noValidate
      aria-describedby={state ? 'form-result' : undefined}
      onSubmit={(event) => {
        // The same shared rules as the server, before anything is sent; and the consent box, as the action checks it.
        const values = readValues(new FormData(event.currentTarget));
        const checked = validateLeadFields(values, { phoneRegion, requiredContacts });
        const found: FieldErrors<LeadField | ConsentField> = {
          ...(checked.ok ? {} : checked.errors),
          ...(privacyUrl && values.consent !== 'on' ? { [CONSENT_FIELD]: 'required' as const } : {}),
        };
        if (Object.keys(found).length > 0) {
          event.preventDefault();
          setClientErrors(found);
          const first = Object.keys(found)[0];
          formRef.current?.querySelector<HTMLElement>(`[name="${first}"]`)?.focus();
        } else {
          setClientErrors(null);
        }
      }}
    >
      {state !== 'expired' ? message : null}
      <input type="hidden" name="requestId" value={id} />
      <input type="hidden" name="startedAt" value={token} />
      {sourceInputs.map(([key, value]) => (
        <input key={key} type="hidden" name={key} value={value} />
      ))}
      <div className="trap" aria-hidden="true">
        <label>
          Компания
          <input type="text" name={HONEYPOT_FIELD} tabIndex={-1} autoComplete="off" defaultValue="" />
        </label>
      </div>
      {FIELDS.map((f) => (
        <Field
          key={f.name}
          {...f}
          required={f.name === 'telegram' || f.name === 'phone' ? isContactRequired(f.name, requiredContacts) : f.required}
          hint={
            f.name === 'phone'
              ? contactHint('phone', phoneHint(phoneRegion), requiredContacts)
              : f.name === 'telegram'
                ? contactHint('telegram', f.hint, requiredContacts)
                : f.hint
          }
          phoneRegion={phoneRegion}
          requiredContacts={requiredContacts}
          error={errors[f.name]}
          defaultValue={values?.[f.name]}
        />
      ))}
      <Field
        name="comment"
        label="Что хотите получить"
        hint="необязательно"
        multiline
        error={errors.comment}
        defaultValue={values?.comment}
      />
      {privacyUrl ? <ConsentBox privacyUrl={privacyUrl} error={errors.consent} checked={values?.consent === 'on'} /> : null}
      {captcha ? (
        // A new answer of the action other than field errors: the token was used or refused, the widget starts over.
        <CaptchaWidget captcha={captcha} resetKey={result && result.state !== 'invalid' ? result : null} />
      ) : null}
      {/* "Send again" is about the button, so it stands next to it; the other messages head the form. */}
      {state === 'expired' ? message : null}
      <button type="submit" disabled={submitting} aria-busy={submitting}>
        {submitting ? 'Отправляем…' : 'Отправить заявку'}
      </button>
      {privacyUrl ? null : <p className="fine">Нажимая кнопку, вы соглашаетесь на обработку контактов для ответа на заявку.</p>}
    </Form>
  );
}

function Field(props: {
  name: LeadField;
  label: string;
  type?: string;
  required?: boolean;
  hint?: string;
  autoComplete?: string;
  multiline?: boolean;
  error?: string;
  defaultValue?: string;
  phoneRegion?: PhoneRegion;
  requiredContacts?: RequiredContacts;
}) {
  const { name, label, type, required, hint, autoComplete, multiline, error, defaultValue, phoneRegion, requiredContacts } = props;
  const errorId = `${name}-error`;
  const hintId = `${name}-hint`;
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined;
  const common = {
    id: name,
    name,
    required,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
    defaultValue: defaultValue ?? '',
    autoComplete,
  };
  return (
    <div className={`field${error ? ' has-error' : ''}`}>
      <label htmlFor={name}>
        {label}
        {required ? <span aria-hidden="true"> *</span> : null}
      </label>
      {multiline ? <textarea rows={4} {...common} /> : <input type={type ?? 'text'} {...common} />}
      {hint ? (
        <span className="hint" id={hintId}>
          {hint}
        </span>
      ) : null}
      {error ? (
        <span className="error" id={errorId} data-error-for={name}>
          {fieldErrorText(name, error as never, { phoneRegion, requiredContacts })}
        </span>
      ) : null}
    </div>
  );
}

/**
 * The consent box (with LANDING_PRIVACY_URL): a real required checkbox with its label and the policy's link (in a new
 * tab, so the typed form stays), its error next to it. `checked`: the visitor's tick, kept when the form comes back.
 */
function ConsentBox({ privacyUrl, error, checked }: { privacyUrl: string; error?: string; checked: boolean }) {
  const errorId = `${CONSENT_FIELD}-error`;
  return (
    <div className={`field consent${error ? ' has-error' : ''}`}>
      <label htmlFor={CONSENT_FIELD}>
        <input
          type="checkbox"
          id={CONSENT_FIELD}
          name={CONSENT_FIELD}
          required
          defaultChecked={checked}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? errorId : undefined}
        />{' '}
        {CONSENT_TEXT.before}
        <a href={privacyUrl} target="_blank" rel="noopener">
          {CONSENT_TEXT.link}
        </a>
        <span aria-hidden="true"> *</span>
      </label>
      {error ? (
        <span className="error" id={errorId} data-error-for={CONSENT_FIELD}>
          {fieldErrorText(CONSENT_FIELD, error as never)}
        </span>
      ) : null}
    </div>
  );
}
