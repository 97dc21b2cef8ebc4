import type { SchemaObject } from '@nestjs/swagger';
import { LATE_ROUTES, SOURCE_KEYS } from '@stickers/shared';
import { LEAD_STATUSES } from '../domain/lead-status';
import { objectSchema } from '../health/openapi';

/** `GET /leads/:request_id/trace`'s answer (TraceService.read) in the OpenAPI document; times in epoch ms, as stored. */
const ms = (what: string, nullable = false): SchemaObject => ({
  type: 'integer',
  ...(nullable ? { nullable: true } : {}),
  description: `${what}: milliseconds since the epoch`,
});
const string: SchemaObject = { type: 'string' };
const integer: SchemaObject = { type: 'integer' };
const count: SchemaObject = { type: 'integer', minimum: 0 };
const nullableString: SchemaObject = { type: 'string', nullable: true };
const nullableInteger: SchemaObject = { type: 'integer', nullable: true };
const list = (items: SchemaObject, description?: string): SchemaObject => ({ type: 'array', description, items });

/** How a request (the lead's or a repeat's) came: late, its fallback message, its source and consent (these two optional). */
const REQUEST: Record<string, SchemaObject> = {
  late: objectSchema(
    {
      route: { type: 'string', enum: [...LATE_ROUTES] },
      reason: nullableString,
      submitted_at: ms('When the landing first handled the request'),
      received_at: ms('When the server got it', true),
    },
    [],
    { nullable: true, description: 'How a replayed request came; null for the others' },
  ),
  fallback: objectSchema(
    {
      chat_id: string,
      message_id: integer,
      sent_at: ms('When Telegram accepted it', true),
      state: nullableString,
      reply_attempts: count,
    },
    [],
    { nullable: true, description: "The landing's fallback message, and what the outbox did with it; null without" },
  ),
  source: objectSchema(Object.fromEntries(SOURCE_KEYS.map((key) => [key, string])), [...SOURCE_KEYS], {
    description: 'As the landing sent it; absent when it sent none',
  }),
  consent: objectSchema({ accepted_at: ms('When the visitor ticked the box'), policy_url: string }, [], {
    description: 'Absent without a consent; kept through anonymisation',
  }),
};

const FOUND: SchemaObject = objectSchema({
  found: { type: 'boolean', enum: [true] },
  key: { type: 'string', description: 'What was asked for' },
  matched: { type: 'string', enum: ['lead', 'repeat', 'lead_number'] },
  lead: objectSchema(
    {
      lead_number: integer,
      request_id: string,
      created_at: ms('The lead’s time'),
      status: { type: 'string', enum: [...LEAD_STATUSES] },
      published_at: ms('When its card went out', true),
      chat_id: nullableString,
      message_id: nullableInteger,
      thread_id: { type: 'integer', description: 'The forum topic of the card; absent when none' },
      card_format: nullableString,
      publish_attempts: count,
      last_error: nullableString,
      next_attempt_at: ms('The next publish attempt', true),
      reminded_at: ms('When the reminder went out', true),
      anonymised_at: ms('When it was anonymised', true),
      received_at: ms('When the server got it', true),
      ...REQUEST,
    },
    ['thread_id', 'source', 'consent'],
  ),
  repeats: list(
    objectSchema(
      {
        request_id: string,
        created_at: ms('The repeat’s time'),
        changed_fields: list(string),
        notified_at: ms('When the group was told', true),
        notify_outcome: nullableString,
        notify_attempts: count,
        last_error: nullableString,
        ...REQUEST,
      },
      ['source', 'consent'],
    ),
  ),
  status_history: list(objectSchema({ at: ms('When'), from: string, to: string, by: string, user_id: integer })),
  events: list(objectSchema({ at: ms('When'), kind: string, detail: nullableString, repeat_request_id: nullableString })),
  messages: list(
    objectSchema({
      at: ms('When it was stored'),
      direction: { type: 'string', enum: ['in', 'out'], description: '`in`: from the visitor; `out`: from the team' },
      media: { type: 'string', nullable: true, description: 'photo, document, voice, video, sticker, other; null: text' },
      state: { type: 'string', enum: ['queued', 'delivered', 'failed'] },
      error: nullableString,
    }),
    'The conversation with the visitor in Telegram, oldest first: no text and no names (they are personal)',
  ),
});

const MISSING: SchemaObject = objectSchema({
  found: { type: 'boolean', enum: [false] },
  key: string,
  message: { type: 'string', description: 'Why nothing was found, for a person' },
});

export const TRACE_SCHEMA: SchemaObject = {
  oneOf: [FOUND, MISSING],
  description: 'found true: the lead and its story; found false: nothing under that key. Times are epoch milliseconds',
};
