/**
 * The landing's captcha, as it reaches `POST /leads` (docs/requirements.md §8.8): the landing verifies the provider's
 * token itself and tells the server what came of it in the body's `captcha`. `passed`: the provider confirmed the
 * token. `unchecked`: the provider could not be reached (network error, timeout, 5xx, an unreadable answer), and the
 * lead was delivered anyway; its card says so. Absent: the landing has no captcha configured.
 */
export const CAPTCHA_FIELD = 'captcha';
export const CAPTCHA_RESULTS = ['passed', 'unchecked'] as const;
export type CaptchaResult = (typeof CAPTCHA_RESULTS)[number];

export function isCaptchaResult(value: unknown): value is CaptchaResult {
  return typeof value === 'string' && (CAPTCHA_RESULTS as readonly string[]).includes(value);
}
