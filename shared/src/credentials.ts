/**
 * A URL's password in a line a person or a log reads: `http://user:secret@host/x` becomes `http://user@host/x`. Every
 * URL in `text` loses its password (the user name stays, to tell which account is meant); the rest of the text is
 * unchanged. Used for every URL from the environment that is printed or logged (DATABASE_URL, TELEGRAM_API_ROOT,
 * LEADS_ENDPOINT) and for error messages that quote one (a failed request names its URL).
 */
export function withoutPasswords(text: string): string {
  // scheme://user:password@ — the authority ends at the first "/", "?", "#" or white space; its last "@" ends the
  // user info (a password may hold an unencoded "@").
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*):[^\s/?#]*@/gi, '$1@');
}
