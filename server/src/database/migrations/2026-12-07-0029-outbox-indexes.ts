import { type Kysely, sql } from 'kysely';

// Frozen once released: a change to the schema is a new migration.

/**
 * The claim finds its rows without reading the done ones, and a new Telegram row costs two index entries instead of
 * four (every lead writes one in its submit's commit). `outbox_not_done` holds the rows not done by target, kind and
 * id, the claim's order: with `outbox_due` (by next time) SQLite, without statistics, walked the whole table in id
 * order for every claim, done rows and all (12 – 55 ms a claim with the rows of 100,000 leads, the event loop blocked).
 * `outbox_waiting` covers every row of a lead, done or not, and stands for `outbox_lead` too: a lead's rows for its
 * page, its erasure and the cascade of its deletion by `lead_id`; the rows not done before one in its lead's queue by
 * `lead_id, done_at` (a lead of a long conversation has thousands of done rows). `outbox_event` holds only the webhook
 * rows, the only ones with an event.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('outbox_due').execute();
  await db.schema
    .createIndex('outbox_not_done')
    .on('outbox')
    .columns(['target', 'kind', 'id'])
    .where(sql.ref('done_at'), 'is', null)
    .execute();
  await db.schema.dropIndex('outbox_lead').execute();
  await db.schema.dropIndex('outbox_waiting').execute();
  await db.schema.createIndex('outbox_waiting').on('outbox').columns(['lead_id', 'done_at', 'target', 'id']).execute();
  await db.schema.dropIndex('outbox_event').execute();
  await db.schema.createIndex('outbox_event').on('outbox').column('event_id').where(sql.ref('event_id'), 'is not', null).execute();
}

/** 0018's indexes again. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('outbox_event').execute();
  await db.schema.createIndex('outbox_event').on('outbox').column('event_id').execute();
  await db.schema.dropIndex('outbox_waiting').execute();
  await db.schema
    .createIndex('outbox_waiting')
    .on('outbox')
    .columns(['lead_id', 'target', 'id'])
    .where(sql.ref('done_at'), 'is', null)
    .execute();
  await db.schema.createIndex('outbox_lead').on('outbox').columns(['lead_id', 'kind']).execute();
  await db.schema.dropIndex('outbox_not_done').execute();
  await db.schema.createIndex('outbox_due').on('outbox').columns(['next_at', 'id']).where(sql.ref('done_at'), 'is', null).execute();
}
