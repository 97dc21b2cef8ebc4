import { httpUrl, type EnvReader } from './env-reader';

const MAX_WEBHOOK_ENDPOINTS = 10;

/**
 * LEADS_WEBHOOK_URL=https://a/x,https://b/y with LEADS_WEBHOOK_SECRET=s1,s2 (and, during a rotation, the secrets being
 * retired in LEADS_WEBHOOK_SECRET_PREVIOUS). A URL is never printed (it may hold a token): a line names the entry's position.
 */
export function readWebhooks(r: EnvReader): { url: string; secret: string; previousSecret?: string }[] {
  const urlsRaw = r.string('LEADS_WEBHOOK_URL');
  const secretsRaw = r.string('LEADS_WEBHOOK_SECRET');
  if (urlsRaw === '' && secretsRaw === '') return [];
  if (secretsRaw === '') {
    r.problems.push('LEADS_WEBHOOK_SECRET must be set with LEADS_WEBHOOK_URL (one secret per URL, comma-separated)');
    return [];
  }
  if (urlsRaw === '') {
    r.problems.push('LEADS_WEBHOOK_URL must be set with LEADS_WEBHOOK_SECRET (set both for webhooks, neither for none)');
    return [];
  }
  const urls = urlsRaw.split(',').map((u) => u.trim());
  const secrets = secretsRaw.split(',').map((s) => s.trim());
  const before = r.problems.length;
  if (urls.length > MAX_WEBHOOK_ENDPOINTS) {
    r.problems.push(`LEADS_WEBHOOK_URL must list at most ${MAX_WEBHOOK_ENDPOINTS} URLs (got ${urls.length})`);
  }
  if (urls.length !== secrets.length) {
    r.problems.push(
      `LEADS_WEBHOOK_SECRET must list one secret per URL of LEADS_WEBHOOK_URL, in the same order (got ${secrets.length} secrets for ${urls.length} URLs)`,
    );
  }
  const seen = new Set<string>();
  urls.forEach((raw, i) => {
    const url = httpUrl(raw);
    if (!url) {
      r.problems.push(`LEADS_WEBHOOK_URL entry ${i + 1} must be an http(s) URL like https://crm.example.com/hooks/leads`);
    } else if (url.username !== '' || url.password !== '') {
      // fetch refuses such a URL (and its error would quote it, password and all): never delivered, only leaked.
      r.problems.push(
        `LEADS_WEBHOOK_URL entry ${i + 1} must not hold a user name or password (user:password@); the signature authenticates, a token may go in the path or query`,
      );
    } else if (seen.has(url.toString())) {
      r.problems.push(`LEADS_WEBHOOK_URL entry ${i + 1} repeats an earlier URL (each endpoint once)`);
    } else {
      seen.add(url.toString());
    }
  });
  checkSecrets(r, 'LEADS_WEBHOOK_SECRET', secrets, false);
  const previous = readPreviousSecrets(r, urls.length);
  if (r.problems.length > before) return [];
  return urls.map((url, i) => ({
    url: new URL(url).toString(),
    secret: secrets[i],
    ...(previous[i] && previous[i] !== secrets[i] ? { previousSecret: previous[i] } : {}),
  }));
}

/** LEADS_WEBHOOK_SECRET_PREVIOUS=old1,,old3: the secret each URL had before, in order; empty for a URL not being rotated. */
function readPreviousSecrets(r: EnvReader, urlCount: number): string[] {
  const raw = r.string('LEADS_WEBHOOK_SECRET_PREVIOUS');
  if (raw === '') return [];
  const previous = raw.split(',').map((s) => s.trim());
  if (previous.length !== urlCount) {
    r.problems.push(
      `LEADS_WEBHOOK_SECRET_PREVIOUS must list one entry per URL of LEADS_WEBHOOK_URL, in the same order, empty for a URL not being rotated (got ${previous.length} entries for ${urlCount} URLs)`,
    );
    return [];
  }
  checkSecrets(r, 'LEADS_WEBHOOK_SECRET_PREVIOUS', previous, true);
  return previous;
}

/** One line per entry of `name` that is not 16–256 characters without spaces (nor empty, when `emptyOk`). */
function checkSecrets(r: EnvReader, name: string, secrets: string[], emptyOk: boolean): void {
  secrets.forEach((secret, i) => {
    if (!(emptyOk && secret === '') && !/^\S{16,256}$/.test(secret))
      r.problems.push(`${name} entry ${i + 1} must be ${emptyOk ? 'empty or ' : ''}16–256 characters without spaces or commas`);
  });
}
