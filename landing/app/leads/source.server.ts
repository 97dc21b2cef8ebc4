/**
 * Where a visitor came from, without JavaScript: the page's loader reads the UTM parameters of the page
 * URL and the referrer's host (the `Referer` of the page request) and the form carries them back in hidden inputs;
 * the action adds the landing's own name (LANDING_SOURCE) and sends what is left after the shared rules as `source`.
 */
import { cleanSource, type LeadSource, sourceOfPage, type SourceKey, UTM_KEYS } from '@stickers/shared';

/** The hidden inputs of the form: the UTM values and the referrer's host (the landing's name never comes from the page). */
export const SOURCE_INPUTS = [...UTM_KEYS, 'referrer'] as const;
export type PageSource = Partial<Record<(typeof SOURCE_INPUTS)[number], string>>;

/** The page request's UTM values and referrer host, for the hidden inputs; a referrer on this landing itself is not one. */
export function pageSource(request: Request): PageSource {
  const url = new URL(request.url);
  const ownHost = request.headers.get('host') ?? url.host;
  const source = sourceOfPage(url.searchParams, { referer: request.headers.get('referer'), ownHost }) ?? {};
  const own = url.host.toLowerCase();
  const page: PageSource = {};
  for (const key of SOURCE_INPUTS) if (source[key] && !(key === 'referrer' && source[key] === own)) page[key] = source[key];
  return page;
}

/** The form's hidden inputs back as values, for a form shown again (invalid, throttled, error). */
export function formPageSource(form: FormData): PageSource {
  const page: PageSource = {};
  const cleaned = cleanSource(readInputs(form)) ?? {};
  for (const key of SOURCE_INPUTS) if (cleaned[key]) page[key] = cleaned[key];
  return page;
}

/** The `source` of the request: the form's hidden inputs and LANDING_SOURCE; undefined when there is nothing. */
export function formSource(form: FormData, landing: string | null): LeadSource | undefined {
  return cleanSource({ ...readInputs(form), landing: landing ?? undefined });
}

function readInputs(form: FormData): Partial<Record<SourceKey, unknown>> {
  const raw: Partial<Record<SourceKey, unknown>> = {};
  for (const key of SOURCE_INPUTS) {
    const value = form.get(key);
    if (typeof value === 'string') raw[key] = value;
  }
  return raw;
}
