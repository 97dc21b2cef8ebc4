/** Field lengths (docs/requirements.md §2.2) and request limits (§1.1, §1.4). */
export const NAME_MIN = 2;
export const NAME_MAX = 80;
export const TELEGRAM_NAME_MIN = 5;
export const TELEGRAM_NAME_MAX = 32;
export const PHONE_DIGITS_MIN = 7;
export const PHONE_DIGITS_MAX = 15;
export const DATE_MAX = 60;
export const GUESTS_MAX = 40;
export const COMMENT_MAX = 1200;

/** The server answers 413 to a body larger than this many bytes (docs/requirements.md §1.1 step 4). */
export const MAX_BODY_BYTES = 16384;

/** The same username or phone within 24 hours makes a repeat (docs/requirements.md §1.4). */
export const REPEAT_WINDOW_MS = 24 * 60 * 60 * 1000;
