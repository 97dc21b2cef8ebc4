import {
  API_ERRORS,
  COMMENT_MAX,
  DATE_MAX,
  FIELD_ERROR_CODES,
  GUESTS_MAX,
  IDEMPOTENCY_HEADER,
  MAX_BODY_BYTES,
  NAME_MAX,
  NAME_MIN,
  LATE_FUTURE_SKEW_MS,
  LATE_ROUTES,
  LATE_MAX_AGE_MS,
  RATE_LIMIT_REASONS,
  REPORTED_FIELDS,
  SECRET_HEADER,
  SOURCE_FIELD,
  SOURCE_HOST_MAX,
  SOURCE_KEYS,
  SOURCE_VALUE_MAX,
} from '@stickers/shared';
import { LEAD_STATUSES } from '../database/schema';

const error = (codes: string[], extra: Record<string, unknown> = {}, required: string[] = ['error']) => ({
  type: 'object',
  required,
  properties: { error: { type: 'string', enum: codes }, ...extra },
});
const json = (schema: unknown, example?: unknown) => ({ content: { 'application/json': { schema, ...(example ? { example } : {}) } } });
const accepted = {
  type: 'object',
  required: ['lead_number', 'duplicate', 'repeat'],
  properties: { lead_number: { type: 'integer', minimum: 1 }, duplicate: { type: 'boolean' }, repeat: { type: 'boolean' } },
};
const fieldErrors = {
  type: 'object',
  description: 'Every failing field with its code',
  propertyNames: { enum: [...REPORTED_FIELDS, SOURCE_FIELD] },
  additionalProperties: { type: 'string', enum: [...FIELD_ERROR_CODES] },
};
const isoTime = (what: string) => ({
  type: 'string',
  format: 'date-time',
  description:
    `${what}: ISO 8601 with a time zone (\`2026-12-01T10:15:30.123Z\`), at most ${LATE_FUTURE_SKEW_MS / 3_600_000} hours ahead of ` +
    `the server's clock (a time ahead is taken as the server's now) and at most ${LATE_MAX_AGE_MS / 86_400_000} days old`,
});
/** Issue 14: the filters of `GET /leads` and `GET /leads/export.csv`. */
const timeFilter = (name: string, what: string) => ({
  name,
  in: 'query',
  required: false,
  schema: { type: 'string' },
  description: `${what}: an ISO 8601 date or time, or milliseconds since the epoch`,
});
const exportFilters = [
  timeFilter('since', 'Leads created at or after'),
  timeFilter('until', 'Leads created before'),
  { name: 'status', in: 'query', required: false, schema: { type: 'string', enum: [...LEAD_STATUSES] } },
];
const invalidQuery = {
  type: 'object',
  required: ['error', 'errors'],
  properties: {
    error: { type: 'string', enum: ['invalid_query'] },
    errors: { type: 'object', description: 'Each bad parameter with why', additionalProperties: { type: 'string' } },
  },
};
const nullableString = { type: ['string', 'null'] };
const nullableTime = { type: ['string', 'null'], format: 'date-time' };
const exportedLead = {
  type: 'object',
  properties: {
    lead_number: { type: 'integer' },
    request_id: { type: 'string' },
    status: { type: 'string', enum: [...LEAD_STATUSES] },
    status_changed_by: nullableString,
    status_changed_at: nullableTime,
    created_at: { type: 'string', format: 'date-time' },
    received_at: { type: 'string', format: 'date-time' },
    published_at: nullableTime,
    anonymised_at: nullableTime,
    name: nullableString,
    telegram: nullableString,
    phone: nullableString,
    date: nullableString,
    guests: nullableString,
    comment: nullableString,
    source: {
      type: ['object', 'null'],
      description:
        "Where the lead came from (the landing's LANDING_SOURCE, the UTM parameters of its page, the referrer's host); null when the landing sent none",
      properties: {
        landing: nullableString,
        utm_source: nullableString,
        utm_medium: nullableString,
        utm_campaign: nullableString,
        utm_content: nullableString,
        utm_term: nullableString,
        referrer: nullableString,
      },
    },
    repeats: { type: 'integer', minimum: 0 },
  },
};
/** Issue 12: the object a landing adds when it replays a request from its spool. */
const late = {
  type: 'object',
  additionalProperties: false,
  required: ['submitted_at', 'route', 'reason'],
  description:
    "Only on a request the landing replays from its spool: the server could not take it when the visitor sent it. Such a lead keeps submitted_at as its time (the arrival is stored too), is matched for repeats from that time, is never refused by the per-visitor or hourly limit (it is still counted, at that time), and its fallback message, when it is in the leads group and the bot's own, becomes its card; otherwise the message gets the reply '✅ Заявка в базе: #<n>'. A known request_id still answers 200 (its fallback message, when none was known, is recorded and answered). Anything but this exact shape is 422 with errors.late = invalid.",
  properties: {
    submitted_at: isoTime("When the landing first handled the visitor's request"),
    route: {
      type: 'string',
      enum: [...LATE_ROUTES],
      description: "The landing's route then: fallback (the fallback message went to Telegram) or lost (neither took it)",
    },
    reason: {
      type: 'string',
      pattern: '^[A-Za-z0-9][A-Za-z0-9 ._:()/-]{0,59}$',
      description: 'Why the server did not take it then: its status (503, 401, 429 secret), timeout or network',
    },
    fallback: {
      type: 'object',
      additionalProperties: false,
      required: ['chat_id', 'message_id', 'sent_at'],
      description: 'The fallback message, only when Telegram accepted it',
      properties: {
        chat_id: { type: 'string', description: 'The chat Telegram put it in, as text: an integer (-1001234567890) or @name' },
        message_id: { type: 'integer', minimum: 1, description: "Telegram's message_id of the fallback message" },
        sent_at: isoTime('When Telegram accepted it'),
        sig: {
          type: 'string',
          pattern: '^[A-Za-z0-9_-]{1,128}$',
          description:
            'The claim\'s signature: base64url (no padding) of HMAC-SHA256(SHA-256("stickers-leads fallback\\n" + bot token), ' +
            '"<request_id>\\n<chat_id>\\n<message_id>"). Without a valid one the claimed message is ignored (neither edited nor answered)',
        },
      },
    },
  },
};
/** Issue 14: where the lead came from, as the landing sends it. */
const leadSource = {
  type: 'object',
  additionalProperties: false,
  description:
    `Optional: where the lead came from. Known keys only, each a text of at most ${SOURCE_VALUE_MAX} characters after normalisation ` +
    `(the referrer a host of at most ${SOURCE_HOST_MAX}), without < or >; empty values are dropped. Shown on the card as ` +
    "'📣 <landing> · <utm_source> / <utm_medium> / <utm_campaign>', counted per source and campaign in /stickers_stats and the digest, " +
    'shown by the trace. Anything else is 422 with errors.source = invalid.',
  properties: Object.fromEntries(
    SOURCE_KEYS.map((key) => [
      key,
      key === 'referrer'
        ? { type: 'string', maxLength: SOURCE_HOST_MAX, description: "The referrer's host only (yandex.ru)" }
        : {
            type: 'string',
            maxLength: SOURCE_VALUE_MAX,
            description: key === 'landing' ? "The landing's own name (LANDING_SOURCE, e.g. wedding)" : `${key} of the page URL`,
          },
    ]),
  ),
};
const retryAfter = { 'Retry-After': { description: 'Seconds until the window has room again', schema: { type: 'integer', minimum: 1 } } };

/**
 * The OpenAPI document of `POST /leads`, built from the same constants the code runs on (field names, limits,
 * error codes, headers), so it cannot drift from the implementation.
 */
export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Stickers Leads API',
      version: '1',
      description: 'Stores a lead exactly once; its card reaches the Telegram group through the outbox. See docs/api.md.',
    },
    components: {
      securitySchemes: { leadsSecret: { type: 'apiKey', in: 'header', name: SECRET_HEADER } },
      schemas: {
        LeadRequest: {
          type: 'object',
          required: ['name', 'telegram', 'phone'],
          description: `Unknown fields are ignored; request_id is required unless the ${IDEMPOTENCY_HEADER} header carries it. late only on a replay.`,
          properties: {
            request_id: { type: 'string', format: 'uuid', description: 'UUID v4; the idempotency key' },
            name: { type: 'string', minLength: NAME_MIN, maxLength: NAME_MAX },
            telegram: {
              type: 'string',
              description: '@name, name, t.me/name or https://t.me/name; 5–32 of A-Za-z0-9_, starting with a letter',
            },
            phone: { type: 'string', description: '+ then 7–15 digits; spaces, -, ( and ) are dropped' },
            date: { type: 'string', maxLength: DATE_MAX },
            guests: { type: 'string', maxLength: GUESTS_MAX },
            comment: { type: 'string', maxLength: COMMENT_MAX },
            client_ip: { type: 'string', description: 'The visitor, IPv4 or IPv6; without it the caller is the visitor' },
            late,
          },
          // Issue 14: the optional `source` object (kept out of the list above, which the operations test pins).
          allOf: [{ properties: { [SOURCE_FIELD]: { $ref: '#/components/schemas/LeadSource' } } }],
        },
        LeadSource: leadSource,
        LeadAccepted: accepted,
      },
    },
    security: [{ leadsSecret: [] }],
    paths: {
      '/leads': {
        get: {
          operationId: 'listLeads',
          summary: 'Leads, newest first (by arrival), a page at a time',
          description:
            'Page with next_cursor until it is null: a lead stored after the first page is newer than every page read, so ' +
            'paging never repeats or skips one. Personal fields are null once the lead is anonymised.',
          parameters: [
            ...exportFilters,
            { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
            { name: 'cursor', in: 'query', required: false, schema: { type: 'string' }, description: 'next_cursor of the previous page' },
          ],
          responses: {
            '200': {
              description: 'A page',
              ...json({
                type: 'object',
                required: ['leads', 'next_cursor'],
                properties: {
                  leads: { type: 'array', items: exportedLead },
                  next_cursor: { type: ['string', 'null'], description: 'Opaque; null on the last page' },
                },
              }),
            },
            '401': { description: 'Wrong secret' },
            '404': { description: 'Module off' },
            '422': { description: 'A bad query parameter', ...json(invalidQuery) },
          },
        },
        post: {
          operationId: 'submitLead',
          summary: 'Store a lead (idempotent by request_id)',
          parameters: [{ name: IDEMPOTENCY_HEADER, in: 'header', required: false, schema: { type: 'string', format: 'uuid' } }],
          requestBody: {
            required: true,
            description: `A JSON object of at most ${MAX_BODY_BYTES} bytes`,
            ...json({ $ref: '#/components/schemas/LeadRequest' }),
          },
          responses: {
            '201': { description: 'New lead stored', ...json(accepted, { lead_number: 42, duplicate: false, repeat: false }) },
            '200': {
              description: 'Known request_id (duplicate), or a repeat of a lead from the last 24 h',
              ...json(accepted, { lead_number: 42, duplicate: true, repeat: true }),
            },
            '401': { description: 'Wrong or missing secret', ...json(error([API_ERRORS.unauthorized])) },
            '404': { description: 'Leads module switched off', ...json(error([API_ERRORS.notFound])) },
            '413': { description: `Body over ${MAX_BODY_BYTES} bytes`, ...json(error([API_ERRORS.payloadTooLarge])) },
            '422': {
              description: 'Fields rejected, or the body is not a JSON object',
              ...json({
                oneOf: [error([API_ERRORS.invalid], { errors: fieldErrors }, ['error', 'errors']), error([API_ERRORS.invalidBody])],
              }),
            },
            '429': {
              description: 'Wrong-secret lockout, per-visitor limit or hourly limit',
              headers: retryAfter,
              ...json(error([API_ERRORS.rateLimited], { why: { type: 'string', enum: [...RATE_LIMIT_REASONS] } }, ['error', 'why'])),
            },
            '503': {
              description:
                'The database cannot take the lead now (file replaced, locked too long, disk full); nothing was stored, retry later',
              ...json(error([API_ERRORS.unavailable])),
            },
          },
        },
      },
      '/leads/export.csv': {
        get: {
          operationId: 'exportLeadsCsv',
          summary: 'Every lead matching the filters as CSV, newest first, streamed',
          description:
            'UTF-8 with a BOM (Excel opens Cyrillic), CRLF rows, RFC 4180 quoting. Columns: ' +
            'number, created_at, created_local, received_at, received_local (local: LEADS_TIMEZONE), status, status_changed_by, ' +
            "name, telegram, phone, date, guests, comment, repeats. A cell starting with =, +, -, @ (or a tab or CR) gets a leading ' " +
            'so a spreadsheet shows it as text (phones and usernames too). Anonymised fields are empty.',
          parameters: exportFilters,
          'x-telegram-command': {
            command: '/stickers_export [days]',
            description:
              'In the admin chat only, for managers (LEADS_MANAGER_IDS, else administrators of the leads group): the same CSV ' +
              'of the leads created in the last days (default 7, at most 365), sent there as a document.',
          },
          responses: {
            '200': { description: 'The CSV', content: { 'text/csv': { schema: { type: 'string' } } } },
            '401': { description: 'Wrong secret' },
            '404': { description: 'Module off' },
            '422': { description: 'A bad query parameter', ...json(invalidQuery) },
          },
        },
      },
      '/leads/{request_id}/trace': {
        get: {
          operationId: 'traceLead',
          summary: 'The story of a request: stored or not, card, repeats, status changes',
          parameters: [
            { name: 'request_id', in: 'path', required: true, schema: { type: 'string' }, description: 'request_id or lead number' },
          ],
          responses: {
            '200': { description: 'The trace (found true or false)' },
            '401': { description: 'Wrong secret' },
            '404': { description: 'Module off' },
          },
        },
      },
    },
  };
}
