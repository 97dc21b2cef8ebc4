/**
 * The captcha providers the form can use (CAPTCHA_PROVIDER), one row each: the widget's script and its JavaScript API,
 * the form field the widget posts its token in, and the verify endpoint with the shape of its request and answer.
 * No secret here: the page imports this table for the widget; only the action (verify.server.ts) sends the secret.
 *
 * The widget is rendered explicitly (`render(container, { sitekey })` once the script has called back), never by the
 * script scanning the page for its class: the form is rendered by React, whose hydration would remove the nodes a
 * script had put into the container before it, and an action's answer re-renders the form.
 */
export const CAPTCHA_PROVIDERS = ['turnstile', 'smartcaptcha', 'hcaptcha'] as const;
export type CaptchaProvider = (typeof CAPTCHA_PROVIDERS)[number];

export function isCaptchaProvider(value: string): value is CaptchaProvider {
  return (CAPTCHA_PROVIDERS as readonly string[]).includes(value);
}

/** What the provider's verify endpoint said about a token: good, refused, or something that is no verdict at all. */
export type VerifyAnswer =
  | { verdict: 'passed' }
  | { verdict: 'rejected'; detail: string }
  /** The answer blames our request (the secret), or is not the provider's shape: the token could not be checked. */
  | { verdict: 'unchecked'; detail: string };

export interface CaptchaProviderSpec {
  /** For logs and docs. */
  title: string;
  /** The widget's script (CAPTCHA_SCRIPT_URL overrides it). */
  scriptUrl: string;
  /** The script's query for explicit rendering that calls `window[onload]()` once its API is there. */
  explicitQuery(onload: string): Record<string, string>;
  /** The script's global: `render(container, { sitekey })` → widget id, `reset(id)`. */
  global: 'turnstile' | 'smartCaptcha' | 'hcaptcha';
  /** The form field the widget writes its token into (a hidden input in the container). */
  tokenField: string;
  /** The verify endpoint (CAPTCHA_VERIFY_URL overrides it). */
  verifyUrl: string;
  /** The verify request's form fields: the secret, the token and the visitor's address (left out when unknown). */
  verifyBody(secret: string, token: string, ip: string | null): URLSearchParams;
  /** The verify answer's JSON read as a verdict. */
  readAnswer(json: unknown): VerifyAnswer;
}

/** Error codes of Turnstile and hCaptcha that blame the request's secret or site key, not the visitor's token. */
const OUR_SIDE_CODES = new Set(['missing-input-secret', 'invalid-input-secret', 'sitekey-secret-mismatch', 'invalid-sitekey']);

const form = (fields: Record<string, string | null>) =>
  new URLSearchParams(Object.entries(fields).filter((e): e is [string, string] => e[1] !== null));

/** Turnstile and hCaptcha answer alike: `{ success: boolean, "error-codes": string[] }`. */
function readSuccessAnswer(json: unknown): VerifyAnswer {
  const answer = typeof json === 'object' && json !== null ? (json as { success?: unknown; 'error-codes'?: unknown }) : null;
  if (!answer || typeof answer.success !== 'boolean') return { verdict: 'unchecked', detail: 'unreadable answer' };
  if (answer.success) return { verdict: 'passed' };
  const codes = Array.isArray(answer['error-codes']) ? answer['error-codes'].filter((c): c is string => typeof c === 'string') : [];
  const detail = codes.join(', ') || 'no error code';
  return codes.some((c) => OUR_SIDE_CODES.has(c))
    ? { verdict: 'unchecked', detail: `refused our request: ${detail}` }
    : { verdict: 'rejected', detail };
}

export const CAPTCHA_SPECS: Record<CaptchaProvider, CaptchaProviderSpec> = {
  turnstile: {
    title: 'Cloudflare Turnstile',
    scriptUrl: 'https://challenges.cloudflare.com/turnstile/v0/api.js',
    explicitQuery: (onload) => ({ render: 'explicit', onload }),
    global: 'turnstile',
    tokenField: 'cf-turnstile-response',
    verifyUrl: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
    verifyBody: (secret, token, ip) => form({ secret, response: token, remoteip: ip }),
    readAnswer: readSuccessAnswer,
  },
  smartcaptcha: {
    title: 'Yandex SmartCaptcha',
    scriptUrl: 'https://smartcaptcha.yandexcloud.net/captcha.js',
    explicitQuery: (onload) => ({ render: 'onload', onload }),
    global: 'smartCaptcha',
    tokenField: 'smart-token',
    verifyUrl: 'https://smartcaptcha.yandexcloud.net/validate',
    verifyBody: (secret, token, ip) => form({ secret, token, ip }),
    // `{ status: "ok" | "failed", message }`; a failure about the secret is ours, not the visitor's.
    readAnswer(json) {
      const answer = typeof json === 'object' && json !== null ? (json as { status?: unknown; message?: unknown }) : null;
      const message = typeof answer?.message === 'string' ? answer.message : '';
      if (answer?.status === 'ok') return { verdict: 'passed' };
      if (answer?.status !== 'failed') return { verdict: 'unchecked', detail: 'unreadable answer' };
      return /secret/i.test(message)
        ? { verdict: 'unchecked', detail: `refused our request: ${message}` }
        : { verdict: 'rejected', detail: message || 'failed' };
    },
  },
  hcaptcha: {
    title: 'hCaptcha',
    scriptUrl: 'https://js.hcaptcha.com/1/api.js',
    explicitQuery: (onload) => ({ render: 'explicit', onload }),
    global: 'hcaptcha',
    tokenField: 'h-captcha-response',
    verifyUrl: 'https://api.hcaptcha.com/siteverify',
    verifyBody: (secret, token, ip) => form({ secret, response: token, remoteip: ip }),
    readAnswer: readSuccessAnswer,
  },
};

/** What the page needs for the widget: never the secret. */
export interface PageCaptcha {
  provider: CaptchaProvider;
  siteKey: string;
  scriptUrl: string;
}

/** The widget script's address with the provider's explicit-render query added (`onload` is a global function's name). */
export function widgetScriptUrl(captcha: PageCaptcha, onload: string): string {
  const url = new URL(captcha.scriptUrl);
  for (const [key, value] of Object.entries(CAPTCHA_SPECS[captcha.provider].explicitQuery(onload))) url.searchParams.set(key, value);
  return url.toString();
}
