/**
 * The action's captcha check (docs/requirements.md §8.8): the visitor's token, from the provider's form field, sent to
 * the provider's verify endpoint with the secret, under a short timeout. A missing or refused token asks the visitor
 * to pass the check again; a provider that cannot be reached (network error, timeout, 5xx or another status, an
 * answer that is not its shape, a refusal of our secret) never costs a lead: it is delivered, marked `unchecked`.
 */
import { errorText } from '@stickers/shared';
import { CAPTCHA_SPECS, type CaptchaProvider } from './providers';

/** The captcha's settings (CAPTCHA_*), checked by env.server.ts. */
export interface CaptchaConfig {
  provider: CaptchaProvider;
  siteKey: string;
  secret: string;
  /** CAPTCHA_VERIFY_URL, or the provider's own. */
  verifyUrl: string;
  /** CAPTCHA_SCRIPT_URL, or the provider's own. */
  scriptUrl: string;
  /** CAPTCHA_TIMEOUT_MS: how long the verify request may take. */
  timeoutMs: number;
}

/** The longest token sent on: the providers' tokens are at most 2048 characters; a longer one is refused unsent. */
export const CAPTCHA_TOKEN_MAX = 4096;

export type CaptchaCheck =
  /** The provider confirmed the token. */
  | { kind: 'passed' }
  /** No token, or the provider refused it: the visitor is asked to pass the check again. */
  | { kind: 'rejected'; detail: string }
  /** The provider could not say: the request is delivered and marked. */
  | { kind: 'unchecked'; detail: string };

/** The token the form carried for `provider`, or null when none (no JavaScript, the widget not passed). */
export function captchaToken(form: FormData, provider: CaptchaProvider): string | null {
  const value = form.get(CAPTCHA_SPECS[provider].tokenField);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/** Asks the provider about `token` (the visitor's address `ip` when known). Never throws. */
export async function verifyCaptcha(config: CaptchaConfig, token: string | null, ip: string | null): Promise<CaptchaCheck> {
  if (token === null) return { kind: 'rejected', detail: 'no token' };
  if (token.length > CAPTCHA_TOKEN_MAX) return { kind: 'rejected', detail: 'token too long' };
  const spec = CAPTCHA_SPECS[config.provider];
  let res: Response;
  let text: string;
  try {
    res = await fetch(config.verifyUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: spec.verifyBody(config.secret, token, ip),
      signal: AbortSignal.timeout(config.timeoutMs),
    });
    text = await res.text();
  } catch (err) {
    const timedOut = err instanceof Error && err.name === 'TimeoutError';
    return {
      kind: 'unchecked',
      detail: timedOut ? `timeout (${config.timeoutMs} ms)` : `unreachable: ${errorText(err)}`,
    };
  }
  if (res.status !== 200) return { kind: 'unchecked', detail: `status ${res.status}` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: 'unchecked', detail: 'unreadable answer' };
  }
  const answer = spec.readAnswer(json);
  return answer.verdict === 'passed' ? { kind: 'passed' } : { kind: answer.verdict, detail: answer.detail };
}
