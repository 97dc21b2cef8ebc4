/** How one environment variable is read: trimmed, its default when unset or empty, one problem line when malformed. */

export type Env = Record<string, string | undefined>;

/** A chat id: numeric (`-1001234567890`) or a public `@username`. */
export const CHAT_ID = /^-?\d{1,20}$|^@[A-Za-z][A-Za-z0-9_]{4,31}$/;
/** A forum topic id (`message_thread_id`). */
export const THREAD_ID = /^[1-9]\d{0,15}$/;

/** `raw` parsed as an http(s) URL; null when it is not one. */
export function httpUrl(raw: string): URL | null {
  const url = URL.canParse(raw) ? new URL(raw) : null;
  return url && ['http:', 'https:'].includes(url.protocol) ? url : null;
}

/** Reads the variables of `env`, collecting one line per problem in `problems` instead of stopping at the first. */
export class EnvReader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  raw(name: string): string | undefined {
    return this.env[name]?.trim();
  }

  string(name: string, fallback = ''): string {
    return this.raw(name) || fallback;
  }

  int(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.raw(name);
    if (v === undefined || v === '') return fallback;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max} (got "${v}")`);
      return fallback;
    }
    return Number(v);
  }

  flag(name: string, fallback: boolean): boolean {
    const v = this.raw(name)?.toLowerCase();
    if (v === undefined || v === '') return fallback;
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    this.problems.push(`${name} must be 1 or 0 (got "${v}")`);
    return fallback;
  }

  /** A shared parser's answer: its value, or its one problem line and `fallback`. */
  parsed<T>(result: { ok: true; value: T } | { ok: false; error: string }, fallback: T): T {
    if (result.ok) return result.value;
    this.problems.push(result.error);
    return fallback;
  }

  /** `HH:MM` (24 h) as minutes after midnight. */
  time(name: string, fallback: number): number {
    const v = this.raw(name);
    if (v === undefined || v === '') return fallback;
    const m = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(v);
    if (!m) {
      this.problems.push(`${name} must be a time like 09:00 (got "${v}")`);
      return fallback;
    }
    return Number(m[1]) * 60 + Number(m[2]);
  }

  /** An optional forum topic id (`message_thread_id`): a positive whole number. */
  threadId(name: string): number | null {
    const v = this.matching(name, THREAD_ID, 'a topic id (message_thread_id), a positive whole number like 12');
    return v === null ? null : Number(v);
  }

  chatId(name: string): string | null {
    return this.matching(name, CHAT_ID, 'a numeric chat id like -1001234567890 or @channelname');
  }

  /** An optional value of the form `re`, described as `what` in its problem line. */
  private matching(name: string, re: RegExp, what: string): string | null {
    const v = this.raw(name);
    if (!v) return null;
    if (re.test(v)) return v;
    this.problems.push(`${name} must be ${what} (got "${v}")`);
    return null;
  }
}
