import { createHmac, randomBytes } from 'node:crypto';
import type { SandboxUser } from './state';

/** What `signInitData` signs: the bot's token, the user, and when (seconds since the epoch; now by default). */
export interface InitDataOptions {
  botToken: string;
  user: Pick<SandboxUser, 'id' | 'first_name'> & Partial<Omit<SandboxUser, 'id' | 'first_name'>>;
  /** `auth_date`, in seconds since the epoch, or a Date. Now when absent. */
  authDate?: number | Date;
  /** `query_id`; a random one when absent. */
  queryId?: string;
  /** More fields to sign (`start_param`, `chat_type`…), as strings. */
  extra?: Record<string, string>;
}

/**
 * Mini App launch data (`initData`) signed exactly as Telegram signs it: the fields as `key=value` lines sorted by key
 * and joined by `\n` (`signature` among them), HMAC-SHA256 under the secret key HMAC-SHA256(key "WebAppData", bot token), hex, as `hash`.
 * Returns the query string a Mini App gets in `tgWebAppData` (and in `Telegram.WebApp.initData`).
 */
export function signInitData(options: InitDataOptions): string {
  const at = options.authDate ?? new Date();
  const authDate = at instanceof Date ? Math.floor(at.getTime() / 1000) : Math.floor(at);
  const { is_bot: _isBot, ...user } = { ...options.user } as SandboxUser;
  const fields: Record<string, string> = {
    auth_date: String(authDate),
    query_id: options.queryId ?? `AAH${randomBytes(12).toString('base64url')}`,
    user: JSON.stringify({ allows_write_to_pm: true, ...user }),
    // Telegram's Ed25519 signature for third parties (checked with Telegram's public key, which the sandbox cannot
    // sign for): present as Telegram sends it, random here. The bot's HMAC below covers it like every other field.
    signature: randomBytes(64).toString('base64url'),
    ...options.extra,
  };
  const checkString = Object.keys(fields)
    .sort()
    .map((key) => `${key}=${fields[key]}`)
    .join('\n');
  const secret = createHmac('sha256', 'WebAppData').update(options.botToken).digest();
  const hash = createHmac('sha256', secret).update(checkString).digest('hex');
  return new URLSearchParams({ ...fields, hash }).toString();
}

/**
 * The address that launches a Mini App at `appUrl` as Telegram's web client does: its launch parameters in the
 * fragment (`tgWebAppData` with the signed launch data, the version, the platform and the theme).
 */
export function launchUrl(appUrl: string, initData: string, themeParams: Record<string, string> = SANDBOX_THEME): string {
  const params = new URLSearchParams({
    tgWebAppData: initData,
    tgWebAppVersion: '8.0',
    tgWebAppPlatform: 'web',
    tgWebAppThemeParams: JSON.stringify(themeParams),
  });
  return `${appUrl}#${params.toString()}`;
}

/** Telegram's dark theme, as the sandbox's page looks. */
export const SANDBOX_THEME: Record<string, string> = {
  bg_color: '#17212b',
  secondary_bg_color: '#0e1621',
  text_color: '#f5f5f5',
  hint_color: '#708499',
  link_color: '#6ab3f3',
  button_color: '#5288c1',
  button_text_color: '#ffffff',
  header_bg_color: '#17212b',
  accent_text_color: '#6ab2f2',
  section_bg_color: '#17212b',
  section_header_text_color: '#6ab3f3',
  subtitle_text_color: '#708499',
  destructive_text_color: '#ec3942',
};
