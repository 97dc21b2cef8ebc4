import { Form, Link, useLocation, useNavigation } from '@remix-run/react';
import {
  COMMENT_MAX,
  CONSENT_FIELD,
  DEFAULT_LOCALE,
  FIELD_MESSAGES,
  isContactRequired,
  phoneHint,
  type LeadField,
  type Locale,
  type PhoneRegion,
  type RequiredContacts,
} from '@stickers/shared';
import { useEffect, useRef, useState } from 'react';
import { LANDING_MESSAGES } from '~/i18n';
import { CaptchaWidget } from '../captcha/captcha-widget';
import type { PageCaptcha } from '../captcha/providers';
import { reachGoalOnce, type AnalyticsConfig } from './analytics';
import {
  errorsAfterEditing,
  errorsWhileEditing,
  formErrors,
  formFieldOf,
  sameErrors,
  type FormErrors,
  type FormField,
} from './field-errors';
import { HONEYPOT_FIELD, readValues } from './form-fields';
import { ConsentBox, Field, TeamContact, TelegramLink } from './form-parts';
import type { ActionResult, FormState } from './lead-form.server';
import { againHref, forgetRequestSent, localStorageOrNull, markRequestSent, rememberedSent, type RememberedSent } from './request-sent';

interface Props {
  /** LANDING_LOCALE, from the loader: the catalogue every text of the form comes from (`ru` when absent). */
  locale?: Locale;
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
  /** LANDING_TELEGRAM_CONTACT (`@stickers_studio`): the error state links it; null: it offers no other way. */
  telegramContact?: string | null;
}

/** The one-line inputs, in order; their labels and hints are the catalogue's (`form`). */
/** `verbatim`: typed as is, with no capital letter or correction from a phone's keyboard (a username). */
const FIELDS: {
  name: LeadField;
  type?: string;
  required?: boolean;
  hint?: 'telegram' | 'optional';
  autoComplete?: string;
  verbatim?: boolean;
}[] = [
  { name: 'name', required: true, autoComplete: 'name' },
  // The contacts' `required` follows LEADS_REQUIRED_CONTACTS: set in LeadForm.
  { name: 'telegram', required: true, hint: 'telegram', autoComplete: 'off', verbatim: true },
  // The phone's hint depends on the region: set in LeadForm.
  { name: 'phone', type: 'tel', required: true, autoComplete: 'tel' },
  { name: 'date', hint: 'optional' },
  { name: 'guests', hint: 'optional' },
];

/**
 * Where an answer's message stands: "check the fields marked below" heads the form, above the marks; every other one
 * (not sent, too many, send again, pass the check again) is about the button, so it stands right above it, where the
 * focus comes back after the post: on a phone's screen the top of the form is out of view by then.
 */
function byButton(state: FormState): boolean {
  return state !== 'invalid' && state !== 'sent';
}

/** A contact's hint in the mode: "optional" added when it may be left out (`any`, or only the other required). */
function contactHint(field: 'telegram' | 'phone', hint: string, mode: RequiredContacts, locale: Locale): string {
  if (isContactRequired(field, mode)) return hint;
  const m = FIELD_MESSAGES[locale];
  return `${hint} · ${mode === 'any' ? m.contactOr[field] : m.contactOptional}`;
}

export function LeadForm({
  locale = DEFAULT_LOCALE,
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
  telegramContact = null,
}: Props) {
  const t = LANDING_MESSAGES[locale];
  const navigation = useNavigation();
  const location = useLocation();
  const submitting = navigation.state === 'submitting';
  // The errors the browser shows instead of the action's: found before sending, or the shown ones as edits fix them.
  const [clientErrors, setClientErrors] = useState<FormErrors | null>(null);
  // The sent memory of this browser (its number and link), read after hydration; null: none, or not read yet.
  const [remembered, setRemembered] = useState<RememberedSent | null>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const sentHeading = useRef<HTMLHeadingElement>(null);
  // Fields marked since the last submit (checked again when the visitor leaves them after an edit), and the fields
  // edited since the visitor entered them.
  const watched = useRef(new Set<FormField>());
  const edited = useRef(new Set<FormField>());
  const rules = { phoneRegion, requiredContacts, privacyUrl };

  useEffect(() => {
    for (const field of Object.keys(result?.errors ?? {}) as FormField[]) watched.current.add(field);
  }, [result]);

  useEffect(() => {
    if (result?.state !== 'sent') return;
    markRequestSent(localStorageOrNull(), { leadNumber: result.leadNumber, telegramLink: result.telegramLink });
    // The sent screen replaces the form and the button that had the focus: the focus goes to its heading, which a
    // screen reader then reads (a status region inserted with its text is often not announced).
    sentHeading.current?.focus();
  }, [result]);
  useEffect(() => {
    // Only the action's answer for a delivered request carries `goal`; a reload or a later visit shows the sent
    // screen from the sent memory, without it. Once per request id, even when the same request is answered again.
    if (result?.state === 'sent' && result.goal && analytics) {
      reachGoalOnce(analytics, result.requestId, window as unknown as Record<string, unknown>, localStorageOrNull());
    }
  }, [result, analytics]);
  useEffect(() => {
    if (!result || result.state === 'sent') return;
    // An answer other than "sent" after a post from the browser: the button was disabled while sending, which took the
    // focus off it; it comes back there (on the first marked field when the action marked some), so Enter sends again.
    if (!document.activeElement || document.activeElement === document.body) {
      const first = Object.keys(result.errors ?? {})[0];
      formRef.current?.querySelector<HTMLElement>(first ? `[name="${first}"]` : 'button[type="submit"]')?.focus();
    }
    // Its message stands by the button: in view with it, however the form was sent (a tap, Enter in a field).
    if (byButton(result.state)) formRef.current?.querySelector('.send')?.scrollIntoView?.({ block: 'nearest' });
  }, [result]);
  useEffect(() => {
    setRemembered(rememberedSent(localStorageOrNull()));
  }, []);

  // On a later visit the cookie says whether a request was sent (`/?again` clears it, however it was opened), and the
  // memory adds its number and link (the cookie alone knows neither).
  const sent = result ? result.state === 'sent' : sentBefore;
  const { leadNumber, telegramLink } = result ?? (sentBefore ? remembered : null) ?? {};
  if (sent) {
    // The screen's heading is the news itself, not the form's «Оставить заявку». Focused when it is the answer to this
    // page's post: by the effect above with JavaScript, by `autofocus` without (the answer is then a new page).
    return (
      <div className="result" role="status" data-state="sent">
        <h2 id="form-title" className="done" tabIndex={-1} ref={sentHeading} autoFocus={result?.state === 'sent'}>
          {leadNumber ? t.sent.numbered(leadNumber) : t.sent.plain}
        </h2>
        <p>{t.sent.next}</p>
        {telegramLink ? <TelegramLink href={telegramLink} label={t.sent.telegram} /> : null}
        <p>
          <Link to={againHref(location.search)} reloadDocument onClick={() => forgetRequestSent(localStorageOrNull())}>
            {t.sent.again}
          </Link>
        </p>
      </div>
    );
  }

  const errors = clientErrors ?? result?.errors ?? {};
  const values = result?.values;
  // Once the visitor has fixed every marked field, "check the fields" goes with the marks.
  const state = clientErrors
    ? Object.keys(clientErrors).length > 0
      ? 'invalid'
      : result?.state === 'invalid'
        ? undefined
        : result?.state
    : result?.state;
  /** The shown errors after an edit of the form (`next` from the errors shown now and the form's values). */
  const showAfterEdit = (form: HTMLFormElement, next: (shown: FormErrors, values: ReturnType<typeof readValues>) => FormErrors) => {
    const formValues = readValues(new FormData(form));
    setClientErrors((current) => {
      const shown = current ?? result?.errors ?? {};
      const updated = next(shown, formValues);
      return sameErrors(updated, shown) ? current : updated;
    });
  };
  // A retry keeps the request id and its token (the page's own token is for the page's fresh request id); after
  // `expired` the token is a fresh one the action signed for that same request id.
  const id = result?.requestId ?? requestId;
  const token = result?.startedAt ?? startedAt;
  const sourceInputs = Object.entries(result?.source ?? source ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string');

  const message =
    state && state !== 'sent' ? (
      <div id="form-result" className={`result ${state}`} role="alert" data-state={state}>
        {t.form.states[state]}
        {state === 'error' && telegramContact ? <TeamContact username={telegramContact} before={t.form.contactUs} /> : null}
      </div>
    ) : null;

  const messageByButton = !!state && byButton(state);
  return (
    <>
      <h2 id="form-title">{t.form.title}</h2>
      <Form
        method="post"
        ref={formRef}
        noValidate
        aria-describedby={state ? 'form-result' : undefined}
        onChange={(event) => {
          // An edit takes the field's error away at once (nothing is marked while typing); a tick of the box is a whole
          // edit, checked at once when the box has been marked.
          const field = formFieldOf(event.target);
          if (!field) return;
          if (field === CONSENT_FIELD) {
            if (watched.current.has(field)) showAfterEdit(event.currentTarget, (shown, v) => errorsAfterEditing(shown, field, v, rules));
            return;
          }
          edited.current.add(field);
          showAfterEdit(event.currentTarget, (shown, v) => errorsWhileEditing(shown, field, v, rules));
        }}
        onBlur={(event) => {
          // Leaving an edited field that was marked since the last submit: checked again by the shared rules.
          const field = formFieldOf(event.target);
          if (!field || !edited.current.delete(field) || !watched.current.has(field)) return;
          showAfterEdit(event.currentTarget, (shown, v) => errorsAfterEditing(shown, field, v, rules));
        }}
        onSubmit={(event) => {
          // The same shared rules as the server, before anything is sent; and the consent box, as the action checks it.
          const found = formErrors(readValues(new FormData(event.currentTarget)), rules);
          watched.current = new Set(Object.keys(found) as FormField[]);
          edited.current.clear();
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
        {messageByButton ? null : message}
        <input type="hidden" name="requestId" value={id} />
        <input type="hidden" name="startedAt" value={token} />
        {sourceInputs.map(([key, value]) => (
          <input key={key} type="hidden" name={key} value={value} />
        ))}
        {/* `inert`: browsers' autofill passes it over (Chromium fills a field named company from a saved address, and an
          autofilled honeypot would drop the visitor's request as a bot's); bots posting the form's fields still fill it. */}
        <div className="trap" aria-hidden="true" {...{ inert: '' }}>
          <label>
            {t.form.trap}
            <input type="text" name={HONEYPOT_FIELD} tabIndex={-1} autoComplete="off" defaultValue="" />
          </label>
        </div>
        {FIELDS.map((f) => (
          <Field
            key={f.name}
            {...f}
            label={t.form.labels[f.name]}
            required={f.name === 'telegram' || f.name === 'phone' ? isContactRequired(f.name, requiredContacts) : f.required}
            hint={
              f.name === 'phone'
                ? contactHint('phone', phoneHint(phoneRegion, locale), requiredContacts, locale)
                : f.name === 'telegram'
                  ? contactHint('telegram', t.form.telegramHint, requiredContacts, locale)
                  : f.hint && t.form.optional
            }
            phoneRegion={phoneRegion}
            requiredContacts={requiredContacts}
            locale={locale}
            error={errors[f.name]}
            defaultValue={values?.[f.name]}
          />
        ))}
        <Field
          name="comment"
          label={t.form.labels.comment}
          hint={t.form.optional}
          locale={locale}
          multiline
          max={COMMENT_MAX}
          error={errors.comment}
          defaultValue={values?.comment}
        />
        {privacyUrl ? (
          <ConsentBox privacyUrl={privacyUrl} error={errors.consent} checked={values?.consent === 'on'} locale={locale} />
        ) : null}
        {captcha ? (
          // A new answer of the action other than field errors: the token was used or refused, the widget starts over.
          <CaptchaWidget
            captcha={captcha}
            resetKey={result && result.state !== 'invalid' ? result : null}
            noScript={t.form.captchaNoScript}
          />
        ) : null}
        <div className="send">
          {messageByButton ? message : null}
          {/* Without JavaScript the answer is a new page: `autofocus` brings the button, and its message, into view. */}
          <button
            type="submit"
            disabled={submitting}
            aria-busy={submitting}
            aria-describedby={messageByButton ? 'form-result' : undefined}
            autoFocus={messageByButton}
          >
            {submitting ? t.form.submitting : t.form.submit}
          </button>
        </div>
        {privacyUrl ? null : <p className="fine">{t.form.consent}</p>}
      </Form>
    </>
  );
}

export { TelegramLink };
