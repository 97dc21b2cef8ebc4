/**
 * Phone numbers as visitors type them (docs/requirements.md §2.2, docs/decisions.md "Phone numbers as typed"): national
 * spellings of the default region (`8 916 555-12-34`, `9165551234` for RU), international ones with `+` or `00`, read by
 * libphonenumber-js with its `min` metadata (the browser bundle carries it) and kept as E.164 (`+79165551234`).
 */
import { getCountryCallingCode, isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/min';
import { PHONE_DIGITS_MAX, PHONE_DIGITS_MIN } from './limits.js';

/** A region libphonenumber knows (ISO 3166 alpha-2, upper case): whose national spellings a number without `+` is read in. */
export type PhoneRegion = CountryCode;

/** LEADS_PHONE_REGION's default, on the server and the landing alike. */
export const DEFAULT_PHONE_REGION: PhoneRegion = 'RU';

/**
 * The longest text read as a phone, before parsing: a number with every separator a person might type (`+7 (916)
 * 555-12-34` is 18) fits with room to spare; anything longer is refused without being parsed.
 */
export const PHONE_TEXT_MAX = 40;

/** What is stored: `+` then 7–15 digits (E.164 always is). */
const STORED_PHONE = new RegExp(`^\\+\\d{${PHONE_DIGITS_MIN},${PHONE_DIGITS_MAX}}$`);

/**
 * What a typed phone may hold (after `lookalikesAsAscii`): digits, an optional leading `+`, and the separators people
 * type — spaces, `-`, `(`, `)`, `.`. Letters (vanity numbers, `доб. 5`, an extension) are refused: an extension would
 * be dropped from what is stored, and a letter is a typo more often than a word.
 */
const PHONE_TEXT = /^\+?[\d\s().-]+$/;
const SEPARATORS = /[\s().-]/g;
/**
 * Every dash a keyboard, a phone's autocorrect or a copied page puts between digits: Unicode's dash punctuation (the
 * hyphen U+2010, the non-breaking hyphen U+2011, the figure dash U+2012, en and em dashes…) and the minus sign U+2212.
 */
const DASHES = /[\p{Pd}\u2212]/gu;

/**
 * A typed phone with the characters that look like a phone's ASCII ones read as those: NFKC turns full-width digits,
 * `＋`, `（`, `）` and every kind of space into ASCII, and each dash becomes `-`. What looks like a number is one.
 */
function lookalikesAsAscii(text: string): string {
  return text.normalize('NFKC').replace(DASHES, '-');
}

/**
 * Reads a LEADS_PHONE_REGION setting (server and landing): empty → RU; otherwise a two-letter code libphonenumber knows,
 * in any case. A bad value is one configuration line.
 */
export function parsePhoneRegion(raw: string | null | undefined): { ok: true; value: PhoneRegion } | { ok: false; error: string } {
  const value = (raw ?? '').trim();
  if (value === '') return { ok: true, value: DEFAULT_PHONE_REGION };
  const code = value.toUpperCase();
  if (/^[A-Z]{2}$/.test(code) && isSupportedCountry(code)) return { ok: true, value: code };
  return {
    ok: false,
    error: `LEADS_PHONE_REGION must be a two-letter country code (ISO 3166) libphonenumber knows, like RU or DE (got "${value}")`,
  };
}

/**
 * A phone as typed (already normalised as a one-line field; full-width digits and dashes read as ASCII) → E.164, or
 * null when it is not a valid number: national in `region`, or international with `+` or `00`. Valid, not merely possible: the number's length and leading digits
 * must fit its region's numbering plan (with the `min` metadata: the region's general pattern, not each line type's).
 */
export function normalisePhone(text: string, region: PhoneRegion = DEFAULT_PHONE_REGION): string | null {
  if (text.length > PHONE_TEXT_MAX) return null;
  const typed = lookalikesAsAscii(text);
  if (typed.length > PHONE_TEXT_MAX || !PHONE_TEXT.test(typed)) return null;
  let digits = typed.replace(SEPARATORS, '');
  // `00` is the international prefix in most of the world, but not in every region's metadata (RU's is 8~10).
  if (digits.startsWith('00')) digits = `+${digits.slice(2)}`;
  const number = parsePhoneNumberFromString(digits, region);
  if (!number || !number.isValid()) return null;
  return STORED_PHONE.test(number.number) ? number.number : null;
}

/** The calling code of a region, for the texts that show how to write a number (`49` for DE). */
export function phoneCallingCode(region: PhoneRegion): string {
  return getCountryCallingCode(region);
}

/**
 * A stored phone (E.164) as people read it, in libphonenumber's international form (`+7 916 555 12 34`: the country code,
 * then its numbering plan's groups); a value libphonenumber cannot read comes back as it is.
 */
export function formatPhone(e164: string): string {
  return parsePhoneNumberFromString(e164)?.formatInternational() ?? e164;
}
