import { withoutPasswords } from '@stickers/shared';

export type Env = Record<string, string | undefined>;

/** The server's chats by their numeric id only: presses and commands arrive with it, and a `@name` never equals it. */
export const CHAT_ID = /^-?\d{1,20}$/;
export const THREAD_ID = /^[1-9]\d{0,15}$/;

export function httpUrl(raw: string): URL | null {
  const url = URL.canParse(raw) ? new URL(raw) : null;
  return url && ['http:', 'https:'].includes(url.protocol) ? url : null;
}

/** Reads the variables of `env`, trimmed, each its default when unset or empty, collecting a line per problem in `problems`. */
export class EnvReader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  raw(name: string): string | undefined {
    return this.env[name]?.trim();
  }

  string(name: string, fallback = ''): string {
    return this.raw(name) || fallback;
  }

  /** `v` as `read` takes it; when `read` refuses it (null), `fallback` and the line `<name> must be <what> (got "<v>")`. */
  valid<T>(name: string, fallback: T, what: string, read: (v: string) => T | null, v = this.raw(name)): T {
    if (!v) return fallback;
    const value = read(v);
    if (value === null) this.problems.push(`${name} must be ${what} (got "${withoutPasswords(v)}")`);
    return value ?? fallback;
  }

  int(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const inRange = (v: string) => /^\d+$/.test(v) && Number(v) >= min && Number(v) <= max;
    const what = max === Number.MAX_SAFE_INTEGER ? `a whole number, at least ${min}` : `a whole number from ${min} to ${max}`;
    return this.valid(name, fallback, what, (v) => (inRange(v) ? Number(v) : null));
  }

  flag(name: string, fallback: boolean): boolean {
    const read = (v: string) => (['1', 'true', 'yes', 'on'].includes(v) ? true : ['0', 'false', 'no', 'off'].includes(v) ? false : null);
    return this.valid(name, fallback, '1 or 0', read, this.raw(name)?.toLowerCase());
  }

  /** A shared parser's answer: its value, or its one problem line and `fallback`. */
  parsed<T>(result: { ok: true; value: T } | { ok: false; error: string }, fallback: T): T {
    if (result.ok) return result.value;
    this.problems.push(result.error);
    return fallback;
  }

  /** `HH:MM` (24 h) as minutes after midnight. */
  time(name: string, fallback: number): number {
    return this.valid(name, fallback, 'a time like 09:00', (v) => {
      const m = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(v);
      return m ? Number(m[1]) * 60 + Number(m[2]) : null;
    });
  }

  threadId(name: string): number | null {
    return this.valid(name, null, 'a topic id (message_thread_id), a positive whole number like 12', (v) =>
      THREAD_ID.test(v) ? Number(v) : null,
    );
  }

  chatId(name: string): string | null {
    const what = this.raw(name)?.startsWith('@')
      ? "the chat's numeric id like -1001234567890, not its @name: presses and commands come with the id (/stickers_chatid in the chat, or npm run leads -- setup, tells it)"
      : 'a numeric chat id like -1001234567890';
    return this.valid(name, null, what, (v) => (CHAT_ID.test(v) ? v : null));
  }
}
