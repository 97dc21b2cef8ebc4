import type { SchemaObject } from '@nestjs/swagger';

/** The ops doors' answers as the OpenAPI document shows them. */

export const HEALTH_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['ok'] } },
};

const check = (extra: Record<string, SchemaObject> = {}): SchemaObject => ({
  type: 'object',
  required: ['ok', 'detail', ...Object.keys(extra)],
  properties: {
    ok: { type: 'boolean' },
    detail: { type: 'string', description: 'A fixed text (never a path or an error message): `writable`, `write failed`, …' },
    ...extra,
  },
});

/** `GET /ready`'s body, 200 or 503 alike; ReadinessService's `checks`. */
export const READINESS_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['status', 'checks'],
  properties: {
    status: { type: 'string', enum: ['ready', 'not_ready'] },
    checks: {
      type: 'object',
      required: ['database', 'migrations', 'outbox', 'telegram'],
      properties: {
        database: check(),
        migrations: check(),
        outbox: check({
          oldest_unpublished_age_sec: { type: 'integer', nullable: true },
          last_card_age_sec: { type: 'integer', nullable: true },
        }),
        telegram: { ...check(), description: 'Reported only: Telegram down does not make the server unready' },
      },
    },
  },
};
